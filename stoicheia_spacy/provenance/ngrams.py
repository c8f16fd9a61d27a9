"""Normalised word n-grams and their stable 64-bit keys.

Words are the corpus pipeline's matching keys (:func:`~stoicheia_spacy.textnorm.word_keys`:
accents, breathings, case and sigma forms folded; only Greek letters), the same normalisation
under which ``projects/corpus`` verifies that no word 5-gram crosses a fold. A word's key is
its 8-byte ``blake2b`` digest; an n-gram's key chains them with SplitMix64
(:func:`~stoicheia_spacy.provenance.hashing.ngram_hashes`). n-grams never cross a record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

from ..textnorm import word_keys
from .hashing import ngram_hashes

N = 5


def word_hash(word: str) -> int:
    """The stable 64-bit key of one normalised word."""
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")


def passage_ngrams(text: str, n: int = N) -> tuple[list[str], np.ndarray]:
    """The normalised word n-grams of ``text`` (as text) and their keys, in order."""
    words = word_keys(text)
    if len(words) < n:
        return [], np.zeros(0, np.uint64)
    hashes = np.array([word_hash(w) for w in words], dtype=np.uint64)
    starts = np.arange(len(words) - n + 1, dtype=np.int64)
    return [" ".join(words[i:i + n]) for i in starts.tolist()], ngram_hashes(hashes, starts, n)


class CorpusNgrams:
    """Distinct n-gram keys of many texts, hashed word by word with a cache."""

    def __init__(self, n: int = N) -> None:
        self.n = n
        self._cache: dict[str, int] = {}
        self._chunks: list[np.ndarray] = []
        self.words = 0
        self.texts = 0

    def add_text(self, text: str) -> np.ndarray:
        """Add the n-grams of one record; returns their keys."""
        words = word_keys(text)
        self.texts += 1
        self.words += len(words)
        if len(words) < self.n:
            return np.zeros(0, np.uint64)
        cache = self._cache
        hashes = np.fromiter((cache[w] if w in cache else cache.setdefault(w, word_hash(w)) for w in words),
                             dtype=np.uint64, count=len(words))
        keys = ngram_hashes(hashes, np.arange(len(words) - self.n + 1, dtype=np.int64), self.n)
        self._chunks.append(np.unique(keys))
        return keys

    def add_texts(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.add_text(text)

    def distinct(self) -> np.ndarray:
        """All distinct keys added so far."""
        if not self._chunks:
            return np.zeros(0, np.uint64)
        keys = np.unique(np.concatenate(self._chunks))
        self._chunks = [keys]
        return keys
