"""Pasted Leiden text as a small EpiDoc TEI file, so that it can be downloaded restored.

:func:`leiden_to_tei` writes the text's edition: each gap becomes a ``<gap>`` (``quantity``,
``atLeast``/``atMost`` or ``extent="unknown"``; whole lines ``unit="line"``), each editorial
restoration ``[αβγ]`` a ``<supplied reason="lost">``, each line break an ``<lb/>``. The gaps
of the file are the gaps of the text, in order, so :func:`~stoicheia_spacy.leiden.epidoc.write_epidoc`
takes the restorer's items by their ``gap_index``.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from ..leiden import parse_gaps
from ..leiden.model import LINE_BREAK, LINES, RESTORED, Gap
from ..restore.results import Restoration

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0">\n'
        "  <teiHeader><fileDesc><titleStmt><title>Pasted text</title></titleStmt>"
        "<publicationStmt><p>Written by stoicheia serve</p></publicationStmt>"
        "<sourceDesc><p>Leiden text pasted into the page</p></sourceDesc></fileDesc></teiHeader>\n"
        '  <text><body><div type="edition" xml:lang="grc"><ab>')
TAIL = "</ab></div></body></text>\n</TEI>\n"


def _gap(gap: Gap) -> str:
    unit = "line" if gap.kind == LINES else "character"
    count = gap.lines if gap.kind == LINES else gap.min_width if gap.max_width == gap.min_width else None
    if count:
        size = f'quantity="{count}"'
    elif gap.kind != LINES and gap.max_width is not None:
        size = f'atLeast="{gap.min_width}" atMost="{gap.max_width}"'
    else:
        size = 'extent="unknown"'
    low = ' precision="low"' if gap.approximate else ""
    return f'<gap reason="lost" {size} unit="{unit}"{low}/>'


def leiden_to_tei(text: str) -> bytes:
    """A TEI file whose edition holds ``text`` (see the module docstring)."""
    gapped = parse_gaps(text)
    clean = gapped.text
    opens: dict[int, list[str]] = {}
    closes: dict[int, list[str]] = {}
    for span in gapped.spans:
        if span.kind == RESTORED and span.end > span.start:
            opens.setdefault(span.start, []).append('<supplied reason="lost">')
            closes.setdefault(span.end, []).append("</supplied>")
        elif span.kind == LINE_BREAK:
            opens.setdefault(span.start, []).append("<lb/>")
    gaps: dict[int, list[str]] = {}
    for gap in gapped.gaps:
        gaps.setdefault(gap.start, []).append(_gap(gap))
    out = [HEAD]
    for i in range(len(clean) + 1):
        out.extend(closes.get(i, []))
        out.extend(gaps.get(i, []))
        out.extend(opens.get(i, []))
        if i < len(clean):
            out.append(escape(clean[i]))
    out.append(TAIL)
    return "".join(out).encode("utf-8")


def by_gap_index(restorations: list[Restoration]) -> dict[int, Restoration]:
    """The restorer's records keyed by their gap's index in ``parse_gaps(text).gaps``."""
    return {int(item.gap_index): item for item in restorations if item.gap_index is not None}
