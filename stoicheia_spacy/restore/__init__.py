"""Gap restoration: non-sequential beam search, widths, queries from Leiden text, HTML.

Importing this package imports torch (the beam runs torch tensors).
"""

from __future__ import annotations

from .beam import Candidate, GapQuery, ModelScorer, Scorer, beam_search, mask_slots
from .queries import TARGET_KINDS, GapTarget, build_queries, gap_widths, hide_spans
from .widths import Template, letter_counts, templates_for

__all__ = [
    "TARGET_KINDS",
    "Candidate",
    "GapQuery",
    "GapTarget",
    "ModelScorer",
    "Scorer",
    "Template",
    "beam_search",
    "build_queries",
    "gap_widths",
    "hide_spans",
    "letter_counts",
    "mask_slots",
    "templates_for",
]
