"""Turn a parsed text (:class:`~stoicheia_spacy.leiden.GappedText`) into beam-search queries.

Targets are ``lacuna``, ``target`` (Ithaca ``?``) and ``restored`` (stripped
restoration) gaps; ``lost`` (Ithaca ``-``) and ``lines`` gaps are context only. Every
other gap of the document stays unknown: it becomes MASK slots in the query's context
(its width in letters; ``unknown_slots`` for an unknown width), never restored jointly.

Widths: a known width L is a width of L characters (spaces count, the paper's
protocol); a range gives every width in it; an approximate width ``ca. N`` gives
``N ± approx_slack``; an unknown width (``[---]``) is decoded by letter-count
enumeration (or elastically). Widths above ``max_width`` are dropped (a gap left with
none is too wide: :func:`~.widths.too_wide`), and a context gap holds at most
``context_cap`` MASK slots (the decoder crops the context to its window anyway), so
memory stays bounded whatever width the markup declares.

``only`` restricts the targets to the given gap indices (``GappedText.gaps``); every
other lacuna stays in the context as unknown letters.

:func:`queries_from_runs` builds the same queries from the encoder's single parse
(``doc._.stoicheia.planes`` and ``.gaps``): the context is those planes without the
target's MASK letters, the other gaps keep the MASK letters the encoder fed (its width
convention), and the target's candidate widths come from its markup (``GapRun.gap``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..alphabet import BND_UNKNOWN
from ..codec import CharPlanes, encode_planes
from ..leiden import Gap, GappedText
from .beam import GapQuery, mask_slots
from .widths import MAX_WIDTH

if TYPE_CHECKING:  # pragma: no cover
    from ..encoder.gaps import GapRun

__all__ = ["TARGET_KINDS", "GapTarget", "build_queries", "gap_widths", "hide_spans", "queries_from_runs"]

TARGET_KINDS = ("lacuna", "target", "restored")


@dataclass(frozen=True)
class GapTarget:
    """A gap to restore: its index in ``GappedText.gaps`` and its query."""

    index: int
    gap: Gap
    query: GapQuery


def gap_widths(gap: Gap, *, approx_slack: int = 2, max_width: int = MAX_WIDTH) -> tuple[int, ...] | None:
    """Candidate widths in characters (None = unknown). Widths above ``max_width`` are
    dropped; when none is left, the narrowest width alone is returned (too wide)."""
    if gap.max_width is None:
        return None
    if gap.approximate and gap.min_width == gap.max_width:
        low, high = max(1, gap.min_width - approx_slack), gap.min_width + approx_slack
    else:
        low, high = max(1, gap.min_width), max(gap.max_width, 1)
    if low > max_width:
        return (low,)
    return tuple(range(low, min(high, max_width) + 1))


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def build_queries(
    gapped: GappedText, *, unknown_slots: int = 5, approx_slack: int = 2,
    only: Collection[int] | None = None, max_width: int = MAX_WIDTH, context_cap: int = 512,
) -> list[GapTarget]:
    """One query per target gap of ``gapped`` (document order), or per gap index in ``only``
    (indices that are not target gaps are ignored)."""
    text = gapped.text
    planes = encode_planes(text)
    # letter index of each gap's insertion point
    cut = np.searchsorted(planes.offsets, [g.start for g in gapped.gaps], side="left")
    targets = [i for i, g in enumerate(gapped.gaps) if g.kind in TARGET_KINDS and (only is None or i in only)]
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
                parts.append(mask_slots(min(n, context_cap)))
        parts.append(planes[cursor:])
        gap = gapped.gaps[i]
        left = gap.start > 0 and _is_letter(text[gap.start - 1])
        right = gap.start < len(text) and _is_letter(text[gap.start])
        widths = gap_widths(gap, approx_slack=approx_slack, max_width=max_width)
        query = GapQuery(CharPlanes.concat(parts), insert_at, widths, left, right)
        out.append(GapTarget(i, gap, query))
    return out


def queries_from_runs(
    text: str, planes: CharPlanes, runs: list[GapRun], *, approx_slack: int = 2,
    only: Collection[int] | None = None, max_width: int = MAX_WIDTH,
) -> list[GapTarget]:
    """One query per target gap of the encoder's ``runs`` (``doc._.stoicheia.gaps``) over its
    ``planes`` of ``text`` (``doc.text``), or per gap index (``GapRun.index``) in ``only``."""
    base = planes.copy()
    for run in runs:  # a gap touching a letter: a word break may fall at its left edge
        if run.start > 0 and run.source_start > 0 and _is_letter(text[run.source_start - 1]):
            base.boundary[run.start - 1] = BND_UNKNOWN
    out = []
    for run in runs:
        gap = run.gap
        if gap is None or gap.kind not in TARGET_KINDS or (only is not None and run.index not in only):
            continue
        context = CharPlanes.concat([base[: run.start], base[run.start + run.width :]])
        left = run.source_start > 0 and _is_letter(text[run.source_start - 1])
        right = run.source_end < len(text) and _is_letter(text[run.source_end])
        widths = gap_widths(gap, approx_slack=approx_slack, max_width=max_width)
        out.append(GapTarget(run.index, gap, GapQuery(context, run.start, widths, left, right)))
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
