"""String-keyed tables read from memory-mapped numpy arrays, not rebuilt as Python dicts.

A :class:`MappedTable` holds sorted UTF-8 keys in one fixed-width ``S`` array (found with
``np.searchsorted``) and, per key, its JSON-encoded value as a slice of one ``uint8`` array;
:func:`write_table` saves the three arrays as ``.npy`` files and :func:`read_table` maps them
(``np.load(mmap_mode="r")``), so opening a 0.5 M-entry table costs milliseconds and a lookup
decodes only the value it returns. A table without values (:func:`write_table` of a set) is a
set of strings (:class:`MappedKeys`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Set
from pathlib import Path
from typing import Any

import numpy as np


def _sorted_keys(keys: Iterable[str]) -> np.ndarray:
    encoded = sorted(k.encode("utf-8") for k in keys)  # UTF-8 byte order = code point order
    width = max((len(k) for k in encoded), default=1)
    return np.array(encoded, dtype=f"S{max(width, 1)}")


class MappedKeys(Set[str]):
    """A set of strings over a sorted ``S`` array."""

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = keys

    def index(self, key: str) -> int:
        """Row of ``key``, or -1."""
        raw = key.encode("utf-8")
        if not raw or len(raw) > self.keys.dtype.itemsize:
            return -1
        i = int(np.searchsorted(self.keys, raw))
        return i if i < len(self.keys) and self.keys[i] == raw else -1

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.index(key) >= 0

    def __iter__(self) -> Iterator[str]:
        return (k.decode("utf-8") for k in self.keys)

    def __len__(self) -> int:
        return len(self.keys)


class MappedTable(Mapping[str, Any]):
    """A read-only mapping ``str -> JSON value`` over mapped arrays (module doc)."""

    def __init__(self, keys: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
        self._keys = MappedKeys(keys)
        self.offsets = offsets
        self.blob = values

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> MappedTable:
        """The table of ``table`` in memory (what :func:`write_table` saves)."""
        keys = _sorted_keys(table)
        blobs = [json.dumps(table[k.decode("utf-8")], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                 for k in keys]
        offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in blobs], out=offsets[1:])
        return cls(keys, offsets, np.frombuffer(b"".join(blobs), dtype=np.uint8))

    def __getitem__(self, key: str) -> Any:
        i = self._keys.index(key)
        if i < 0:
            raise KeyError(key)
        return json.loads(self.blob[self.offsets[i]:self.offsets[i + 1]].tobytes())

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def write_table(folder: Path, name: str, table: Mapping[str, Any] | Iterable[str]) -> None:
    """Save ``table`` (a mapping, or a set of strings) as ``name.*.npy`` in ``folder``."""
    if isinstance(table, Mapping):
        mapped = MappedTable.from_dict(table)
        np.save(folder / f"{name}.keys.npy", mapped._keys.keys)
        np.save(folder / f"{name}.offsets.npy", mapped.offsets)
        np.save(folder / f"{name}.values.npy", mapped.blob)
    else:
        np.save(folder / f"{name}.keys.npy", _sorted_keys(set(table)))


def read_table(folder: Path, name: str) -> MappedTable:
    """The mapping :func:`write_table` saved, memory-mapped."""
    return MappedTable(*(np.load(folder / f"{name}.{part}.npy", mmap_mode="r")
                         for part in ("keys", "offsets", "values")))


def read_keys(folder: Path, name: str) -> MappedKeys:
    """The set of strings :func:`write_table` saved, memory-mapped."""
    return MappedKeys(np.load(folder / f"{name}.keys.npy", mmap_mode="r"))
