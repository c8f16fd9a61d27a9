"""``stoicheia restore TEXT_OR_FILE``: restore the Leiden gaps of a text and print the candidates.

Loads the encoder and ``stoicheia_restorer`` only (:func:`.loading.load_for`).
``--format json`` prints, per Doc, one line: the list of its gaps, each ``{"gap", "start",
"end", "markup", "status", "candidates": [{"text", "score"}, ...]}``; score = the
protocol's length-normalised log-probability under ``--scoring protocol`` (the default of
a packaged released restoration checkpoint), else our beam's log-probability.
``--region``/``--century`` reach a restoration fine-tune's ``e_region``/``e_century``.
``--parallels N`` lists up to N attested parallels of each shown candidate (the restorer's
parallels service, :mod:`stoicheia_spacy.restore.parallels`; JSON: each candidate's
``parallels``).

TEXT_OR_FILE may also be an EpiDoc TEI file (``FILE.xml``): its edition is read as Leiden
text (:func:`stoicheia_spacy.leiden.read_epidoc`) and its lost gaps are restored; with
``--format epidoc`` the restored file is written (``-o OUT``, else standard output) with
every other byte unchanged."""

from __future__ import annotations

import json
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from wasabi import Printer

from .options import (
    Unit,
    chosen_format,
    deprecated_model,
    fail,
    flag,
    format_option,
    given,
    input_file,
    json_option,
    load,
    model_option,
    output_option,
    printer,
    read_input,
    source_option,
    text_argument,
    unit_option,
    write_output,
)

#: The restorer's pipe name (its settings are passed as ``component_cfg`` under it).
RESTORER = "stoicheia_restorer"


class RestoreFormat(StrEnum):
    """What ``stoicheia restore`` writes."""

    text = "text"
    json = "json"
    epidoc = "epidoc"


class Scoring(StrEnum):
    """How the restorer scores candidates."""

    beam = "beam"
    protocol = "protocol"


def gaps_json(doc: Any, top: int, parallels: bool = False) -> list[dict[str, Any]]:
    """The ``--format json`` list of one Doc's gaps (module doc); with ``parallels``, each
    candidate's ``parallels`` (``Parallel.to_dict()``)."""
    return [{"gap": number, "start": item.start, "end": item.end,
             "markup": doc.text[item.start:item.end], "status": item.status,
             "confident": item.confident, "confidence": float(item.confidence),
             "candidates": [{"text": cand.text, "score": float(cand.score),
                             **({"accented": cand.accented} if cand.accented is not None else {}),
                             **({"parallels": [p.to_dict() for p in cand.parallels]} if parallels else {})}
                            for cand in item.candidates[:top]]}
            for number, item in enumerate(doc._.restorations, start=1)]


def _parallels(item: Any, top: int) -> None:
    """The attested parallels of each shown candidate that has any."""
    for cand in item.candidates[:top]:
        if not cand.parallels:
            continue
        typer.echo(f"parallels of {cand.text}:")
        for par in cand.parallels:
            where = par.id + (f", l. {par.line}" if par.line is not None else "")
            note = "" if par.exact else " (one letter differs)"
            if par.supplied:
                note += " (rests on the editor's supplement)"
            typer.echo(f"  {where}: {par.marked}{note}" + (f"  {par.url}" if par.url else ""))


def _candidates(doc: Any, restorer: Any, top: int, msg: Printer) -> None:
    print(doc._.restored)
    for number, item in enumerate(doc._.restorations, start=1):
        msg.divider(f"gap {number}: {doc.text[item.start:item.end]}")
        if item.status == "too_wide":
            msg.warn(f"not restored: too wide (more than {restorer.cfg['max_width']} characters)")
            continue
        shown = item.candidates[:top]
        rows: list[tuple[Any, ...]] = [(rank, cand.text, f"{cand.share:.3f}", f"{cand.score:.2f}")
                                       for rank, cand in enumerate(shown, start=1)]
        header: tuple[str, ...] = ("#", "candidate", "p", "log p")
        if any(cand.accented is not None for cand in item.candidates):
            rows = [(row[0], row[1], cand.accented or "", *row[2:]) for cand, row in zip(shown, rows, strict=True)]
            header = ("#", "candidate", "accented", "p", "log p")
        msg.table(rows, header=header, divider=True)
        _parallels(item, top)
        confidence = float(item.confidence)  # the top candidate's calibrated chance of being right
        threshold = float(restorer.cfg["confident_above"])
        if item.confident:
            msg.good(f"confident: {confidence:.0%} that the top candidate is right (>= {threshold:.0%})")
        else:
            msg.warn(f"not confident: {confidence:.0%} that the top candidate is right (< {threshold:.0%}, "
                     "fitted for 90 % precision on dev gaps)")


def restore_command(
    text: str = text_argument("ἔδοξεν τῆι βουλῆι [---] δήμωι"),
    model: str = model_option(),
    fmt: RestoreFormat = format_option(RestoreFormat.text, "text|json|epidoc",
                                       "text: the restored text and a table per gap; json: per Doc, a line "
                                       "with its gaps and their candidates {text, score}; epidoc: TEXT_OR_FILE "
                                       "is an EpiDoc file, written back with the restorations"),
    as_json: bool = json_option(),
    unit: Unit = unit_option(),
    output: Path = output_option(),
    top: int = typer.Option(10, "--top", metavar="N", help="How many candidates to print per gap"),
    beam: int = typer.Option(None, "--beam", metavar="N", help="Beam width (default: the pipeline's beam_width)"),
    strip: bool = flag("--strip-restorations", "Treat editorial restorations [αβγ] as gaps too"),
    html_out: Path = typer.Option(None, "--html", metavar="FILE", help="Also write an HTML rendering here"),
    gap: list[int] = typer.Option(None, "--gap", metavar="N", help="Restore only gap N (1-based, text order; repeatable); "
                                  "the other lacunae stay unknown letters in the context"),
    scoring: Scoring = typer.Option(None, "--scoring", metavar="beam|protocol",
                                    help="beam (ours) or protocol (the paper's strict protocol); default: the pipeline's"),
    region: str = typer.Option(None, "--region", metavar="REGION",
                               help="Region of the inscription (restoration fine-tunes), e.g. Attica"),
    century: str = typer.Option(None, "--century", metavar="YEAR",
                                help="Date of the inscription as a year (negative = BC), e.g. -350"),
    source: str = source_option(),
    lm: Path = typer.Option(None, "--lm", metavar="FILE",
                            help="Fuse a character n-gram LM (.npz, `make restore-lm`) into the beam"),
    lm_weight: float = typer.Option(None, "--lm-weight", metavar="W", help="Its weight (default: the restorer's lm_weight)"),
    parallels: int = typer.Option(None, "--parallels", metavar="N",
                                  help="List up to N attested parallels per candidate from other documents of "
                                       "the open corpus (the parallels index of the lexicon data package)"),
    accent: bool = flag("--accent", "Also show each candidate with accents and word division, as the accentuator "
                        "renders it in context (loads the accentuator and its lexicon; with --format epidoc the "
                        "supplied letters are written so)"),
) -> None:
    """Restore the gaps of TEXT_OR_FILE and print the ranked candidates of each gap.

    Example: stoicheia restore "ἔδοξεν τῆι βουλῆι [---] δήμωι" --top 5 --html out.html;
    stoicheia restore p.oxy.1.119.xml --format epidoc -o restored.xml
    """
    output_format = RestoreFormat(chosen_format(fmt, as_json))
    if top < 1 or (beam is not None and beam < 1):
        raise fail("--top and --beam must be at least 1")
    if parallels is not None and parallels < 0:
        raise fail("--parallels must be at least 0")
    pipeline = deprecated_model(model, source)
    # the restorer's settings given on the command line; the others stay the pipeline's
    changes = given(beam_width=beam, scoring=None if scoring is None else scoring.value,
                    lm=None if lm is None else str(lm), lm_weight=lm_weight, strip_restorations=strip or None)
    lost: list[int] | None = None
    if output_format is RestoreFormat.epidoc or _is_xml_file(text):
        from ..leiden.epidoc import read_epidoc

        view = read_epidoc(Path(text), supplied="gap" if strip else "text")
        if view.message is not None:
            typer.echo(f"{text}: {view.message}", err=True)
        if output_format is RestoreFormat.epidoc:
            if gap:
                raise fail("--gap is not available with --format epidoc (every lost gap is restored)")
            changes.pop("strip_restorations", None)  # the file's <supplied> are read by `supplied`
            _write_epidoc(Path(text), output, pipeline, changes, top, strip, view.message is None, accent=accent)
            return
        if view.message is not None and not view.text.strip():
            return
        texts = [view.text]
        strip = False  # the evaluation view is already in the text
        changes.pop("strip_restorations", None)
        lost = list(view.restorable)  # illegible letters and lost lines stay context
    else:
        texts = read_input(text, unit)
    msg = printer(no_print=output_format is not RestoreFormat.text)
    nlp = load("restore", pipeline, extra=["stoicheia_accentuator"] if accent else [])
    restorer: Any = nlp.get_pipe(RESTORER)
    if top > restorer.settings.n_candidates:  # probabilities are normalised over the candidates returned
        changes["n_candidates"] = top
    if accent and restorer.accenter is not None:  # the restorer's accenting service: the top candidates
        restorer.accenter = replace(restorer.accenter, top=top)
    if parallels is not None:  # the restorer's parallels service: N per shown candidate
        from ..restore.parallels import CandidateParallels

        service = restorer.parallels or CandidateParallels()
        restorer.parallels = replace(service, top=parallels, candidates=max(top, service.candidates))
        if parallels:
            restorer.parallels.index()  # a missing index: one error line before any decoding
    docs = restore_docs(nlp, texts, changes, gap=gap, strip=strip, region=region, century=century, lost=lost)
    if not any(doc._.restorations for doc in docs):
        msg.warn("No gaps found (write them in Leiden notation: [---], [.3], [ca. 5], [5±2])")
    if output_format is RestoreFormat.json:
        lines = [json.dumps(gaps_json(doc, top, bool(parallels)), ensure_ascii=False) for doc in docs]
        write_output("\n".join(lines) + "\n", output)
    elif output is not None:
        write_output("".join(f"{doc._.restored}\n" for doc in docs), output)
    else:
        for doc in docs:
            if doc._.restorations:
                _candidates(doc, restorer, top, msg)
    if html_out is not None:
        from ..restore.render import render_html

        render_html(docs if len(docs) > 1 else docs[0], path=html_out)
        msg.good(f"HTML written to {html_out}")


def restore_docs(nlp: Any, texts: list[str], changes: dict[str, Any], *, gap: list[int] | None = None,
                 strip: bool = False, region: str | None = None, century: str | None = None,
                 lost: list[int] | None = None) -> list[Any]:
    """The restored Docs of ``texts``: one ``nlp.pipe`` over the encoder and the restorer, with
    ``changes`` as the restorer's ``component_cfg`` (and, per Doc, the gaps to restore: ``--gap``
    numbers or the ``lost`` gap indices); the accentuator, when loaded, runs later."""
    from ..leiden import parse_gaps
    from ..restore.select import target_indices

    restorer: Any = nlp.get_pipe(RESTORER)
    docs = []
    for text in texts:
        doc = nlp.make_doc(text)
        doc._.region, doc._.century = region, century  # reach e_region / e_century (unknown when unset)
        docs.append(doc)
    onlys: list[list[int] | None] = [lost if lost is not None and not gap else None] * len(docs)
    if gap:
        onlys = []
        for text in texts:  # the gap numbers of the text as the restorer reads it
            targets = target_indices(parse_gaps(text, notation=restorer.cfg["notation"], strip_restorations=strip))
            bad = [n for n in gap if not 1 <= n <= len(targets)]
            if bad:
                raise fail(f"--gap {bad[0]}: the text has {len(targets)} gap(s) to restore")
            onlys.append([targets[n - 1] for n in gap])
    later = [name for name in ("stoicheia_accentuator",) if name in nlp.pipe_names]  # accents: after restoring
    if all(only is None for only in onlys):
        out = list(nlp.pipe(docs, disable=later, component_cfg={RESTORER: changes}))
    else:
        out = [next(iter(nlp.pipe([doc], disable=later, component_cfg={RESTORER: {**changes, "restore_only": only}})))
               for doc, only in zip(docs, onlys, strict=True)]
    for doc in out:
        error = doc._.stoicheia.markup_error if doc._.stoicheia is not None else None
        if error is not None:  # read as plain text: nothing was restored
            raise fail(f"LeidenSyntaxError: {error}")
    return out


def _is_xml_file(text: str) -> bool:
    """TEXT_OR_FILE names an existing ``.xml`` file (read as EpiDoc)."""
    path = input_file(text)
    return path is not None and path.suffix.lower() == ".xml"


def _write_epidoc(path: Path, out: Path | None, model: str | None, changes: dict[str, Any], top: int,
                  strip: bool, restore: bool, *, accent: bool = False) -> None:
    """Restore the lost gaps of the EpiDoc file ``path`` and write it to ``out`` (or stdout);
    ``accent``: the supplied letters are written with the accents and breathings the
    accentuator gives them in context."""
    import sys

    from ..restore.epidoc import restore_epidoc

    if restore:
        nlp = load("restore", model, extra=["stoicheia_accentuator"] if accent else [])
        restorer: Any = nlp.get_pipe(RESTORER)
        if accent and restorer.accenter is not None:  # the candidates written get their accents
            restorer.accenter = replace(restorer.accenter, top=max(top, 1))
        if top > restorer.settings.n_candidates:
            changes = {**changes, "n_candidates": top}
        data = restore_epidoc(nlp, path, supplied="gap" if strip else "text", top=max(top, 1), settings=changes)
    else:  # passes through: the file as it is
        data = path.read_bytes()
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        out.write_bytes(data)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror}") from exc
    typer.echo(f"EpiDoc written to {out}", err=True)
