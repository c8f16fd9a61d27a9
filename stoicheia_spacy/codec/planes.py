"""The five aligned character planes (one entry per Greek letter) and small helpers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from stoicheia_spacy.alphabet import (
    BND_SENT_END,
    BND_UNKNOWN,
    BND_WORD_END,
    CAP_UNKNOWN,
    DIA_UNKNOWN,
    MASK_ID,
    PUNCT_UNKNOWN,
)
from stoicheia_spacy.errors import InvalidPlanesError

#: plane name -> the id that means "unknown" in that plane
UNKNOWN_IDS: dict[str, int] = {
    "letters": MASK_ID,
    "boundary": BND_UNKNOWN,
    "diacritics": DIA_UNKNOWN,
    "capitals": CAP_UNKNOWN,
    "punctuation": PUNCT_UNKNOWN,
}
PLANE_NAMES: tuple[str, ...] = tuple(UNKNOWN_IDS)
#: optional per-letter source metadata (not model planes) that travels with the planes
SOURCE_MARKS: tuple[str, ...] = ("elided", "prodelided")


def _or_false(arr: np.ndarray | None, n: int) -> np.ndarray:
    return arr if arr is not None else np.zeros(n, dtype=bool)


@dataclass(eq=False)
class CharPlanes:
    """Equal-length planes, one entry per modelled Greek letter.

    ``letters``, ``boundary``, ``diacritics``, ``capitals``, ``punctuation`` are uint8
    arrays of ids from :mod:`stoicheia_spacy.alphabet` (UNKNOWN ids allowed, letters
    may be MASK/BLANK/PAD); ``offsets`` (int64) is the index, in the encoded Python
    ``str``, of each letter's base character (-1 for letters that have no source,
    e.g. model insertions).

    ``elided`` (optional bool per letter) is source metadata, not a model plane: the
    encoder records which words the text marked as elided, so that decoding restores
    the elision mark exactly; planes without it (e.g. built from model predictions)
    fall back to the rule of :func:`~stoicheia_spacy.codec.elision_mask`.
    ``prodelided`` (optional bool per letter, also source metadata) marks the first
    letter of a word the text wrote with prodelision (``νέα ’στὶ``); decoding renders
    U+2019 before it, planes without it render none.
    """

    letters: np.ndarray
    boundary: np.ndarray
    diacritics: np.ndarray
    capitals: np.ndarray
    punctuation: np.ndarray
    offsets: np.ndarray
    elided: np.ndarray | None = None
    prodelided: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in PLANE_NAMES:
            setattr(self, name, np.ascontiguousarray(getattr(self, name), dtype=np.uint8))
        self.offsets = np.ascontiguousarray(self.offsets, dtype=np.int64)
        for name in SOURCE_MARKS:
            if getattr(self, name) is not None:
                setattr(self, name, np.ascontiguousarray(getattr(self, name), dtype=bool))
        lengths = {name: len(arr) for name, arr in self._arrays().items()}
        if len(set(lengths.values())) > 1:
            raise InvalidPlanesError(f"planes must have equal lengths, got {lengths}")
        for name, arr in self._arrays().items():
            if arr.ndim != 1:
                raise InvalidPlanesError(f"plane {name!r} must be one-dimensional")

    def _arrays(self) -> dict[str, np.ndarray]:
        """Every per-letter array this object holds (the source marks only when present)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in SOURCE_MARKS}
        for name in SOURCE_MARKS:
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    def __len__(self) -> int:
        return len(self.letters)

    def __getitem__(self, index: slice) -> CharPlanes:
        if not isinstance(index, slice):
            raise TypeError("CharPlanes supports slicing only (planes[a:b])")
        return CharPlanes(**{name: arr[index] for name, arr in self._arrays().items()})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CharPlanes):
            return NotImplemented
        return all(np.array_equal(getattr(self, f.name), getattr(other, f.name))
                   for f in fields(self) if f.name not in SOURCE_MARKS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CharPlanes(len={len(self)})"

    @classmethod
    def empty(cls) -> CharPlanes:
        """Planes of length 0."""
        z = np.zeros(0, dtype=np.uint8)
        return cls(z, z, z, z, z, np.zeros(0, dtype=np.int64))

    @classmethod
    def concat(cls, parts: Iterable[CharPlanes], *, shifts: Sequence[int] | None = None) -> CharPlanes:
        """Concatenate planes; ``shifts[i]`` (optional) is added to part i's offsets,
        e.g. the start of each part's text in the joined document (-1 offsets stay -1)."""
        items = list(parts)
        if not items:
            return cls.empty()
        if shifts is not None and len(shifts) != len(items):
            raise InvalidPlanesError("shifts must have one entry per part")
        offsets = []
        for i, part in enumerate(items):
            off = part.offsets
            if shifts is not None and shifts[i]:
                off = np.where(off >= 0, off + int(shifts[i]), off)
            offsets.append(off)
        arrays = {name: np.concatenate([getattr(p, name) for p in items]) for name in PLANE_NAMES}
        out = cls(**arrays, offsets=np.concatenate(offsets))
        for name in SOURCE_MARKS:
            if any(getattr(p, name) is not None for p in items):
                setattr(out, name, np.concatenate([_or_false(getattr(p, name), len(p)) for p in items]))
        return out

    def copy(self) -> CharPlanes:
        """A deep copy."""
        return CharPlanes(**{name: arr.copy() for name, arr in self._arrays().items()})

    def with_unknown(self, *names: str) -> CharPlanes:
        """A copy with the named planes set to their UNKNOWN id everywhere
        (``"letters"`` becomes MASK)."""
        bad = [n for n in names if n not in UNKNOWN_IDS]
        if bad:
            raise InvalidPlanesError(f"unknown plane name(s) {bad}; choose from {list(PLANE_NAMES)}")
        out = self.copy()
        for name in names:
            getattr(out, name)[:] = UNKNOWN_IDS[name]
        return out


def _spans(ends: np.ndarray, n: int) -> np.ndarray:
    ends = ends + 1
    if n and (len(ends) == 0 or ends[-1] != n):
        ends = np.append(ends, n)
    starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
    return np.stack([starts, ends.astype(np.int64)], axis=1) if len(ends) else np.zeros((0, 2), np.int64)


def word_spans(planes: CharPlanes) -> np.ndarray:
    """(n_words, 2) int64 array of ``[start, end)`` letter indices of each word.

    A word ends at a letter whose boundary is word- or sentence-final; trailing
    letters without such a boundary (UNKNOWN or 0) form a last word.  UNKNOWN
    boundaries never split a word."""
    ends = np.flatnonzero((planes.boundary == BND_WORD_END) | (planes.boundary == BND_SENT_END))
    return _spans(ends, len(planes))


def sentence_spans(planes: CharPlanes) -> np.ndarray:
    """(n_sentences, 2) int64 array of ``[start, end)`` letter indices of each sentence
    (ending at boundary 2; trailing letters form a last sentence)."""
    return _spans(np.flatnonzero(planes.boundary == BND_SENT_END), len(planes))
