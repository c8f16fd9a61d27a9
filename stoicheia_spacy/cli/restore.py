"""``stoicheia restore TEXT``: restore the Leiden gaps of a text and print the candidates.

TEXT may also be an EpiDoc TEI file (``FILE.xml``): its edition is read as Leiden text
(:func:`stoicheia_spacy.leiden.read_epidoc`) and its lost gaps are restored; with ``--format
epidoc`` the restored file is written (``-o OUT``, else standard output) with every other byte
unchanged."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from wasabi import Printer


class RestoreFormat(StrEnum):
    """What ``stoicheia restore`` prints."""

    text = "text"
    json = "json"
    epidoc = "epidoc"


class Scoring(StrEnum):
    """How the restorer scores candidates."""

    beam = "beam"
    protocol = "protocol"



def restore_command(
    text: str = typer.Argument(..., help="Greek text with Leiden gaps, e.g. 'ἔδοξεν τῆι βουλῆι [---] δήμωι'"),
    model: str = typer.Option(None, "--model", help="Pipeline: installed package or directory (default: grc_stoicheia_doc_clean, else the restoration preset)"),
    top: int = typer.Option(10, "--top", help="How many candidates to print per gap"),
    beam: int = typer.Option(20, "--beam", help="Beam width"),
    strip: bool = typer.Option(False, "--strip-restorations", help="Treat editorial restorations [αβγ] as gaps too"),
    html_out: Path = typer.Option(None, "--html", help="Also write an HTML rendering here"),
    gap: list[int] = typer.Option(None, "--gap", help="Restore only gap N (1-based, text order; repeatable); "
                                  "the other lacunae stay unknown letters in the context"),
    fmt: RestoreFormat = typer.Option(RestoreFormat.text, "--format", help="text (tables), json (per gap: candidates as {text, score}) "
                                      "or epidoc (TEXT is an EpiDoc file: write it back with the restorations)"),
    out: Path = typer.Option(None, "--out", "-o", help="--format epidoc: write the restored file here (default: standard output)"),
    scoring: Scoring = typer.Option(None, "--scoring", help="beam (ours) or protocol (the paper's strict protocol); default: the pipeline's"),
    region: str = typer.Option(None, "--region", help="Region of the inscription (restoration fine-tunes), e.g. Attica"),
    century: str = typer.Option(None, "--century", help="Date of the inscription as a year (negative = BC), e.g. -350"),
) -> None:
    """Restore the gaps of TEXT and print the ranked candidates of each gap.

    Example: stoicheia restore "ἔδοξεν τῆι βουλῆι [---] δήμωι" --top 5 --html out.html;
    stoicheia restore p.oxy.1.119.xml --format epidoc -o restored.xml

    --format json prints one object per gap: {"gap", "start", "end", "markup", "candidates":
    [{"text", "score"}, ...]}, score = the protocol's length-normalised log-probability
    under --scoring protocol (the default of a packaged released restoration checkpoint),
    else our beam's log-probability.
    """
    from ..assembly import restorer_pipeline
    from ..errors import StoicheiaError

    msg = Printer()
    lost: list[int] | None = None
    if fmt is RestoreFormat.epidoc or _is_xml_file(text):
        from ..leiden.epidoc import read_epidoc

        try:
            view = read_epidoc(Path(text), supplied="gap" if strip else "text")
        except StoicheiaError as exc:
            msg.fail(f"{type(exc).__name__}: {exc}", exits=1)
        if view.message is not None:
            typer.echo(f"{text}: {view.message}", err=True)
        if fmt is RestoreFormat.epidoc:
            if gap:
                msg.fail("--gap is not available with --format epidoc (every lost gap is restored)", exits=1)
            _write_epidoc(Path(text), out, model, beam, top, strip, view.message is None, scoring)
            return
        if view.message is not None and not view.text.strip():
            return
        text = view.text
        strip = False  # the evaluation view is already in the text
        lost = list(view.restorable)  # illegible letters and lost lines stay context
    nlp = restorer_pipeline(model, beam_width=beam, n_candidates=max(top, 1))
    restorer: Any = nlp.get_pipe("stoicheia_restorer")
    restorer.configure(strip_restorations=strip)
    if scoring is not None:
        restorer.configure(scoring=scoring.value)
    try:
        doc = nlp.make_doc(text)
        doc._.region, doc._.century = region, century  # reach e_region / e_century (unknown when unset)
        for name, proc in nlp.pipeline:  # the encoder's single parse: planes + gaps
            if name != "stoicheia_restorer":
                doc = proc(doc)
        error = doc._.stoicheia.markup_error if doc._.stoicheia is not None else None
        if error is not None:  # read as plain text: nothing to restore
            msg.fail(f"LeidenSyntaxError: {error}", exits=1)
        only = lost if lost is not None and not gap else None
        if gap:
            from ..restore.select import target_indices, target_runs

            if strip:  # the evaluation view: editorial restorations are gaps too
                from ..leiden import parse_gaps

                targets = target_indices(parse_gaps(text, notation=restorer.cfg["notation"], strip_restorations=True))
            else:
                targets = target_runs(doc._.stoicheia.gaps)
            bad = [n for n in gap if not 1 <= n <= len(targets)]
            if bad:
                msg.fail(f"--gap {bad[0]}: the text has {len(targets)} gap(s) to restore", exits=1)
            only = [targets[n - 1] for n in gap]
        doc = restorer(doc, restore_only=only)
    except StoicheiaError as exc:
        msg.fail(f"{type(exc).__name__}: {exc}", exits=1)
    if fmt is RestoreFormat.json:
        import json

        gaps = [{"gap": number, "start": item["start"], "end": item["end"],
                 "markup": doc.text[item["start"]:item["end"]], "status": item.get("status", "restored"),
                 "candidates": [{"text": cand, "score": float(score)} for cand, score, _ in item["candidates"][:top]]}
                for number, item in enumerate(doc._.restorations, start=1)]
        print(json.dumps(gaps, ensure_ascii=False))
        return
    if not doc._.restorations:
        msg.warn("No gaps found (write them in Leiden notation: [---], [.3], [ca. 5], [5±2])")
        return
    print(doc._.restored)
    for number, item in enumerate(doc._.restorations, start=1):
        msg.divider(f"gap {number}: {doc.text[item['start']:item['end']]}")
        if item.get("status") == "too_wide":
            msg.warn(f"not restored: too wide (more than {restorer.cfg['max_width']} characters)")
            continue
        rows = [(rank, cand, f"{prob:.3f}", f"{lp:.2f}")
                for rank, (cand, lp, prob) in enumerate(item["candidates"][:top], start=1)]
        msg.table(rows, header=("#", "candidate", "p", "log p"), divider=True)
    if html_out is not None:
        from ..restore.render import render_html

        render_html(doc, path=html_out)
        msg.good(f"HTML written to {html_out}")


def _is_xml_file(text: str) -> bool:
    """TEXT names an existing ``.xml`` file (read as EpiDoc)."""
    if len(text) > 4096 or "\n" in text or not text.lower().endswith(".xml"):
        return False
    try:
        return Path(text).is_file()
    except OSError:
        return False


def _write_epidoc(path: Path, out: Path | None, model: str | None, beam: int, top: int, strip: bool,
                  restore: bool, scoring: Scoring | None) -> None:
    """Restore the lost gaps of the EpiDoc file ``path`` and write it to ``out`` (or stdout)."""
    import sys

    from ..errors import StoicheiaError
    from ..leiden.epidoc import restore_epidoc

    try:
        if restore:
            from ..assembly import restorer_pipeline

            nlp = restorer_pipeline(model, beam_width=beam, n_candidates=max(top, 1))
            if scoring is not None:
                nlp.get_pipe("stoicheia_restorer").cfg["scoring"] = scoring.value  # type: ignore[attr-defined]
            data = restore_epidoc(nlp, path, supplied="gap" if strip else "text", top=max(top, 1))
        else:  # passes through: the file as it is
            data = path.read_bytes()
    except (StoicheiaError, OSError) as exc:
        typer.echo(f"{type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(1) from exc
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        out.write_bytes(data)
    except OSError as exc:
        typer.echo(f"cannot write {out}: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"EpiDoc written to {out}", err=True)
