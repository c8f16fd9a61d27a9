"""HTML of the page: the form, then one section per result of an :class:`~.engine.Analysis`.

Everything is rendered here, on the server (the parse is displaCy's SVG, the date
histogram :func:`stoicheia_spacy.date.render.date_svg`); the page loads only the
package's own ``/static/style.css`` and ``/static/page.js``.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from ..restore.render import parallels_html
from ..restore.results import Restoration
from .engine import MAX_TEXT, Analysis

#: Sentences drawn by displaCy (the CoNLL-U download holds them all).
MAX_TREES = 6
#: Verses shown in the scansion table.
MAX_VERSES = 24
#: The metrical breve U+23D1 is missing from common fonts; U+25E1 (◡) draws the same mark.
BREVE = str.maketrans({"\u23d1": "\u25e1"})

#: What the candidate table's columns hold (their header tooltips).
SHARE_TITLE = "the candidate's probability normalised over the listed candidates (not the chance it is right)"
SCORE_TITLE = "the restorer's log-probability of the candidate (rows follow it unless parallels reordered them)"

EXAMPLE = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι· Κεκροπὶς ἐπρυτάνευε, [.4]ιος ἐγραμμάτευε, Εὐπείθης ἐπεστάτει."


def e(value: Any) -> str:
    """HTML-escaped ``str(value)``."""
    return html.escape(str(value), quote=True)


def page(*, text: str = "", analysis: Analysis | None = None, error: str | None = None,
         model: str = "") -> str:
    """The whole page: the form (holding ``text``), an error message, and the results."""
    body = [_form(text, model)]
    if error:
        body.append(f'<div class="error" id="error" role="alert"><b>Cannot read this input.</b> {e(error)}</div>')
    if analysis is not None:
        body.append(results(analysis))
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Stoicheia workbench</title><link rel="stylesheet" href="/static/style.css">'
            '<script src="/static/page.js" defer></script></head><body>'
            f'<header><h1>Stoicheia workbench</h1><p class="model">{e(model)}</p></header>'
            f'<main>{"".join(body)}</main></body></html>')


def _form(text: str, model: str) -> str:
    return ('<form id="input" method="post" action="/" enctype="multipart/form-data">'
            '<label for="text">Leiden text</label>'
            f'<textarea id="text" name="text" rows="6" maxlength="{MAX_TEXT}" lang="grc" '
            f'placeholder="{e(EXAMPLE)}">{e(text)}</textarea>'
            '<div class="row"><label for="file">or an EpiDoc file</label>'
            '<input type="file" id="file" name="file" accept=".xml,application/xml,application/tei+xml">'
            '<button type="submit" id="run">Restore and analyse</button>'
            '<span id="busy" hidden>running…</span></div></form>')


def results(analysis: Analysis) -> str:
    """The result sections of one analysis."""
    doc = analysis.doc
    parts = [_notes(analysis), _restorations(doc), _passages(doc), _accents(doc), _parse(doc), _scansion(doc),
             _date(doc), _which(analysis.which), _downloads(analysis)]
    return f'<div id="results">{"".join(p for p in parts if p)}</div>'


def _section(ident: str, title: str, inner: str) -> str:
    return f'<section id="{ident}"><h2>{e(title)}</h2>{inner}</section>'


def _notes(analysis: Analysis) -> str:
    if not analysis.notes:
        return ""
    return '<div class="notes">' + "".join(f"<p>{e(n)}</p>" for n in analysis.notes) + "</div>"


def _ordered(doc: Any) -> list[Restoration]:
    return sorted(doc._.restorations or [], key=lambda item: item.start)


def _restorations(doc: Any) -> str:
    items = _ordered(doc)
    text, out, cursor = doc.text, [], 0
    for number, item in enumerate(items, start=1):
        out.append(e(text[cursor:item.start]))
        cands = item.candidates
        restored = bool(cands) and not item.abstain
        title = (f"gap {number}: {item.confidence:.0%} that the top candidate is right"
                 if restored else f"gap {number}: not restored")
        label = f"[{e(cands[0].text)}]" if restored else e(text[item.start:item.end])
        cls = "gap" if restored else "gap abstain"
        out.append(f'<a class="{cls}" href="#gap-{number}" title="{e(title)}">{label}<sup>{number}</sup></a>')
        cursor = item.end
    out.append(e(text[cursor:]))
    lead = (f"<p>{len(items)} gap{'s' if len(items) != 1 else ''}; the top candidate of each is shown in brackets.</p>"
            if items else '<p class="quiet">No gaps in this text (write them in Leiden notation: [.4], [---], [ca. 5]).</p>')
    tables = "".join(_candidates(item, number, text) for number, item in enumerate(items, start=1))
    return _section("restoration", "Text and gaps", f'{lead}<p class="text" lang="grc" id="gapped">{"".join(out)}</p>{tables}')


def _passages(doc: Any) -> str:
    """The panel of corpus passages most similar to the whole text (``doc._.parallels``), when that pipe ran."""
    if not doc.has_extension("parallels") or doc._.parallels is None:
        return ""
    rows = []
    for item in doc._.parallels:
        where = e(item.id)
        if item.url:
            where = f'<a href="{e(item.url)}" target="_blank" rel="noopener">{where}</a>'
        line = f", l. {item.line}" if item.line is not None else ""
        snippet = (f"{e(item.text[:item.start])}<mark>{e(item.text[item.start:item.end])}</mark>"
                   f"{e(item.text[item.end:])}")
        rows.append(f'<li>{where}{line} <small>({item.shared} shared 12-letter sequences, {item.score:.0%})</small>: '
                    f'<span lang="grc">{snippet}</span></li>')
    inner = (f'<p class="quiet">The passages of the open corpus (papyri and literary texts) sharing most long letter '
             f'sequences with this text, its own document and duplicates left out.</p><ol class="passages">{"".join(rows)}</ol>'
             if rows else '<p class="quiet">No passage of the open corpus shares a 12-letter sequence with this text.</p>')
    return _section("parallels", "Similar passages", inner)


def _candidates(item: Restoration, number: int, text: str) -> str:
    width = (item.min_width if item.max_width == item.min_width
             else f"{item.min_width}–{item.max_width}" if item.max_width is not None else "unknown")
    flags = []
    if item.status == "too_wide":
        flags.append('<span class="flag">not restored: too wide</span>')
    elif item.abstain:
        flags.append('<span class="flag">abstained</span>')
    flags.append(f'<span class="flag confident-{str(bool(item.confident)).lower()}">'
                 f'{"confident" if item.confident else "not confident"}</span>')
    accented = any(cand.accented for cand in item.candidates)

    def shown(form: str | None) -> str:  # the accented form (the accentuator, in context), when there is a column
        return f'<td lang="grc" class="accented">{e(form or "")}</td>' if accented else ""

    rows = "".join(
        f'<tr><td>{rank}</td><td lang="grc" class="cand">{e(cand.text)}</td>{shown(cand.accented)}'
        f'<td class="p">{cand.share:.3f}</td>'
        f'<td><span class="bar" style="width:{max(1, round(cand.share * 160))}px"></span></td><td>{cand.score:.2f}</td></tr>'
        + (f'<tr class="parallels-row"><td></td><td colspan="{5 + accented}">{parallels_html(cand)}</td></tr>'
           if cand.parallels else "")
        for rank, cand in enumerate(item.candidates, start=1))
    head = (f'<h3>gap {number} <code>{e(text[item.start:item.end])}</code> '
            f'<small>width {e(width)}</small> {"".join(flags)}</h3>')
    accent_head = "<th>accented</th>" if accented else ""
    # the restorer's order (its top is the restoration shown); the share follows log p, so say when it differs
    scores = [cand.score for cand in item.candidates]
    order = ("" if scores == sorted(scores, reverse=True) else
             " Rows are in the restorer's order, which attested parallels changed: not by log p.")
    confidence = (f"<p class='quiet'>{item.confidence:.0%} calibrated chance that the top candidate is right; "
                  f"share: each candidate's part of the probability among those listed.{order}</p>") if rows else ""
    table = (f"{confidence}<table class='cands'><tr><th>#</th><th>candidate</th>{accent_head}<th title='{e(SHARE_TITLE)}'>share</th><th></th>"
             f"<th title='{e(SCORE_TITLE)}'>log p</th></tr>{rows}</table>") if rows else ""
    return f'<div class="gapinfo" id="gap-{number}">{head}{table}</div>'


def _accents(doc: Any) -> str:
    if not doc.has_extension("accent_text") or doc._.accent_text is None:
        return ""
    return _section("accents", "Accents and word division",
                    f'<p class="text" lang="grc" id="accented">{e(doc._.accent_text)}</p>')


def _parse(doc: Any) -> str:
    if not doc.has_annotation("DEP"):
        return ""
    from spacy import displacy

    sents = list(doc.sents)
    svgs = "".join(f'<div class="tree">{displacy.render(parse_view(sent), style="dep", manual=True, minify=True, jupyter=False, options={"compact": True, "distance": 95, "font": "inherit"})}</div>'
                   for sent in sents[:MAX_TREES])
    more = (f'<p class="quiet">The first {MAX_TREES} of {len(sents)} sentences; the CoNLL-U download has them all.</p>'
            if len(sents) > MAX_TREES else "")
    return _section("parse", "Parse", f"{more}{svgs}")


def parse_view(sent: Any) -> dict[str, Any]:
    """displaCy's manual input for one sentence: every token with its UPOS and relation, as the
    CoNLL-U download writes them. (displaCy's own reading of a Doc merges punctuation into the
    word before it and shows the merged span's root tag: an AGDT comma heading a coordination
    turned ``ἐπρυτάνευε,`` into PUNCT.)"""
    start = sent.start
    words = [{"text": t.text, "tag": t.pos_} for t in sent]
    arcs = []
    for t in sent:
        if t.head.i == t.i or not sent.start <= t.head.i < sent.end:
            continue
        lo, hi = sorted((t.i - start, t.head.i - start))
        arcs.append({"start": lo, "end": hi, "label": t.dep_, "dir": "left" if t.i < t.head.i else "right"})
    return {"words": words, "arcs": arcs}


def _scansion(doc: Any) -> str:
    if not doc.has_extension("verses") or doc._.verses is None:
        return ""
    rows: list[str] = []
    prose = 0
    for verse in doc._.verses:
        meter, scan = verse._.meter, verse._.scansion
        if not meter or not meter.used or scan is None:  # no metre, or its gate rejected it: read as prose
            prose += 1
            continue
        if len(rows) < MAX_VERSES:
            rows.append(f'<tr><td lang="grc">{e(" | ".join(s.strip() for s in scan.syllables))}</td>'
                        f'<td class="pattern">{e(scan.pattern.translate(BREVE))}</td>'
                        f'<td>{e((meter.name or "").replace("_", " "))}</td><td>{meter.cost or 0.0:.2f}</td></tr>')
    if not rows:
        return _section("scansion", "Scansion", '<p class="quiet">No verse recognised: the text reads as prose.</p>')
    note = f'<p class="quiet">{prose} more line{"s" if prose != 1 else ""} read as prose.</p>' if prose else ""
    return _section("scansion", "Scansion",
                    "<table><tr><th>syllables</th><th>pattern</th><th>metre</th><th>cost (nats/syllable)</th></tr>"
                    f"{''.join(rows)}</table>{note}")


def _date(doc: Any) -> str:
    if not doc.has_extension("date") or doc._.date is None:
        return ""
    from ..date.render import date_svg

    labels = []
    for task in ("genre", "dialect"):
        value = getattr(doc._, task) if doc.has_extension(task) else None
        if value is not None:
            top = sorted(value.probabilities.items(), key=lambda kv: -kv[1])[:3]
            labels.append(f"<tr><th>{task}</th><td>{e(', '.join(f'{k} {p:.0%}' for k, p in top))}</td></tr>")
    table = f"<table class='labels'>{''.join(labels)}</table>" if labels else ""
    if not doc._.date.applicable:  # outside what the dater was fitted on: the reason, no histogram
        return _section("date", "Date", f'<p class="not-applicable" id="no-date"><b>{e(doc._.date)}</b></p>{table}')
    return _section("date", "Date", f"<p><b>{e(doc._.date)}</b></p>{date_svg(doc._.date, width=880)}{table}")


def _which(answer: Any) -> str:
    if answer is None:
        return ""
    lines = [f"<p>{e(note)}</p>" for note in answer.notes]
    if answer.model is not None and answer.model["checked"]:
        m = answer.model
        lines.append(f"<p>The model read {len(m['overlapping'])} of the {m['checked']} word 5-grams of this passage "
                     f"(each reported one may be a false positive, rate {m['fp_rate']:.3f}).</p>" if m["read"] else
                     f"<p>The model never read any of the {m['checked']} word 5-grams of this passage.</p>")
    if answer.folds is not None:
        folds = answer.folds["never_read"]
        never = [str(f["fold"]) for f in folds if f["claim"] == "never read"]
        lines.insert(0, f"<p><b>Never read by fold{'s' if len(never) > 1 else ''} {', '.join(never)}</b> "
                        "(the whole passage lies in its held-out text).</p>" if never else
                        "<p><b>No released fold is known never to have read the whole passage.</b></p>")
        items = "".join(f"<li>fold {f['fold']}: {e(f['claim'])} (held out as {f['as']}; "
                        f"{f['held_out_ngrams']}/{f['of']} 5-grams; p false {f['p_false']:.2g})</li>" for f in folds)
        lines.append(f"<ul class='folds'>{items}</ul>" if items
                     else "<p>No held-out zone of the ten released folds holds this passage: every fold may have read it.</p>")
    return _section("which", "Which released fold never read it", "".join(lines))


def _downloads(analysis: Analysis) -> str:
    names = {"epidoc": "EpiDoc", "conllu": "CoNLL-U", "json": "JSON"}
    links = "".join(f'<a class="download" id="download-{kind}" href="/download/{analysis.token}/{kind}" '
                    f'download="{e(item.filename)}">{names[kind]}</a>'
                    for kind, item in sorted(analysis.downloads.items(), key=lambda kv: list(names).index(kv[0])))
    perma = ""
    if analysis.epidoc is None:
        perma = f'<a class="permalink" id="permalink" href="/?text={quote(analysis.source)}">permalink</a>'
    return _section("downloads", "Downloads", f"<p>{links} {perma}</p>")
