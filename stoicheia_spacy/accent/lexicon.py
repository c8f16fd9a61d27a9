"""Lexicon baseline: most frequent accented form per bare form, with a dynamic-programming
word segmenter (unigram language model over bare forms).

Built from training text (e.g. the literary pretraining sources through
:func:`stoicheia_lab.corpus.iter_records`).  A *bare form* is the word's letter ids
(lower case, no diacritics); the lexicon stores, per bare form, its count and the most
frequent (diacritics, capitals) pattern.  Segmentation maximises the sum of unigram
log-probabilities; a letter string not in the lexicon costs ``oov_penalty`` nats per letter
plus the log-probability of a singleton.  Punctuation is never predicted.  Pure Python
(the DP loops over letters: a baseline, not a hot path).
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..alphabet import BND_INTERNAL, BND_SENT_END, BND_WORD_END, CAP_LOWER, PUNCT_NONE
from ..codec import CharPlanes, encode_planes, word_spans

#: length of the word n-grams that decide whether a training text overlaps held-out text
N_GRAM = 6


def _ngrams(planes: CharPlanes) -> set[tuple[bytes, ...]]:
    let = planes.letters.tobytes()
    words = [let[s:e] for s, e in word_spans(planes).tolist()]
    return {tuple(words[i:i + N_GRAM]) for i in range(len(words) - N_GRAM + 1)}


class HeldOutScreen:
    """Which training texts overlap held-out evaluation text: a text is held out when it
    shares a bare-word ``N_GRAM``-gram with a held-out text, or *is* a held-out text of
    fewer words (bare words, so accents and punctuation do not matter)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.grams: set[tuple[bytes, ...]] = set()
        self.short: set[tuple[bytes, ...]] = set()
        for text in texts:
            planes = encode_planes(text)
            self.grams |= _ngrams(planes)
            words = self._words(planes)
            if 0 < len(words) < N_GRAM:
                self.short.add(words)

    @staticmethod
    def _words(planes: CharPlanes) -> tuple[bytes, ...]:
        let = planes.letters.tobytes()
        return tuple(let[s:e] for s, e in word_spans(planes).tolist())

    def overlaps(self, planes: CharPlanes) -> bool:
        """True when the encoded text ``planes`` overlaps held-out text."""
        return bool(_ngrams(planes) & self.grams) or self._words(planes) in self.short


class LexiconAccentuator:
    """Most-frequent-form accentuator with a unigram DP segmenter."""

    def __init__(self, counts: dict[bytes, int], forms: dict[bytes, tuple[bytes, bytes]], *,
                 max_word: int = 24, oov_penalty: float = 4.0) -> None:
        self.counts = counts
        self.forms = forms
        self.max_word = max_word
        self.oov_penalty = oov_penalty
        self.total = max(sum(counts.values()), 1)

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, exclude: Iterable[str] = (), **kwargs: float) -> LexiconAccentuator:
        """Count word forms of ``texts``, skipping every text that shares a bare-word
        ``N_GRAM``-gram with one of the ``exclude`` texts (held-out evaluation text)."""
        held: set[tuple[bytes, ...]] = set()
        for text in exclude:
            held |= _ngrams(encode_planes(text))
        pattern: Counter[tuple[bytes, bytes, bytes]] = Counter()
        for text in texts:
            p = encode_planes(text)
            if held and _ngrams(p) & held:
                continue
            let, dia, cap = p.letters.tobytes(), p.diacritics.tobytes(), p.capitals.tobytes()
            for s, e in word_spans(p).tolist():
                pattern[(let[s:e], dia[s:e], cap[s:e])] += 1
        counts: Counter[bytes] = Counter()
        best: dict[bytes, tuple[int, bytes, bytes]] = {}
        for (let, dia, cap), n in pattern.items():
            counts[let] += n
            if let not in best or n > best[let][0]:
                best[let] = (n, dia, cap)
        forms = {k: (v[1], v[2]) for k, v in best.items()}
        return cls(dict(counts), forms, **kwargs)  # type: ignore[arg-type]

    # ------------------------------------------------------------ segmenter
    def segment(self, letters: np.ndarray) -> list[tuple[int, int]]:
        """Word spans ``[start, end)`` of a bare letter sequence (Viterbi over unigrams)."""
        seq = letters.tobytes()
        n = len(seq)
        log_total = math.log(self.total)
        oov = -math.log(self.total) - log_total
        score = [0.0] + [-math.inf] * n
        back = [0] * (n + 1)
        for end in range(1, n + 1):
            for start in range(max(0, end - self.max_word), end):
                if score[start] == -math.inf:
                    continue
                c = self.counts.get(seq[start:end])
                w = math.log(c) - log_total if c else oov - self.oov_penalty * (end - start)
                if score[start] + w > score[end]:
                    score[end], back[end] = score[start] + w, start
        spans = []
        end = n
        while end > 0:
            spans.append((back[end], end))
            end = back[end]
        return spans[::-1]

    def predict(self, planes: CharPlanes, *, segment: bool = True) -> CharPlanes:
        """Planes with word division (DP, or the input's when ``segment`` is False),
        diacritics and capitals of the most frequent form; punctuation none."""
        out = planes.copy()
        spans = self.segment(planes.letters) if segment else [tuple(x) for x in word_spans(planes).tolist()]
        out.boundary[:] = BND_INTERNAL
        out.punctuation[:] = PUNCT_NONE
        out.diacritics[:] = 0
        out.capitals[:] = CAP_LOWER
        let = planes.letters.tobytes()
        for s, e in spans:
            out.boundary[e - 1] = BND_WORD_END
            form = self.forms.get(let[s:e])
            if form is not None:
                out.diacritics[s:e] = np.frombuffer(form[0], np.uint8)
                out.capitals[s:e] = np.frombuffer(form[1], np.uint8)
        if len(out):
            out.boundary[-1] = BND_SENT_END
        return out

    # ------------------------------------------------------------ serialization
    def to_disk(self, path: str | Path) -> None:
        """Write a gzipped JSON lexicon."""
        rows = [[k.hex(), n, self.forms[k][0].hex(), self.forms[k][1].hex()] for k, n in self.counts.items()]
        with gzip.open(path, "wt", encoding="utf8") as fh:
            json.dump({"max_word": self.max_word, "oov_penalty": self.oov_penalty, "rows": rows}, fh)

    @classmethod
    def from_disk(cls, path: str | Path) -> LexiconAccentuator:
        """Read what :meth:`to_disk` wrote."""
        with gzip.open(path, "rt", encoding="utf8") as fh:
            data = json.load(fh)
        counts = {bytes.fromhex(r[0]): int(r[1]) for r in data["rows"]}
        forms = {bytes.fromhex(r[0]): (bytes.fromhex(r[2]), bytes.fromhex(r[3])) for r in data["rows"]}
        return cls(counts, forms, max_word=data["max_word"], oov_penalty=data["oov_penalty"])
