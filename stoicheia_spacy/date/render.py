"""A standalone HTML/SVG view of ``doc._.date`` (``displacy``-like): the histogram over
year bins with the interval shaded and the point estimate (weighted median) marked, under the text; with the
``stoicheia_attributor`` in the pipeline, the genre and dialect probabilities beside it.
A Doc without an estimate (no letters, or no dater) says so instead of a chart."""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..htmlpage import finish_html
from .dating import BIN_YEARS, DateEstimate

__all__ = ["date_svg", "render_date_html"]

_STYLE = """
body{font-family:'Gentium Plus','GFS Didot',serif;margin:2em;max-width:60em}
.stoicheia-date .text{line-height:1.8}
.stoicheia-date svg{font-family:sans-serif;font-size:11px}
table.labels{border-collapse:collapse;font-size:.9em;margin:.5em 0}
table.labels td,table.labels th{border-bottom:1px solid #e5e7eb;padding:.1em .6em;text-align:left}
"""


def _year(value: float) -> str:
    year = int(round(value))
    return f"{-year} BCE" if year < 0 else f"{year} CE"


def date_svg(estimate: DateEstimate, *, width: int = 560, height: int = 180) -> str:
    """An SVG histogram of ``estimate``: bars per :data:`BIN_YEARS`-year bin, the interval
    shaded, the point estimate (weighted median) as a line, the axis labelled in years BCE / CE."""
    starts = [start for start, _ in estimate.histogram]
    low_year = min(min(starts), int(estimate.low) - BIN_YEARS)
    high_year = max(max(starts) + BIN_YEARS, int(estimate.high) + BIN_YEARS)
    top = max(prob for _, prob in estimate.histogram)
    left, right, upper, lower = 10, width - 10, 10, height - 30

    def x(year: float) -> float:
        return left + (year - low_year) / (high_year - low_year) * (right - left)

    def y(prob: float) -> float:
        return lower - prob / top * (lower - upper)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="date distribution: {html.escape(str(estimate))}">',
             f'<rect class="interval" x="{x(estimate.low):.1f}" y="{upper}" width="{x(estimate.high) - x(estimate.low):.1f}" '
             f'height="{lower - upper}" fill="#fde68a" opacity="0.6"><title>{estimate.level:.0%} interval '
             f'{_year(estimate.low)} – {_year(estimate.high)}</title></rect>']
    for start, prob in estimate.histogram:
        parts.append(f'<rect class="bin" x="{x(start):.1f}" y="{y(prob):.1f}" width="{max(x(start + BIN_YEARS) - x(start) - 1, 1):.1f}" '
                     f'height="{lower - y(prob):.1f}" fill="#2563eb"><title>{_year(start)}–{_year(start + BIN_YEARS)}: '
                     f'{prob:.1%}</title></rect>')
    parts.append(f'<line class="mean" x1="{x(estimate.mean):.1f}" x2="{x(estimate.mean):.1f}" y1="{upper}" y2="{lower}" '
                 f'stroke="#111827" stroke-width="2"><title>{estimate.estimator} {_year(estimate.mean)}</title></line>')
    parts.append(f'<line x1="{left}" x2="{right}" y1="{lower}" y2="{lower}" stroke="#6b7280"/>')
    step = 100 if high_year - low_year <= 1000 else 200
    for tick in range((low_year // step + 1) * step, high_year, step):
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{lower}" y2="{lower + 4}" stroke="#6b7280"/>'
                     f'<text x="{x(tick):.1f}" y="{lower + 16}" text-anchor="middle">{_year(tick)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _labels(doc: Any) -> str:
    rows = []
    for task in ("genre", "dialect"):
        estimate = getattr(doc._, task, None) if doc.has_extension(task) else None
        if estimate is None:
            continue
        top = sorted(estimate.probabilities.items(), key=lambda item: -item[1])[:3]
        cells = ", ".join(f"{html.escape(label)} {prob:.0%}" for label, prob in top)
        rows.append(f"<tr><th>{task}</th><td>{cells}</td></tr>")
    return f"<table class='labels'>{''.join(rows)}</table>" if rows else ""


def render_date_html(docs: Any, *, page: bool = True, path: str | Path | None = None) -> str:
    """HTML of one Doc or several (with ``doc._.date`` set by ``stoicheia_dater``); ``page``
    wraps it in a full document with its style; ``path`` also writes it there."""
    items: Iterable[Any] = docs if isinstance(docs, list | tuple) else [docs]
    parts = []
    for doc in items:
        estimate = doc._.date if doc.has_extension("date") else None
        if estimate is None:
            chart = '<p class="error">no date estimate (no Greek letters, or no stoicheia_dater in the pipeline)</p>'
        else:
            chart = (f"<p><b>{html.escape(str(estimate))}</b></p>{date_svg(estimate)}")
        parts.append(f'<div class="stoicheia-date"><p class="text">{html.escape(doc.text)}</p>{chart}{_labels(doc)}</div>')
    return finish_html("".join(parts), title="Stoicheia date", style=_STYLE, page=page, path=path)
