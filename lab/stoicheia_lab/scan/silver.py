"""Silver scanner training data: Hypotactic scansions + macron lexica, screened against Norma.

Sources (CC BY 4.0 Hypotactic; GPL-3.0 / CC BY-SA lexica, see the data MANIFEST):

* ``hypotactic_tsv.tar.xz``: ``line \\t weights (- u, spaces between words) \\t metre``.
* ``hypotactic_htmls_greek_syllables.tar.xz``: ``div.line[data-metre]`` of
  ``span.syll long|short``; only books absent from the TSV are read, and Dionysiaca 1 /
  Posthomerica 1 (``dionysiaca1.html``, ``qsmyrnaeus1.html``, = Norma text) are dropped.
* ``grc_macronizer_db/hypotactic_word2macron.tsv.xz`` and ``lsj_word2macron.tsv.xz``:
  word -> ``^``/``_`` markup, used to label dichrona the scansion cannot decide
  (closed syllables, mute + liquid).

A line is labelled only when the rule syllabifier (:mod:`.syllabify`) finds as many
syllables as the scansion has (synizesis lines are dropped). Labels per codec letter:
``scan`` 0 none, 1 heavy-end, 2 light-end, 3 verse-end (the last letter; brevis in
longo) and ``macron`` 1 long / 0 short at dichrona (-1 = no label). Every line whose
normalised text shares a 20-letter substring with a Norma line is dropped
(:func:`screen_against`).
"""

from __future__ import annotations

import io
import lzma
import random
import re
import tarfile
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stoicheia_spacy.codec import CharPlanes, encode_planes
from stoicheia_spacy.errors import CorpusError
from stoicheia_spacy.scan.syllabify import HEAVY, LIGHT, UNKNOWN, dichrona_mask, syllabify

from .norma import Norma, normalise_line

SCAN_NONE, SCAN_HEAVY_END, SCAN_LIGHT_END, SCAN_VERSE_END = 0, 1, 2, 3
SCAN_LABELS = ("none", "heavy-end", "light-end", "verse-end")
#: Hypotactic HTML books that hold Norma text (MANIFEST): never read.
HTML_EXCLUDE = frozenset({"dionysiaca1.html", "qsmyrnaeus1.html"})
SHINGLE = 20


@dataclass(frozen=True)
class ScannedLine:
    """A verse line with its syllable weights (``"HL..."``) from a source."""

    text: str
    weights: str
    meter: str
    source: str


@dataclass
class LabelledLine:
    """Per-letter labels of one line (aligned with ``encode_planes(text)``)."""

    text: str
    macron: np.ndarray  # (n,) int8
    scan: np.ndarray  # (n,) int8
    meter: str
    source: str


def read_hypotactic_tsv(path: str | Path) -> Iterator[ScannedLine]:
    """Lines of the Hypotactic TSV tarball."""
    with tarfile.open(path) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not (member.isfile() and member.name.endswith(".tsv")):
                continue
            fh = tar.extractfile(member)
            assert fh is not None
            for row in io.TextIOWrapper(fh, encoding="utf-8"):
                cols = row.rstrip("\n").split("\t")
                if len(cols) < 3 or not cols[1].strip():
                    continue
                w = cols[1].replace(" ", "")
                if set(w) - {"-", "u"}:
                    continue
                yield ScannedLine(unicodedata.normalize("NFC", cols[0].strip()),
                                  w.replace("-", "H").replace("u", "L"), cols[2].strip(),
                                  Path(member.name).stem)


_LINE = re.compile(r'<div class="line[^"]*"[^>]*data-metre="([^"]*)"[^>]*>(.*?)</div>', re.S)
_SPAN = re.compile(r'<span class="syll\s+(long|short)[^"]*">([^<]*)</span>|<span>([^<]*)</span>')


def read_hypotactic_html(path: str | Path, *, skip_stems: Iterable[str] = (),
                         only: Iterable[str] | None = None) -> Iterator[ScannedLine]:
    """Lines of the Hypotactic HTML tarball, minus :data:`HTML_EXCLUDE` and ``skip_stems``.

    ``only``: read just these file names (``HTML_EXCLUDE`` included, for leak screens).
    """
    skip = set(skip_stems)
    wanted = None if only is None else set(only)
    with tarfile.open(path) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            name = Path(member.name).name
            if not (member.isfile() and name.endswith(".html")):
                continue
            if (name not in wanted) if wanted is not None else (name in HTML_EXCLUDE):
                continue
            if Path(name).stem in skip:
                continue
            fh = tar.extractfile(member)
            assert fh is not None
            html = fh.read().decode("utf-8")
            for metre, body in _LINE.findall(html):
                body = body.replace('<span class="word">', "<span> </span>")  # books without spaces
                text, weights = [], []
                for kind, syl, other in _SPAN.findall(body):
                    if kind:
                        text.append(syl)
                        weights.append("H" if kind == "long" else "L")
                    else:
                        text.append(other)
                line = unicodedata.normalize("NFC", " ".join("".join(text).split()))
                if line and weights:
                    yield ScannedLine(line, "".join(weights), metre, Path(name).stem)


def read_macron_lexicon(*paths: str | Path) -> dict[str, str]:
    """word -> markup (``^`` short / ``_`` long after the vowel) from the macronizer TSVs."""
    lexicon: dict[str, str] = {}
    for path in paths:
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            next(fh, None)
            for row in fh:
                cols = row.rstrip("\n").split("\t")
                if len(cols) >= 2 and cols[0] and cols[0] not in lexicon:
                    lexicon[unicodedata.normalize("NFC", cols[0])] = unicodedata.normalize("NFC", cols[1])
    return lexicon


def _lexicon_lengths(word: str, markup: str) -> list[int]:
    """Length (1/0/-1) of each vowel-bearing letter of ``word`` from its markup."""
    out: list[int] = []
    for ch in markup:
        if ch in "^_":
            if out:
                out[-1] = 1 if ch == "_" else 0
        elif not unicodedata.combining(ch):
            out.append(-1)
    return out


def label_line(line: ScannedLine, lexicon: dict[str, str] | None = None) -> LabelledLine | None:
    """Per-letter labels, or None when syllable counts disagree."""
    planes = encode_planes(line.text)
    syl = syllabify(planes, text=line.text)
    if len(syl) != len(line.weights) or len(syl) == 0:
        return None
    n = len(planes)
    weights = np.array([HEAVY if w == "H" else LIGHT for w in line.weights])
    scan = np.zeros(n, dtype=np.int8)
    scan[syl.ends] = np.where(weights == HEAVY, SCAN_HEAVY_END, SCAN_LIGHT_END)
    scan[n - 1] = SCAN_VERSE_END
    macron = np.full(n, -1, dtype=np.int8)
    dich = dichrona_mask(planes)
    open_amb = (syl.weights == UNKNOWN) & dich[syl.nucleus] & ~syl.muta_cum_liquida
    open_amb[-1] = False  # brevis in longo says nothing about length
    macron[syl.nucleus[open_amb]] = np.where(weights[open_amb] == HEAVY, 1, 0)
    if lexicon:
        _fill_from_lexicon(line.text, planes, dich, macron, lexicon)
    return LabelledLine(line.text, macron, scan, line.meter, line.source)


def _fill_from_lexicon(text: str, planes: CharPlanes, dich: np.ndarray, macron: np.ndarray,
                       lexicon: dict[str, str]) -> None:
    offsets = np.asarray(planes.offsets)
    for m in re.finditer(r"[^\W\d_]+", text):
        markup = lexicon.get(m.group())
        if markup is None:
            continue
        lo, hi = np.searchsorted(offsets, m.start()), np.searchsorted(offsets, m.end())
        lengths = _lexicon_lengths(m.group(), markup)
        letters = [i for i in range(lo, hi)]
        # map word characters (base letters) to codec letters by order
        base = [c for c in unicodedata.normalize("NFC", m.group())]
        if len(base) != len(lengths) or len(letters) != len(base):
            continue
        for i, length in zip(letters, lengths, strict=True):
            if length >= 0 and dich[i] and macron[i] < 0:
                macron[i] = length


def leaked_forms(mirror: str | Path) -> set[str]:
    """Word forms (as written) found in the :data:`HTML_EXCLUDE` books and in no other Hypotactic line."""
    scansion = Path(mirror) / "scansion"
    html = scansion / "hypotactic_htmls_greek_syllables.tar.xz"
    words = re.compile(r"[^\W\d_]+")
    leaked = {w for line in read_hypotactic_html(html, only=HTML_EXCLUDE) for w in words.findall(line.text)}
    rest = list(read_hypotactic_tsv(scansion / "hypotactic_tsv.tar.xz")) + list(read_hypotactic_html(html))
    for line in rest:
        leaked.difference_update(words.findall(line.text))
    return leaked


def screen_against(lines: Iterable[ScannedLine], norma: Norma) -> tuple[list[ScannedLine], int]:
    """Drop lines sharing a :data:`SHINGLE`-letter substring with any Norma line; (kept, dropped)."""
    bench = norma_shingles(norma)
    kept, dropped = [], 0
    for line in lines:
        if shingles(normalise_line(line.text)) & bench:
            dropped += 1
        else:
            kept.append(line)
    return kept, dropped


def shingles(norm: str, k: int = SHINGLE) -> set[str]:
    """All ``k``-letter substrings (the whole string when shorter)."""
    if len(norm) <= k:
        return {norm} if norm else set()
    return {norm[i : i + k] for i in range(len(norm) - k + 1)}


def norma_shingles(norma: Norma) -> set[str]:
    """Shingles of every Norma line (macron and syllable parts)."""
    out: set[str] = set()
    texts = [x.text for x in norma.macron] + [x.text for x in norma.syllables]
    for text in texts:
        out |= shingles(normalise_line(text))
    return out


def build_silver(
    mirror: str | Path,
    norma: Norma,
    *,
    max_lines: int | None = None,
    seed: int = 0,
    use_html: bool = True,
) -> tuple[list[LabelledLine], dict[str, int]]:
    """Labelled, Norma-screened lines from the mirror (shuffled with ``seed``) and counts."""
    mirror = Path(mirror)
    scansion = mirror / "scansion"
    if not (scansion / "hypotactic_tsv.tar.xz").is_file():
        raise CorpusError(f"{scansion} has no hypotactic_tsv.tar.xz")
    lines: list[ScannedLine] = list(read_hypotactic_tsv(scansion / "hypotactic_tsv.tar.xz"))
    if use_html:
        have = {line.source for line in lines}
        lines += read_hypotactic_html(scansion / "hypotactic_htmls_greek_syllables.tar.xz", skip_stems=have)
    kept, dropped = screen_against(lines, norma)
    rng = random.Random(seed)
    rng.shuffle(kept)
    lex_dir = mirror / "lexica" / "grc_macronizer_db"
    lexicon = read_macron_lexicon(lex_dir / "hypotactic_word2macron.tsv.xz", lex_dir / "lsj_word2macron.tsv.xz")
    out: list[LabelledLine] = []
    mismatched = 0
    for line in kept:
        if max_lines is not None and len(out) >= max_lines:
            break
        lab = label_line(line, lexicon)
        if lab is None:
            mismatched += 1
        else:
            out.append(lab)
    return out, {"read": len(lines), "leaked_dropped": dropped, "syllable_mismatch": mismatched,
                 "labelled": len(out)}
