"""The parallels index: every letter of an open corpus, in the codec's letter space, with a
suffix array over it, memory-mapped at use.

A corpus is a sequence of documents; each is its letters (lower case, no diacritics, final
sigma folded, word division dropped: :func:`letters_of`), with per letter whether the source's
editor supplied it (``[...]`` in the DDbDP tokens) and whether a word ends after it, the
document's id, source and TM number, and the line number where each line starts. An unknown or
lost letter, and every document boundary, is :data:`SEP`, which no query contains, so no match
crosses it. The suffix array orders every letter position by the ``DEPTH`` letters that follow
(prefix doubling over numpy sorts): :meth:`ParallelIndex.find` binary-searches it for a letter
string in ``log2(n)`` steps, whatever the number of hits.

On disk it is a folder of ``.npy`` files (read with ``mmap_mode="r"``) and ``docs.json``
(:data:`FILES`); :meth:`ParallelIndex.load` checks that every file is there and consistent and
raises :class:`~stoicheia_spacy.errors.ParallelsIndexError` otherwise.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..alphabet import ALPHABET
from ..errors import ParallelsIndexError

#: The separator symbol: a lost or unknown letter, or a document boundary.
SEP = len(ALPHABET)
#: Letters the suffix array orders each position by (longer queries are verified on the hits).
DEPTH = 48
#: The files of an index folder.
FILES = ("letters.npy", "sa.npy", "supplied.npy", "spaces.npy", "doc_start.npy", "line_pos.npy", "line_no.npy",
         "docs.json")

_TABLE = {ord(ch): chr(i + 1) for i, ch in enumerate(ALPHABET)} | {ord("ς"): chr(ALPHABET.index("σ") + 1),
                                                                   ord("ϲ"): chr(ALPHABET.index("σ") + 1)}
_NOT_SYMBOL = re.compile(f"[^\x01-{chr(len(ALPHABET) + 1)}\x00]")


def letters_of(text: str) -> np.ndarray:
    """The letters of ``text`` as symbols (uint8, :data:`SEP` for ``\\x00``, every other
    non-letter dropped)."""
    nfd = unicodedata.normalize("NFD", text).lower().translate(_TABLE)
    kept = _NOT_SYMBOL.sub("", nfd).encode("latin-1")
    arr = np.frombuffer(kept, np.uint8).astype(np.int16) - 1
    arr[arr < 0] = SEP
    return arr.astype(np.uint8)


def symbols_text(symbols: np.ndarray) -> str:
    """Symbols back to letters (:data:`SEP` as ``·``)."""
    table = np.array([*ALPHABET, "·"])
    return "".join(table[np.minimum(symbols, SEP)])


_FINAL_SIGMA = re.compile(r"σ(?=\]?(?: |$))")
_GROUP = re.compile(r"\[([^\[\]]*)\]")
_LETTERS_ONLY = re.compile(r"[^\W\d_]+")


def query_letters(text: str) -> np.ndarray:
    """The letters of a Leiden text for a search: an editorial restoration ``[αβγ]`` keeps its
    letters, every other bracketed group (a lost gap) is one :data:`SEP`."""
    def group(m: re.Match[str]) -> str:
        inner = m.group(1).replace(" ", "")
        return m.group(1) if _LETTERS_ONLY.fullmatch(inner) else "\x00"

    return letters_of(_GROUP.sub(group, text))


def papyri_url(doc_id: str, source: str) -> str | None:
    """The papyri.info page of a DDbDP id ``series.volume.number``, or ``series.number`` for a
    series without volumes (``chr.mitt.265`` is ``chr.mitt;;265``); None for other ids."""
    if source != "ddbdp" or "." not in doc_id:
        return None
    head, number = doc_id.rsplit(".", 1)
    series, _, volume = head.rpartition(".")
    if not number[:1].isalnum() or not head:
        return None
    if series and volume[:1].isdigit():
        return f"https://papyri.info/ddbdp/{series};{volume};{number}"
    return f"https://papyri.info/ddbdp/{head};;{number}"


@dataclass
class Document:
    """One document to index: ``letters`` (symbols), ``supplied`` / ``space_after`` (bool per
    letter), ``lines`` ((letter offset, line number) where a line starts), ``id``, ``source``
    (``"ddbdp"`` or ``"literary"``), ``tm`` (Trismegistos number, None when unknown)."""

    id: str
    source: str
    letters: np.ndarray
    supplied: np.ndarray
    space_after: np.ndarray
    lines: Sequence[tuple[int, int]] = ()
    tm: str | None = None


def suffix_array(text: np.ndarray, depth: int = DEPTH) -> np.ndarray:
    """Positions of ``text`` (symbols) not holding :data:`SEP`, ordered by their next ``depth``
    letters (ties in any order): ranks of 12-letter keys, doubled to 24 and 48."""
    n = len(text)
    size = n + depth  # the text and its padding of SEPs, so that every key reads real symbols
    pad = np.concatenate([text.astype(np.int64), np.full(depth + 12, SEP, np.int64)])
    key = np.zeros(size, np.int64)
    for j in range(12):
        key = (key << 5) | pad[j:j + size]
    _, rank = np.unique(key, return_inverse=True)
    del key
    rank = rank.astype(np.int64)
    h = 12
    while h < depth:
        nxt = np.full(size, rank[-1], np.int64)  # beyond the padding: all SEPs, as the last key
        nxt[: size - h] = rank[h:]
        _, rank = np.unique(rank * (size + 1) + nxt, return_inverse=True)
        rank = rank.astype(np.int64)
        h *= 2
    pos = np.flatnonzero(text != SEP)
    return pos[np.argsort(rank[:n][pos], kind="stable")].astype(np.int32)


def build_index(docs: Iterable[Document], out: str | Path) -> dict[str, Any]:
    """Write the index of ``docs`` to the folder ``out`` (module doc); returns its summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parts: list[np.ndarray] = []
    sup: list[np.ndarray] = []
    spc: list[np.ndarray] = []
    starts = [0]
    line_pos: list[np.ndarray] = []
    line_no: list[np.ndarray] = []
    meta: dict[str, list[Any]] = {"id": [], "source": [], "tm": []}
    for doc in docs:
        base = starts[-1]
        parts += [doc.letters.astype(np.uint8), np.array([SEP], np.uint8)]
        sup += [doc.supplied.astype(bool), np.zeros(1, bool)]
        spc += [doc.space_after.astype(bool), np.zeros(1, bool)]
        if doc.lines:
            arr = np.asarray(doc.lines, np.int64)
            line_pos.append(arr[:, 0] + base)
            line_no.append(arr[:, 1])
        starts.append(base + len(doc.letters) + 1)
        meta["id"].append(doc.id)
        meta["source"].append(doc.source)
        meta["tm"].append(doc.tm)
    text = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    np.save(out / "letters.npy", np.concatenate([text, np.full(DEPTH, SEP, np.uint8)]))
    np.save(out / "sa.npy", suffix_array(text))
    np.save(out / "supplied.npy", np.packbits(np.concatenate(sup) if sup else np.zeros(0, bool)))
    np.save(out / "spaces.npy", np.packbits(np.concatenate(spc) if spc else np.zeros(0, bool)))
    np.save(out / "doc_start.npy", np.asarray(starts, np.int64))
    np.save(out / "line_pos.npy", (np.concatenate(line_pos) if line_pos else np.zeros(0, np.int64)).astype(np.int32))
    np.save(out / "line_no.npy", (np.concatenate(line_no) if line_no else np.zeros(0, np.int64)).astype(np.int32))
    info = {"documents": len(meta["id"]), "letters": int((text != SEP).sum()), "depth": DEPTH}
    (out / "docs.json").write_text(json.dumps({**meta, "info": info}, ensure_ascii=False), encoding="utf-8")
    return info


class ParallelIndex:
    """A loaded index folder (module doc)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        missing = [f for f in FILES if not (self.folder / f).is_file()]
        if missing:
            raise ParallelsIndexError(f"the parallels index {self.folder} lacks {', '.join(missing)}")
        try:
            arrays = {f: np.load(self.folder / f, mmap_mode="r") for f in FILES if f.endswith(".npy")}
            meta = json.loads((self.folder / "docs.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ParallelsIndexError(f"the parallels index {self.folder} cannot be read: {err}") from err
        self.letters: np.ndarray = arrays["letters.npy"]
        self.sa: np.ndarray = arrays["sa.npy"]
        self.doc_start: np.ndarray = np.asarray(arrays["doc_start.npy"])
        self.line_pos: np.ndarray = np.asarray(arrays["line_pos.npy"])
        self.line_no: np.ndarray = np.asarray(arrays["line_no.npy"])
        self._supplied = arrays["supplied.npy"]
        self._spaces = arrays["spaces.npy"]
        self.ids: list[str] = list(meta.get("id", []))
        self.sources: list[str] = list(meta.get("source", []))
        self.tms: list[str | None] = list(meta.get("tm", []))
        self.info: dict[str, Any] = dict(meta.get("info", {}))
        n = len(self.letters) - DEPTH
        if (len(self.ids) + 1 != len(self.doc_start) or len(self.sources) != len(self.ids) or n < 0
                or int(self.doc_start[-1]) != n or len(self.sa) > n
                or len(self._supplied) != (n + 7) // 8 or len(self.line_pos) != len(self.line_no)):
            raise ParallelsIndexError(f"the parallels index {self.folder} is corrupt (its files disagree in size)")
        if len(self.sa) and (int(self.sa[0]) < 0 or int(self.sa[-1]) >= n):
            raise ParallelsIndexError(f"the parallels index {self.folder} is corrupt (suffix array out of range)")
        self._by_id = {d: i for i, d in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def doc_index(self, doc_id: str) -> int | None:
        """The index of the document ``doc_id`` (None: not indexed)."""
        return self._by_id.get(doc_id)

    def _suffix(self, i: int, m: int) -> bytes:
        p = int(self.sa[i])
        return bytes(self.letters[p:p + m])

    def find(self, pattern: np.ndarray) -> tuple[int, int]:
        """The suffix-array range ``[lo, hi)`` of the positions where ``pattern`` (symbols, at
        most :data:`DEPTH` of them) occurs."""
        key = bytes(np.asarray(pattern, np.uint8)[:DEPTH])
        m = len(key)
        lo, hi = 0, len(self.sa)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._suffix(mid, m) < key:
                lo = mid + 1
            else:
                hi = mid
        start, hi = lo, len(self.sa)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._suffix(mid, m) <= key:
                lo = mid + 1
            else:
                hi = mid
        return start, lo

    def positions(self, pattern: np.ndarray, cap: int) -> tuple[np.ndarray, int]:
        """Up to ``cap`` positions where ``pattern`` occurs, and how many there are in all."""
        lo, hi = self.find(pattern)
        return np.asarray(self.sa[lo:min(hi, lo + cap)], np.int64), hi - lo

    def doc_of(self, pos: np.ndarray) -> np.ndarray:
        """The document index of each letter position."""
        return np.searchsorted(self.doc_start, pos, side="right") - 1

    def window(self, pos: np.ndarray, m: int) -> np.ndarray:
        """The ``m`` letters from each position (rows)."""
        return np.asarray(self.letters[np.asarray(pos)[:, None] + np.arange(m)])

    def supplied(self, lo: int, hi: int) -> np.ndarray:
        """Whether each letter of ``lo:hi`` was supplied by the source's editor."""
        a, b = lo // 8, (hi + 7) // 8
        bits = np.unpackbits(np.asarray(self._supplied[a:b]))
        return bits[lo - 8 * a: hi - 8 * a].astype(bool)

    def any_supplied(self, starts: np.ndarray, m: int) -> np.ndarray:
        """Whether any of the ``m`` letters from each position was supplied by the editor."""
        idx = np.asarray(starts, np.int64)[:, None] + np.arange(m)
        return (((np.asarray(self._supplied[idx >> 3]) >> (7 - (idx & 7))) & 1).any(axis=1)).astype(bool)

    def spaces(self, lo: int, hi: int) -> np.ndarray:
        """Whether a word ends after each letter of ``lo:hi``."""
        a, b = lo // 8, (hi + 7) // 8
        bits = np.unpackbits(np.asarray(self._spaces[a:b]))
        return bits[lo - 8 * a: hi - 8 * a].astype(bool)

    def line(self, pos: int) -> int | None:
        """The line number at letter position ``pos`` (None where the source gives none)."""
        d = int(self.doc_of(np.array([pos]))[0])
        i = int(np.searchsorted(self.line_pos, pos, side="right")) - 1
        if i < 0 or int(self.line_pos[i]) < int(self.doc_start[d]):
            return None
        return int(self.line_no[i])

    def render(self, lo: int, hi: int) -> str:
        """Letters ``lo:hi`` with their word division (a space after a word's last letter) and
        the editor's supplements in ``[ ]`` (a snippet: a short loop over its letters)."""
        sym = np.asarray(self.letters[lo:hi])
        sup = self.supplied(lo, hi).tolist()
        spc = self.spaces(lo, hi).tolist()
        chars = np.array([*ALPHABET, "·"])[np.minimum(sym, SEP)].tolist()
        out: list[str] = []
        last = len(chars) - 1
        for i, ch in enumerate(chars):
            if sup[i] and (i == 0 or not sup[i - 1]):
                out.append("[")
            out.append(ch)
            if sup[i] and (i == last or not sup[i + 1]):
                out.append("]")
            if spc[i]:
                out.append(" ")
        return _FINAL_SIGMA.sub("ς", "".join(out))

    def snippet(self, lo: int, hi: int, width: int = 30) -> tuple[str, int, int]:
        """A snippet around letters ``lo:hi`` of one document (``width`` letters a side, not
        crossing the document's bounds): its text and where ``lo:hi`` lies in it."""
        d = int(self.doc_of(np.array([lo]))[0])
        start, end = int(self.doc_start[d]), int(self.doc_start[d + 1]) - 1
        before = self.render(max(start, lo - width), lo)
        match = self.render(lo, hi)
        after = self.render(hi, min(end, hi + width))
        if match.endswith(" "):
            match, after = match[:-1], " " + after
        before = before.lstrip()
        if lo - width > start and " " in before:  # clipped inside a word: start at the next one
            before = before[before.index(" ") + 1:]
        after = after.rstrip()
        if hi + width < end and " " in after.strip():
            after = after[: after.rstrip().rindex(" ")]
        text = before + match + after
        return text, len(before), len(before) + len(match)


__all__ = ["DEPTH", "FILES", "SEP", "Document", "ParallelIndex", "build_index", "letters_of", "papyri_url",
           "query_letters", "suffix_array", "symbols_text"]
