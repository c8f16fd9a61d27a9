"""``stoicheia restore TEXT``: restore the Leiden gaps of a text and print the candidates."""

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
    fmt: RestoreFormat = typer.Option(RestoreFormat.text, "--format", help="text (tables) or json (per gap: candidates as {text, score})"),
    scoring: Scoring = typer.Option(None, "--scoring", help="beam (ours) or protocol (the paper's strict protocol); default: the pipeline's"),
    region: str = typer.Option(None, "--region", help="Region of the inscription (restoration fine-tunes), e.g. Attica"),
    century: str = typer.Option(None, "--century", help="Date of the inscription as a year (negative = BC), e.g. -350"),
) -> None:
    """Restore the gaps of TEXT and print the ranked candidates of each gap.

    Example: stoicheia restore "ἔδοξεν τῆι βουλῆι [---] δήμωι" --top 5 --html out.html

    --format json prints one object per gap: {"gap", "start", "end", "markup", "candidates":
    [{"text", "score"}, ...]}, score = the protocol's length-normalised log-probability
    under --scoring protocol (the default of a packaged released restoration checkpoint),
    else our beam's log-probability.
    """
    from ..assembly import restorer_pipeline
    from ..errors import StoicheiaError

    msg = Printer()
    nlp = restorer_pipeline(model, beam_width=beam, n_candidates=max(top, 1))
    restorer: Any = nlp.get_pipe("stoicheia_restorer")
    restorer.cfg["strip_restorations"] = strip
    if scoring is not None:
        restorer.cfg["scoring"] = scoring.value
    try:
        doc = nlp.make_doc(text)
        doc._.region, doc._.century = region, century  # reach e_region / e_century (unknown when unset)
        for name, proc in nlp.pipeline:  # the encoder's single parse: planes + gaps
            if name != "stoicheia_restorer":
                doc = proc(doc)
        error = doc._.stoicheia.markup_error if doc._.stoicheia is not None else None
        if error is not None:  # read as plain text: nothing to restore
            msg.fail(f"LeidenSyntaxError: {error}", exits=1)
        only = None
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
