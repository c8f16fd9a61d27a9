"""A standalone HTML view of a restored Doc (``displacy``-like): gaps highlighted, each
with its ranked candidates and their calibrated probabilities (normalised over the
candidate set, temperature per width bucket). A restored gap that is not ``confident``
(top probability under ``confident_above``) is outlined and says so. Abstentions (top probability under
``abstain_below``) and gaps not restored (too wide) are greyed out, in the text and in
their candidate table. The gaps are the restorer's items, i.e. the encoder's parse
(``doc._.stoicheia.gaps``); when that markup did not parse the page says so."""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..htmlpage import finish_html
from .results import Candidate, Parallel, Restoration

__all__ = ["parallels_html", "render_html"]

_STYLE = """
body{font-family:'Gentium Plus','GFS Didot',serif;line-height:2.2;margin:2em;max-width:60em}
.gap{background:#fde68a;border-radius:4px;padding:0 .25em;position:relative;cursor:help}
.gap.abstain{background:#e5e7eb}
.gap.unsure{background:#fef3c7;border:1px dashed #d97706}
.unsure-note{color:#b45309}
.gap .mark{color:#6b7280;font-size:.8em;margin-left:.2em}
table.cands{border-collapse:collapse;margin:.3em 0 1em 0;font-size:.9em;line-height:1.3}
table.cands td,table.cands th{border-bottom:1px solid #e5e7eb;padding:.1em .6em;text-align:left}
.bar{display:inline-block;height:.6em;background:#f59e0b}
table.cands.abstain{color:#9ca3af}
table.cands.abstain .bar{background:#d1d5db}
.bare{color:#6b7280;font-size:.85em}
details.parallels{font-size:.9em}
details.parallels mark{background:#fde68a}
.supplied-flag{color:#b45309}
"""


def _parallel(par: Parallel) -> str:
    where = html.escape(par.id)
    if par.url:
        where = f'<a href="{html.escape(par.url, quote=True)}" target="_blank" rel="noopener">{where}</a>'
    line = f", l. {par.line}" if par.line is not None else ""
    text = (f"{html.escape(par.text[:par.start])}<mark>{html.escape(par.text[par.start:par.end])}</mark>"
            f"{html.escape(par.text[par.end:])}")
    notes = ("" if par.exact else " (one letter differs)") + (
        ' <span class="supplied-flag">(rests on the editor\'s supplement)</span>' if par.supplied else "")
    return f'<li>{where}{line}: <span lang="grc">{text}</span>{notes}</li>'


def parallels_html(cand: Candidate) -> str:
    """A candidate's attested parallels as an expandable list (empty without parallels)."""
    if not cand.parallels:
        return ""
    n = len(cand.parallels)
    return (f'<details class="parallels"><summary>{n} parallel{"s" if n != 1 else ""}</summary>'
            f'<ul>{"".join(_parallel(p) for p in cand.parallels)}</ul></details>')


def _gap_span(doc_text: str, item: Restoration, number: int) -> str:
    cands = item.candidates
    markup = html.escape(doc_text[item.start:item.end])
    if cands and not item.abstain:
        top = cands[0].text
        label = f"[{html.escape(top)}]"
        sure = item.confident
        title = (f"gap {number}: {item.confidence:.0%} that [{top}] is right"
                 + ("" if sure else ", not confident"))
        cls = "gap" if sure else "gap unsure"
    else:
        why = "too wide" if item.status == "too_wide" else "abstained"
        label, title, cls = markup, f"gap {number}: not restored ({why})", "gap abstain"
    return f'<span class="{cls}" title="{html.escape(title)}">{label}<sup class="mark">{number}</sup></span>'


def _table(item: Restoration, number: int, doc_text: str) -> str:
    def shown(cand: Candidate) -> str:  # the accented form when the accentuator gave one
        form, text = cand.accented, cand.text
        return (f'{html.escape(form)} <span class="bare">{html.escape(text)}</span>' if form and form != text
                else html.escape(text))

    rows = "".join(
        f"<tr><td>{rank}</td><td>{shown(cand)}</td><td>{cand.share:.3f}</td>"
        f'<td><span class="bar" style="width:{max(1, round(cand.share * 120))}px"></span></td><td>{cand.score:.2f}</td></tr>'
        + (f'<tr><td></td><td colspan="4">{parallels_html(cand)}</td></tr>' if cand.parallels else "")
        for rank, cand in enumerate(item.candidates, start=1)
    )
    width = item.min_width if item.max_width == item.min_width else (
        f"{item.min_width}–{item.max_width}" if item.max_width is not None else "unknown")
    note = (", not restored: too wide" if item.status == "too_wide"
            else ", abstained" if item.abstain else "")
    head = (f"<p><b>gap {number}</b> {html.escape(doc_text[item.start:item.end])} "
            f"(width {width}{note})</p>")
    if item.status == "restored" and not item.abstain and not item.confident:
        head += (f'<p class="unsure-note">not confident: {item.confidence:.0%} that the top candidate '
                 "is right, below the threshold fitted for 90 % precision on dev gaps</p>")
    cls = "cands abstain" if item.abstain else "cands"
    return head + (f"<table class='{cls}'><tr><th>#</th><th>candidate</th><th>p (calibrated)</th><th></th>"
                   f"<th>log p</th></tr>{rows}</table>")


def render_html(docs: Any, *, page: bool = True, path: str | Path | None = None) -> str:
    """HTML of one Doc or several (with ``doc._.restorations`` set); ``page`` wraps it in a
    full document with its style; ``path`` also writes it there."""
    items: Iterable[Any] = docs if isinstance(docs, list | tuple) else [docs]
    parts = []
    for doc in items:
        restorations = doc._.restorations or []
        text, body, cursor = doc.text, [], 0
        for number, item in enumerate(sorted(restorations, key=lambda it: it.start), start=1):
            body.append(html.escape(text[cursor:item.start]))
            body.append(_gap_span(text, item, number))
            cursor = item.end
        body.append(html.escape(text[cursor:]))
        data = getattr(doc._, "stoicheia", None)
        if data is not None and data.markup_error:  # read as plain text: nothing restored, say why
            body.append(f'<p class="error">markup did not parse, nothing restored: {html.escape(data.markup_error)}</p>')
        tables = "".join(_table(item, n, text) for n, item in
                         enumerate(sorted(restorations, key=lambda it: it.start), start=1))
        parts.append(f'<div class="stoicheia-restore"><p class="text">{"".join(body)}</p>{tables}</div>')
    return finish_html("".join(parts), title="Stoicheia restoration", style=_STYLE, page=page, path=path)
