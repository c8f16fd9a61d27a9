"""Gap restoration: non-sequential beam search, widths, queries from Leiden text, HTML.

Importing this package imports torch (the beam runs torch tensors).
"""

from __future__ import annotations

from .beam import (
    Candidate,
    GapQuery,
    ModelScorer,
    Scorer,
    beam_search,
    bucket_temperature,
    mask_slots,
    width_bucket,
)
from .queries import TARGET_KINDS, GapTarget, build_queries, gap_widths, hide_spans
from .render import render_html
from .widths import MAX_WIDTH, Template, WidthPrior, letter_counts, templates_for, too_wide

__all__ = [
    "render_html",
    "MAX_WIDTH",
    "TARGET_KINDS",
    "Candidate",
    "GapQuery",
    "GapTarget",
    "ModelScorer",
    "Scorer",
    "Template",
    "WidthPrior",
    "beam_search",
    "bucket_temperature",
    "build_queries",
    "gap_widths",
    "hide_spans",
    "letter_counts",
    "mask_slots",
    "templates_for",
    "too_wide",
    "width_bucket",
]
