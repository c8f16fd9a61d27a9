"""Pack the codec planes of a batch of Docs into the rows of one backbone forward.

Every Doc becomes one segment (Docs longer than ``max_length`` become overlapping
windows, each its own segment); segments are packed greedily into rows of at most
``max_length`` positions, with a segment id per position so that packed documents never
attend to each other and positions restarting at 0 in every segment. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..alphabet import BND_UNKNOWN, CAP_LOWER, CAP_UNKNOWN, DIA_UNKNOWN, PAD_ID, PUNCT_UNKNOWN
from ..errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ..codec import CharPlanes


@dataclass
class PackedBatch:
    """Row-major (B, T) int64 inputs plus, per Doc, the flat index ``row * T + col``
    of the position whose output each of its letters takes."""

    input_ids: np.ndarray
    boundary: np.ndarray
    dia: np.ndarray
    punct: np.ndarray
    cap: np.ndarray
    seg_id: np.ndarray
    positions: np.ndarray
    doc_index: list[np.ndarray]

    @property
    def n_rows(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def row_length(self) -> int:
        return int(self.input_ids.shape[1])


def windows(n: int, max_length: int, overlap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split ``n`` letters into overlapping windows.

    Returns (starts, ends, owner): window ``k`` covers letters ``starts[k]:ends[k]`` and
    letter ``p`` takes its output from window ``owner[p]``, the one where it is at least
    ``overlap // 2`` letters away from a cut edge whenever possible.
    """
    if max_length < 1 or not 0 <= overlap < max_length:
        raise ConfigError(f"need 0 <= overlap < max_length, got overlap={overlap}, max_length={max_length}")
    if n <= max_length:
        return np.zeros(1, np.int64), np.full(1, n, np.int64), np.zeros(n, np.int64)
    stride = max_length - overlap
    n_win = -(-(n - max_length) // stride) + 1
    starts = np.arange(n_win, dtype=np.int64) * stride
    ends = np.minimum(starts + max_length, n)
    owner = np.clip((np.arange(n, dtype=np.int64) - overlap // 2) // stride, 0, n_win - 1)
    return starts, ends, owner


def pack_planes(planes: Sequence[CharPlanes], *, max_length: int, overlap: int) -> PackedBatch:
    """Pack the planes of several Docs into one padded (B, T) batch (see module doc)."""
    # segments: (doc, start, end); placement: (row, col)
    seg_doc: list[int] = []
    seg_bounds: list[tuple[int, int]] = []
    owners: list[tuple[np.ndarray, int]] = []  # per doc: (owner window, first segment id)
    for i, p in enumerate(planes):
        starts, ends, owner = windows(len(p), max_length, overlap)
        first = len(seg_doc)
        if len(p):
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
                seg_doc.append(i)
                seg_bounds.append((s, e))
        owners.append((owner, first))
    rows: list[list[int]] = []
    fill: list[int] = []
    place: list[tuple[int, int]] = []
    for k, (s, e) in enumerate(seg_bounds):
        length = e - s
        if not rows or fill[-1] + length > max_length:
            rows.append([])
            fill.append(0)
        place.append((len(rows) - 1, fill[-1]))
        rows[-1].append(k)
        fill[-1] += length
    n_rows, width = len(rows), max(fill, default=0)
    shape = (n_rows, width)
    input_ids = np.full(shape, PAD_ID, np.int64)
    boundary = np.full(shape, BND_UNKNOWN, np.int64)
    dia = np.full(shape, DIA_UNKNOWN, np.int64)
    punct = np.full(shape, PUNCT_UNKNOWN, np.int64)
    cap = np.full(shape, CAP_LOWER, np.int64)
    positions = np.zeros(shape, np.int64)
    # PAD positions form their own segment: give them an id no real segment uses
    seg_id = np.full(shape, len(seg_bounds), np.int64)
    seg_start = np.zeros(len(seg_bounds), np.int64)
    for k, ((s, e), (r, c)) in enumerate(zip(seg_bounds, place, strict=True)):
        p = planes[seg_doc[k]]
        cols = slice(c, c + e - s)
        input_ids[r, cols] = p.letters[s:e]
        boundary[r, cols] = p.boundary[s:e]
        dia[r, cols] = p.diacritics[s:e]
        punct[r, cols] = p.punctuation[s:e]
        caps = p.capitals[s:e]
        cap[r, cols] = np.where(caps == CAP_UNKNOWN, CAP_LOWER, caps)
        positions[r, cols] = np.arange(e - s)
        seg_id[r, cols] = k
        seg_start[k] = r * width + c - s
    doc_index: list[np.ndarray] = []
    for owner, first_seg in owners:
        seg = owner + first_seg
        if owner.size:
            doc_index.append(seg_start[seg] + np.arange(owner.size, dtype=np.int64))
        else:
            doc_index.append(np.zeros(0, np.int64))
    return PackedBatch(input_ids, boundary, dia, punct, cap, seg_id, positions, doc_index)
