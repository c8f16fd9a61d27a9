"""Leiden / Ithaca / DDbDP gap markup: parse to a cleaned text with gaps, render back.

EpiDoc TEI XML is read into Leiden text and restorations written back into the file by
:mod:`stoicheia_spacy.leiden.epidoc` (``read_epidoc`` / ``write_epidoc``;
``restore_epidoc`` is the restorer's: :mod:`stoicheia_spacy.restore.epidoc`).

``parse_gaps(text)`` returns a :class:`GappedText` whose ``text`` holds no gap
characters (a :class:`Gap` is an insertion point) and whose ``source_offsets`` map
every cleaned character back to the input; ``render_restorations`` is the inverse.
"""

from __future__ import annotations

from stoicheia_spacy.leiden.epidoc import EpiDocGap, EpiDocText, read_epidoc, write_epidoc
from stoicheia_spacy.leiden.model import (
    GAP_KINDS,
    SPAN_KINDS,
    Gap,
    GappedText,
    Notation,
    Restoration,
    Span,
)
from stoicheia_spacy.leiden.notation import parse_gaps
from stoicheia_spacy.leiden.render import format_gap, render_restorations

__all__ = [
    "GAP_KINDS",
    "EpiDocGap",
    "EpiDocText",
    "SPAN_KINDS",
    "Gap",
    "GappedText",
    "Notation",
    "Restoration",
    "Span",
    "format_gap",
    "parse_gaps",
    "read_epidoc",
    "render_restorations",
    "write_epidoc",
]
