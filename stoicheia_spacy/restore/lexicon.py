"""Word check of a gap's candidates: do the words it completes occur in the open corpus?

A candidate for a gap completes the word the gap's left context ends in and the word its right
context starts with (or makes words of its own). :func:`edge_words` reads those words (a word
with a lost letter is skipped: its form is not known); :func:`word_features` counts how many of
them the :class:`Vocabulary` holds (``known``) and how many it does not (``oov``). The
vocabulary is every word of one or more parallels indexes (papyri, Perseus, inscriptions) in the
index's letter space (lower case, no diacritics, sigma folded), a word with a supplied or lost
letter never counted (an editor's supplement is not evidence). How ``oov`` and ``known`` enter the
ranking is fitted on dev (``projects/restore/RESULTS.md``, Run 14).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from ..parallels.index import DEPTH, SEP, ParallelIndex, letters_of

__all__ = ["LOST", "Vocabulary", "edge_words", "word_features"]

#: characters of a context that stand for a lost letter (the Ithaca records' ``-`` and ``?``,
#: the inscriptions' ``…``, the index's ``\x00``)
LOST = frozenset("-?…\x00")
_BREAK = re.compile(r"[\s.,·;:ʹ͵’ʼ'·⸏]+")
_WORD_END = 255  # a byte no symbol takes


class Vocabulary:
    """A set of word forms as symbol bytes (module doc)."""

    def __init__(self, words: Iterable[bytes] = ()) -> None:
        self._words = frozenset(words)

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        if isinstance(word, str):
            key = letters_of(word)
            return bool(len(key)) and not (key == SEP).any() and key.tobytes() in self._words
        return word in self._words

    def save(self, path: str | Path) -> None:
        """The words as one ``.npy`` of symbols, each word followed by a 255 (sorted: reproducible)."""
        words = sorted(self._words)
        blob = b"".join(w + bytes([_WORD_END]) for w in words)
        np.save(Path(path), np.frombuffer(blob, np.uint8))

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """A vocabulary written by :meth:`save` (memory-mapped while read)."""
        blob = np.load(Path(path), mmap_mode="r")
        return cls(w for w in np.asarray(blob).tobytes().split(bytes([_WORD_END])) if w)

    @staticmethod
    def index_words(index: ParallelIndex) -> Iterator[bytes]:
        """The words of an index with no supplied or lost letter."""
        n = len(index.letters) - DEPTH
        if n <= 0:
            return
        letters = np.array(index.letters[:n], np.uint8)
        letters[np.unpackbits(np.asarray(index._supplied))[:n].astype(bool)] = SEP
        ends = np.unpackbits(np.asarray(index._spaces))[:n].astype(bool)
        seps = np.asarray(index.doc_start[1:], np.int64) - 1  # the separator after each document
        ends[seps] = True
        ends[seps[seps > 0] - 1] = True  # a document's last word ends before its separator
        split = np.insert(letters, np.flatnonzero(ends) + 1, _WORD_END)
        sep = bytes([SEP])
        for w in split.tobytes().split(bytes([_WORD_END])):
            if w and sep not in w:
                yield w

    @classmethod
    def from_indexes(cls, indexes: Iterable[ParallelIndex]) -> Vocabulary:
        words: set[bytes] = set()
        for index in indexes:
            words.update(cls.index_words(index))
        return cls(words)


def edge_words(left: str, candidate: str, right: str) -> list[str]:
    """The words ``candidate`` makes between ``left`` and ``right`` (its own and the ones it
    completes at either edge), those with a lost letter left out."""
    head = _BREAK.split(left)[-1] if left else ""
    tail = _BREAK.split(right)[0] if right else ""
    words = [w for w in _BREAK.split(head + candidate + tail) if w]
    return [w for w in words if not (set(w) & LOST)]


def word_features(vocab: Vocabulary, text: str, start: int, width: int, candidate: str) -> tuple[int, int]:
    """``(oov, known)`` of ``candidate`` filling ``text[start:start + width]``: its
    :func:`edge_words` the vocabulary lacks and holds."""
    words = edge_words(text[:start], candidate, text[start + width:])
    known = sum(1 for w in words if w in vocab)
    return len(words) - known, known
