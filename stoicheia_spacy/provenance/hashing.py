"""Vectorised 64-bit hashing of word ids and word n-grams (SplitMix64), shared by the
provenance filters and the lab's corpus collision checks."""

from __future__ import annotations

import numpy as np

_U64 = np.uint64
_C1 = _U64(0xBF58476D1CE4E5B9)
_C2 = _U64(0x94D049BB133111EB)
_GOLDEN = _U64(0x9E3779B97F4A7C15)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser, element-wise on uint64 (wrap-around arithmetic is intended)."""
    x = np.asarray(x, dtype=_U64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> _U64(30))) * _C1
        x = (x ^ (x >> _U64(27))) * _C2
        return x ^ (x >> _U64(31))


def ngram_hashes(word_hash: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """Order-sensitive hash of the n words beginning at each index of ``starts``."""
    h = np.zeros(len(starts), dtype=_U64)
    with np.errstate(over="ignore"):
        for j in range(n):
            h = mix64(h * _GOLDEN + word_hash[starts + j])
    return h
