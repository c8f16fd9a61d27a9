"""Turn a parsed text (:class:`~stoicheia_spacy.leiden.GappedText`) into beam-search queries.

Targets are ``lacuna``, ``target`` (Ithaca ``?``) and ``restored`` (stripped
restoration) gaps; ``lost`` (Ithaca ``-``) and ``lines`` gaps are context only. Every
other gap of the document stays unknown: it becomes MASK slots in the query's context
(its width in letters; ``unknown_slots`` for an unknown width), never restored jointly.

Widths: a known width L is a width of L characters (spaces count, the paper's
protocol); a range gives every width in it; an approximate width ``ca. N`` gives
``N ± approx_slack``; an unknown width (``[---]``) is decoded elastically.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from ..alphabet import BND_UNKNOWN
from ..codec import CharPlanes, encode_planes
from ..leiden import Gap, GappedText
from .beam import GapQuery, mask_slots

__all__ = ["TARGET_KINDS", "GapTarget", "build_queries", "gap_widths", "hide_spans"]

TARGET_KINDS = ("lacuna", "target", "restored")


@dataclass(frozen=True)
class GapTarget:
    """A gap to restore: its index in ``GappedText.gaps`` and its query."""

    index: int
    gap: Gap
    query: GapQuery


def gap_widths(gap: Gap, *, approx_slack: int = 2) -> tuple[int, ...] | None:
    """Candidate widths in characters (None = unknown, decode elastically)."""
    if gap.max_width is None:
        return None
    if gap.approximate and gap.min_width == gap.max_width:
        return tuple(range(max(1, gap.min_width - approx_slack), gap.min_width + approx_slack + 1))
    return tuple(range(max(1, gap.min_width), max(gap.max_width, 1) + 1))


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def build_queries(
    gapped: GappedText, *, unknown_slots: int = 5, approx_slack: int = 2
) -> list[GapTarget]:
    """One query per target gap of ``gapped`` (document order)."""
    text = gapped.text
    planes = encode_planes(text)
    # letter index of each gap's insertion point
    cut = np.searchsorted(planes.offsets, [g.start for g in gapped.gaps], side="left")
    targets = [i for i, g in enumerate(gapped.gaps) if g.kind in TARGET_KINDS]
    out = []
    for i in targets:
        parts: list[CharPlanes] = []
        cursor = 0
        insert_at = 0
        for j, g in enumerate(gapped.gaps):
            piece = planes[cursor : int(cut[j])]
            touches = g.start > 0 and _is_letter(text[g.start - 1])
            if touches and len(piece):
                piece = CharPlanes.concat([piece])
                piece.boundary[-1] = BND_UNKNOWN
            parts.append(piece)
            cursor = int(cut[j])
            if j == i:
                insert_at = sum(len(p) for p in parts)
            else:
                n = unknown_slots if g.max_width is None else max(g.max_width, 1)
                parts.append(mask_slots(n))
        parts.append(planes[cursor:])
        gap = gapped.gaps[i]
        left = gap.start > 0 and _is_letter(text[gap.start - 1])
        right = gap.start < len(text) and _is_letter(text[gap.start])
        query = GapQuery(CharPlanes.concat(parts), insert_at, gap_widths(gap, approx_slack=approx_slack), left, right)
        out.append(GapTarget(i, gap, query))
    return out


def hide_spans(text: str, spans: list[tuple[int, int]]) -> GappedText:
    """Hide character spans of ``text``: each becomes a ``restored`` gap of its length
    (``gold`` = the hidden text, ``source_start/end`` = the span); the evaluation view."""
    keep = np.ones(len(text), dtype=bool)
    for start, end in spans:
        keep[start:end] = False
    kept = np.flatnonzero(keep)
    new_pos = np.concatenate([[0], np.cumsum(keep)])
    gaps = [Gap(start=int(new_pos[s]), min_width=e - s, max_width=e - s, kind="restored",
                source_start=s, source_end=e, gold=text[s:e])
            for s, e in sorted(spans) if e > s]
    cleaned = "".join(text[i] for i in kept)
    offsets = np.concatenate([kept, [len(text)]]).astype(np.int64)
    return GappedText(text=cleaned, gaps=gaps, source_offsets=offsets)
