"""``stoicheia restore TEXT``: restore the Leiden gaps of a text and print the candidates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from wasabi import Printer


def restore_command(
    text: str = typer.Argument(..., help="Greek text with Leiden gaps, e.g. 'ἔδοξεν τῆι βουλῆι [---] δήμωι'"),
    model: str = typer.Option(None, "--model", help="Pipeline: installed package or directory (default: grc_stoicheia_doc_clean, else the restoration preset)"),
    top: int = typer.Option(10, "--top", help="How many candidates to print per gap"),
    beam: int = typer.Option(20, "--beam", help="Beam width"),
    strip: bool = typer.Option(False, "--strip-restorations", help="Treat editorial restorations [αβγ] as gaps too"),
    html_out: Path = typer.Option(None, "--html", help="Also write an HTML rendering here"),
    gap: list[int] = typer.Option(None, "--gap", help="Restore only gap N (1-based, text order; repeatable); "
                                  "the other lacunae stay unknown letters in the context"),
) -> None:
    """Restore the gaps of TEXT and print the ranked candidates of each gap.

    Example: stoicheia restore "ἔδοξεν τῆι βουλῆι [---] δήμωι" --top 5 --html out.html
    """
    from ..assembly import restorer_pipeline
    from ..errors import StoicheiaError

    msg = Printer()
    nlp = restorer_pipeline(model, beam_width=beam, n_candidates=max(top, 1))
    restorer: Any = nlp.get_pipe("stoicheia_restorer")
    restorer.cfg["strip_restorations"] = strip
    try:
        doc = nlp(text, disable=["stoicheia_restorer"])  # the encoder's single parse: planes + gaps
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
