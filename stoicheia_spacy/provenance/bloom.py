"""A Bloom filter over 64-bit keys: a numpy bit array, ``k`` probes by double hashing.

Probe ``i`` of key ``h`` is ``(h + i * h2) mod m`` with ``h2 = splitmix64(h ^ salt) | 1``; the
keys themselves come from ``hashlib.blake2b`` (:mod:`.ngrams`), so a filter built on one
machine answers the same on every other. Stored as ``.npz`` (``bits`` + JSON ``meta``), no
pickles.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from .hashing import mix64

_SALT = np.uint64(0x6A09E667F3BCC909)


def optimal_shape(n_items: int, *, fp_rate: float | None = None, max_bytes: int | None = None) -> tuple[int, int]:
    """(bits, probes) for ``n_items`` at a target false-positive rate, or filling ``max_bytes``."""
    n = max(int(n_items), 1)
    if max_bytes is not None:
        m = int(max_bytes) * 8
    elif fp_rate is not None and 0 < fp_rate < 1:
        m = math.ceil(-n * math.log(fp_rate) / math.log(2) ** 2)
    else:
        raise ConfigError("give fp_rate in (0, 1) or max_bytes")
    m = max(64, -(-m // 64) * 64)
    k = max(1, round(m / n * math.log(2)))
    return m, k


class BloomFilter:
    """Set membership with false positives (never false negatives) in ``m`` bits."""

    def __init__(self, m_bits: int, k: int, bits: np.ndarray | None = None, meta: dict[str, Any] | None = None) -> None:
        if m_bits < 8 or m_bits % 8 or k < 1:
            raise ConfigError(f"need a positive multiple of 8 bits and k >= 1, got m={m_bits}, k={k}")
        self.m, self.k = int(m_bits), int(k)
        self.bits = np.zeros(self.m // 8, np.uint8) if bits is None else bits
        if self.bits.shape != (self.m // 8,) or self.bits.dtype != np.uint8:
            raise ConfigError("bit array does not match the filter's size")
        self.meta: dict[str, Any] = dict(meta or {})

    def _probes(self, keys: np.ndarray) -> np.ndarray:
        h = np.asarray(keys, dtype=np.uint64)
        h2 = mix64(h ^ _SALT) | np.uint64(1)
        i = np.arange(self.k, dtype=np.uint64)
        with np.errstate(over="ignore"):
            return (h[:, None] + i[None, :] * h2[:, None]) % np.uint64(self.m)

    def add(self, keys: np.ndarray, chunk: int = 1 << 20) -> None:
        """Insert 64-bit keys (in chunks, to bound memory)."""
        keys = np.asarray(keys, dtype=np.uint64)
        for a in range(0, len(keys), chunk):
            pos = self._probes(keys[a:a + chunk]).ravel()
            np.bitwise_or.at(self.bits, (pos >> np.uint64(3)).astype(np.int64),
                             (np.uint8(1) << (pos & np.uint64(7)).astype(np.uint8)))

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Per key: True when every probe bit is set (possibly a false positive)."""
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(keys):
            return np.zeros(0, bool)
        pos = self._probes(keys)
        hit = (self.bits[(pos >> np.uint64(3)).astype(np.int64)] >> (pos & np.uint64(7)).astype(np.uint8)) & 1
        return np.asarray(hit.astype(bool).all(axis=1))

    @property
    def fill(self) -> float:
        """Share of bits set."""
        return float(np.unpackbits(self.bits).mean()) if self.m else 0.0

    @property
    def fp_rate(self) -> float:
        """False-positive rate of a key that was never inserted: ``fill ** k``."""
        return self.fill ** self.k

    def save(self, path: str | Path) -> None:
        meta = {**self.meta, "m_bits": self.m, "k": self.k, "fp_rate": self.fp_rate}
        with Path(path).open("wb") as handle:
            np.savez(handle, bits=self.bits, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))

    @classmethod
    def load(cls, path: str | Path) -> BloomFilter:
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode())
                return cls(int(meta["m_bits"]), int(meta["k"]), bits=data["bits"].copy(), meta=meta)
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"cannot read membership index {path}: {exc}") from exc
