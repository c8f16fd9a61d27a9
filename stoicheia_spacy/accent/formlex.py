"""A compact lexicon of attested accented word forms, indexed by bare form.

A *bare form* is a word's letter ids (lower case, no diacritics); a *form* adds its
diacritic states, capitals and whether it is elided (``δ’``).  The lexicon holds every
form as rows of flat numpy arrays sorted by a 64-bit hash of the bare form, so that all
candidate forms of any substring of a text are found with one vectorised
``searchsorted`` (:meth:`FormLexicon.match`), and a corpus count per form (0 for forms
only a word list attests) for a smoothed unigram model over bare forms.

Normalisations at build time (so decoders see one entry per spelling):

* an acute or grave on the final syllable is stored as acute; the decoder chooses
  grave or acute in context (``oxy_pos`` marks the letter);
* forms with two accents (an enclitic's host, ``ἄνθρωπός``) are dropped: decoders
  derive them from the host's own form (``host_pos``: where the extra acute goes);
* forms longer than ``max_len`` letters are dropped.

Stored with :meth:`FormLexicon.to_disk` as one ``.npz`` file (arrays only, no pickle).
The form lists it is built from carry their own licences (GPL-3.0 for the Hunspell
list, CC BY-SA for the treebanks): the file is data, shipped apart from the code
(see :mod:`.lexasset`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..alphabet import (
    ACCENT_ACUTE,
    ACCENT_CIRCUMFLEX,
    ACCENT_GRAVE,
    ALPHABET,
    N_ALPHA,
    N_DIA_STATES,
    dia_features,
)
from ..codec import CharPlanes, decode_planes, encode_planes, word_spans
from ..errors import ConfigError

#: hash base for bare forms (letter ids + 1, polynomial mod 2**64)
HASH_BASE = np.uint64(1_000_003)
FORMAT_VERSION = 1
_WORDISH = re.compile(r"^[\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f’'ʼ]+$")

_IS_VOWEL = np.zeros(N_ALPHA + 3, dtype=bool)
_IS_VOWEL[[ALPHABET.index(c) for c in "αεηιουω"]] = True
_IOTA, _UPSILON = ALPHABET.index("ι"), ALPHABET.index("υ")
_BEFORE_IOTA = np.zeros(N_ALPHA + 3, dtype=bool)
_BEFORE_IOTA[[ALPHABET.index(c) for c in "αεου"]] = True
_BEFORE_UPSILON = np.zeros(N_ALPHA + 3, dtype=bool)
_BEFORE_UPSILON[[ALPHABET.index(c) for c in "αεηοω"]] = True


def _accent_table() -> np.ndarray:
    return np.array([dia_features(s)[0] for s in range(N_DIA_STATES)], dtype=np.int64)


ACCENT_OF = _accent_table()
#: diacritic state -> the same state with an acute accent (or itself when no accent)
TO_ACUTE = np.array([s - 12 * (ACCENT_OF[s] - ACCENT_ACUTE) if ACCENT_OF[s] else s
                     for s in range(N_DIA_STATES)], dtype=np.uint8)
#: diacritic state -> the same state with a grave accent (or itself when no accent)
TO_GRAVE = np.array([s - 12 * (ACCENT_OF[s] - ACCENT_GRAVE) if ACCENT_OF[s] else s
                     for s in range(N_DIA_STATES)], dtype=np.uint8)
#: unaccented diacritic state -> the same state with an acute (for enclitic hosts)
ADD_ACUTE = np.array([s + 12 * ACCENT_ACUTE if ACCENT_OF[s] == 0 else s for s in range(N_DIA_STATES)],
                     dtype=np.uint8)


def hash_rows(letters: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """64-bit hash of each bare form ``letters[start:start + length]`` (vectorised)."""
    h = np.zeros(len(starts), dtype=np.uint64)
    max_len = int(lengths.max()) if len(lengths) else 0
    vals = letters.astype(np.uint64) + np.uint64(1)
    for k in range(max_len):
        live = lengths > k
        h[live] = h[live] * HASH_BASE + vals[starts[live] + k]
    return h


def substring_hashes(letters: np.ndarray, max_len: int) -> np.ndarray:
    """(n, max_len) hashes: ``[i, L-1]`` is the hash of ``letters[i:i+L]`` (0 past the end)."""
    n = len(letters)
    vals = letters.astype(np.uint64) + np.uint64(1)
    out = np.zeros((n, max_len), dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    for k in range(max_len):
        m = n - k
        if m <= 0:
            break
        h = h[:m] * HASH_BASE + vals[k:]
        out[:m, k] = h
    return out


def _oxy_and_host(letters: np.ndarray, dia: np.ndarray, starts: np.ndarray, lengths: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per form: letter offset of a final-syllable acute/grave (-1 if none), letter offset
    where an enclitic's host takes its extra acute (-1 if the form cannot host: it needs one
    accent, an acute on the antepenult or a circumflex on the penult), and its number of
    accents.  Syllables are vowel nuclei (a diphthong is one nucleus), counted from the end."""
    n_forms = len(starts)
    acc_all = ACCENT_OF[dia.astype(np.int64)]
    n_acc = (np.add.reduceat((acc_all != 0).astype(np.int64), starts) if n_forms
             else np.zeros(0, np.int64))
    ends = starts + lengths
    vowel = _IS_VOWEL[letters.astype(np.int64)]
    lt = letters.astype(np.int64)
    count = np.zeros(n_forms, np.int64)       # nuclei seen from the end
    last_vowel = np.full(n_forms, -1, np.int64)
    acc_nucleus = np.zeros(n_forms, np.int64)
    acc_kind = np.zeros(n_forms, np.int64)
    acc_pos = np.full(n_forms, -1, np.int64)
    prev_v = np.zeros(n_forms, bool)
    prev_letter = np.zeros(n_forms, np.int64)
    prev_diaeresis = np.zeros(n_forms, bool)
    for k in range(1, (int(lengths.max()) if n_forms else 0) + 1):
        live = lengths >= k
        pos = np.where(live, ends - k, 0)
        v = vowel[pos] & live
        cur = lt[pos]
        diph = v & prev_v & ~prev_diaeresis & (
            ((prev_letter == _IOTA) & _BEFORE_IOTA[cur]) | ((prev_letter == _UPSILON) & _BEFORE_UPSILON[cur]))
        new = v & ~diph
        count += new
        first = new & (count == 1)
        last_vowel[first] = pos[first] - starts[first]
        a = np.where(live, acc_all[pos], 0)
        hit = v & (a != 0) & (acc_pos < 0)
        acc_nucleus[hit] = count[hit]
        acc_kind[hit] = a[hit]
        acc_pos[hit] = pos[hit] - starts[hit]
        prev_v, prev_letter = v, cur
        prev_diaeresis = live & ((dia[pos].astype(np.int64) % 2) == 1)
    oxy = np.where((acc_nucleus == 1) & ((acc_kind == ACCENT_ACUTE) | (acc_kind == ACCENT_GRAVE)), acc_pos, -1)
    can_host = (n_acc == 1) & (((acc_nucleus == 3) & (acc_kind == ACCENT_ACUTE))
                               | ((acc_nucleus == 2) & (acc_kind == ACCENT_CIRCUMFLEX)))
    host = np.where(can_host, last_vowel, -1)
    return oxy.astype(np.int64), host.astype(np.int64), n_acc


class FormCounter:
    """Counts accented forms of encoded text or of word lists, then builds a lexicon."""

    def __init__(self, *, max_len: int = 24) -> None:
        self.max_len = max_len
        self.rows: dict[bytes, int] = {}

    def add_planes(self, planes: CharPlanes, weight: int = 1) -> None:
        """Count every word of ``planes`` (encoded text) ``weight`` times."""
        if not len(planes):
            return
        el = planes.elided if planes.elided is not None else np.zeros(len(planes), bool)
        let, dia, cap = planes.letters, planes.diacritics, planes.capitals
        rows = self.rows
        for s, e in word_spans(planes).tolist():
            if e - s > self.max_len or (let[s:e] >= N_ALPHA).any():
                continue
            k = bytes([e - s, int(el[e - 1])]) + let[s:e].tobytes() + dia[s:e].tobytes() + cap[s:e].tobytes()
            rows[k] = rows.get(k, 0) + weight

    def add_forms(self, forms: Iterable[tuple[str, int]], *, chunk: int = 50_000) -> None:
        """Count ``(form text, count)`` pairs; texts that are not one Greek word are skipped."""
        batch: list[tuple[str, int]] = []

        def flush() -> None:
            planes = encode_planes(" ".join(t for t, _ in batch))
            spans = word_spans(planes)
            if len(spans) == len(batch) and len(set(int(c) for _, c in batch)) == 1:
                self.add_planes(planes, batch[0][1])
            else:
                for t, c in batch:
                    p = encode_planes(t)
                    if len(word_spans(p)) == 1:
                        self.add_planes(p, c)
            batch.clear()

        for text, c in forms:
            text = text.strip()
            if text and _WORDISH.match(text):
                if batch and int(c) != batch[-1][1]:
                    flush()
                batch.append((text, int(c)))
                if len(batch) >= chunk:
                    flush()
        if batch:
            flush()

    def build(self, *, sources: str = "") -> FormLexicon:
        """The lexicon of everything counted."""
        return FormLexicon._from_rows(self.rows, max_len=self.max_len, sources=sources)


@dataclass
class FormLexicon:
    """Accented forms grouped by bare form (see the module docstring).

    Per form ``f`` (rows sorted by ``key``): ``start[f]``/``length[f]`` into the flat
    ``letters``/``dia``/``caps`` arrays, ``elided[f]``, ``count[f]`` (corpus count),
    ``oxy[f]`` (letter of a final-syllable acute, or -1), ``host[f]`` (letter that takes
    an enclitic host's extra acute, or -1).  Per bare form: ``keys`` (sorted unique
    hashes), ``key_first``/``key_n`` (its rows), ``key_count`` (summed counts)."""

    letters: np.ndarray
    dia: np.ndarray
    caps: np.ndarray
    start: np.ndarray
    length: np.ndarray
    elided: np.ndarray
    count: np.ndarray
    key: np.ndarray
    oxy: np.ndarray
    host: np.ndarray
    keys: np.ndarray
    key_first: np.ndarray
    key_n: np.ndarray
    key_count: np.ndarray
    max_len: int = 24
    sources: str = ""

    def __len__(self) -> int:
        return len(self.start)

    @property
    def n_bare(self) -> int:
        """Number of distinct bare forms."""
        return len(self.keys)

    @cached_property
    def total_count(self) -> float:
        """The corpus count of every form (the sum of ``key_count``), summed once."""
        return float(self.key_count.sum())

    # ------------------------------------------------------------ building
    @classmethod
    def from_forms(cls, forms: Iterable[tuple[str, int]], *, max_len: int = 24, sources: str = "") -> FormLexicon:
        """Build from ``(form text, count)`` pairs (repeated forms add up).  Texts that are
        not one Greek word (letters, combining marks, an elision mark) are skipped."""
        counter = FormCounter(max_len=max_len)
        counter.add_forms(forms)
        return counter.build(sources=sources)

    @classmethod
    def _from_rows(cls, rows: dict[bytes, int], *, max_len: int, sources: str) -> FormLexicon:
        keys = list(rows)
        lengths = np.array([k[0] for k in keys], np.int64)
        elided = np.array([k[1] for k in keys], bool)
        counts = np.array([rows[k] for k in keys], np.int64)
        blob = np.frombuffer(b"".join(k[2:] for k in keys), np.uint8)
        rec_start = (np.cumsum(3 * lengths) - 3 * lengths).astype(np.int64)
        idx = np.repeat(rec_start, lengths) + (np.arange(int(lengths.sum())) - np.repeat(
            (np.cumsum(lengths) - lengths), lengths))
        rep_len = np.repeat(lengths, lengths)
        letters = blob[idx]
        dia = blob[idx + rep_len].copy()
        caps = blob[idx + 2 * rep_len]
        start = (np.cumsum(lengths) - lengths).astype(np.int64)
        oxy, _host, n_acc = _oxy_and_host(letters, dia, start, lengths)
        # final-syllable grave -> acute (the decoder chooses in context)
        has_oxy = oxy >= 0
        dia[start[has_oxy] + oxy[has_oxy]] = TO_ACUTE[dia[start[has_oxy] + oxy[has_oxy]]]
        keep = n_acc <= 1
        return cls._assemble(letters, dia, caps, start, lengths, elided, counts, keep, max_len, sources)

    @classmethod
    def _assemble(cls, letters: np.ndarray, dia: np.ndarray, caps: np.ndarray, start: np.ndarray,
                  lengths: np.ndarray, elided: np.ndarray, counts: np.ndarray, keep: np.ndarray,
                  max_len: int, sources: str) -> FormLexicon:
        # merge rows that became identical, drop unwanted ones, sort by bare-form hash
        rows: dict[bytes, int] = {}
        for f in np.flatnonzero(keep).tolist():
            s, n = int(start[f]), int(lengths[f])
            k = (bytes([n, int(elided[f])]) + letters[s:s + n].tobytes() + dia[s:s + n].tobytes()
                 + caps[s:s + n].tobytes())
            rows[k] = rows.get(k, 0) + int(counts[f])
        return cls._pack(rows, max_len=max_len, sources=sources)

    @classmethod
    def _pack(cls, rows: dict[bytes, int], *, max_len: int, sources: str) -> FormLexicon:
        items = sorted(rows.items())
        lengths = np.array([k[0] for k, _ in items], np.int64)
        elided = np.array([k[1] for k, _ in items], bool)
        counts = np.array([c for _, c in items], np.int64)
        total = int(lengths.sum())
        blob = np.frombuffer(b"".join(k[2:] for k, _ in items), np.uint8)
        rec_start = (np.cumsum(3 * lengths) - 3 * lengths).astype(np.int64)
        start = (np.cumsum(lengths) - lengths).astype(np.int64)
        within = np.arange(total) - np.repeat(start, lengths)
        idx = np.repeat(rec_start, lengths) + within
        rep_len = np.repeat(lengths, lengths)
        letters, dia, caps = blob[idx], blob[idx + rep_len], blob[idx + 2 * rep_len]
        key = hash_rows(letters, start, lengths)
        order = np.argsort(key, kind="stable")
        lengths, elided, counts, key = lengths[order], elided[order], counts[order], key[order]
        gather = np.repeat(start[order], lengths) + (np.arange(total) - np.repeat(
            (np.cumsum(lengths) - lengths), lengths))
        letters, dia, caps = letters[gather], dia[gather], caps[gather]
        start = (np.cumsum(lengths) - lengths).astype(np.int64)
        oxy, host, _ = _oxy_and_host(letters, dia, start, lengths)
        keys, key_first, key_n = np.unique(key, return_index=True, return_counts=True)
        key_count = np.add.reduceat(counts, key_first) if len(key_first) else np.zeros(0, np.int64)
        return cls(letters=letters.astype(np.uint8), dia=dia.astype(np.uint8), caps=caps.astype(np.uint8),
                   start=start, length=lengths, elided=elided, count=counts, key=key, oxy=oxy, host=host,
                   keys=keys, key_first=key_first.astype(np.int64), key_n=key_n.astype(np.int64),
                   key_count=key_count.astype(np.int64), max_len=max_len, sources=sources)

    # ------------------------------------------------------------ lookup
    def match(self, letters: np.ndarray, max_len: int | None = None,
              allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every lexicon bare form inside ``letters``: arrays ``(start, length, key index)``,
        by start then length; ``allowed`` (``(n, max_len)`` bool): only the spans it marks are
        looked up (e.g. those a divided text's word ends permit)."""
        max_len = min(max_len or self.max_len, self.max_len)
        if not len(letters) or not len(self.keys):
            z = np.zeros(0, np.int64)
            return z, z, z
        hashes = substring_hashes(letters, max_len)
        n = len(letters)
        valid = (np.arange(n)[:, None] + np.arange(1, max_len + 1)[None, :]) <= n
        if allowed is not None:
            valid &= np.asarray(allowed, bool)[:, :max_len]
        i, lm1 = np.nonzero(valid)
        wanted = hashes[i, lm1]
        pos_c = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        hit = self.keys[pos_c] == wanted
        return i[hit].astype(np.int64), (lm1[hit] + 1).astype(np.int64), pos_c[hit].astype(np.int64)

    def forms_of(self, bare: str) -> list[tuple[str, int]]:
        """The stored forms (rendered) and counts of a bare word, e.g. ``"λογοσ"``."""
        p = encode_planes(bare)
        _, lengths, k = self.match(p.letters)
        out = []
        for ki in k[lengths == len(p)].tolist():
            for f in range(int(self.key_first[ki]), int(self.key_first[ki] + self.key_n[ki])):
                s, n = int(self.start[f]), int(self.length[f])
                bnd = np.zeros(n, np.uint8)
                bnd[-1] = 2
                planes = CharPlanes(self.letters[s:s + n], bnd, self.dia[s:s + n], self.caps[s:s + n],
                                    np.zeros(n, np.uint8), np.arange(n), np.full(n, bool(self.elided[f])))
                out.append((decode_planes(planes), int(self.count[f])))
        return out

    # ------------------------------------------------------------ serialization
    _ARRAYS = ("letters", "dia", "caps", "start", "length", "elided", "count", "key", "oxy", "host",
               "keys", "key_first", "key_n", "key_count")

    def to_disk(self, path: str | Path) -> None:
        """Write one compressed ``.npz``."""
        np.savez_compressed(Path(path), version=np.array(FORMAT_VERSION), max_len=np.array(self.max_len),
                            sources=np.array(self.sources),
                            **{name: getattr(self, name) for name in self._ARRAYS})

    @classmethod
    def from_disk(cls, path: str | Path) -> FormLexicon:
        """Read what :meth:`to_disk` wrote."""
        with np.load(Path(path), allow_pickle=False) as data:
            if int(data["version"]) != FORMAT_VERSION:
                raise ConfigError(f"{path}: lexicon format {int(data['version'])}, expected {FORMAT_VERSION}")
            arrays = {name: data[name] for name in cls._ARRAYS}
            return cls(**arrays, max_len=int(data["max_len"]), sources=str(data["sources"]))
