"""``stoicheia date TEXT``: the estimated date of a Greek document with its 90 % interval.

Runs the encoder and ``stoicheia_dater`` (weights: the PaDoC fit shipped with the default model, or ``--weights``);
``--html`` also writes :func:`stoicheia_spacy.date_render.render_date_html` of the Doc."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def date_command(
    text: str = typer.Argument(..., help="Greek text, e.g. a documentary papyrus"),
    source: str = typer.Option(None, "--source", help="Backbone checkpoint: hub id, directory or embedded:NAME (default: embedded model)"),
    weights: Path = typer.Option(None, "--weights", help="A stoicheia_dater folder (default: the PaDoC fit shipped with the default model)"),
    as_json: bool = typer.Option(False, "--json", help="Print mean, interval and histogram as JSON"),
    html_out: Path = typer.Option(None, "--html", help="Also write the histogram and interval as an HTML/SVG page here"),
) -> None:
    """Print the estimated date of TEXT and its 90 % interval.

    Example: stoicheia date "Ἀρίστων Ζήνωνι χαίρειν. ἔρρωσο. ἔτους η, Μεχεὶρ θ."
    """
    from ..assembly import build_pipeline
    from ..errors import StoicheiaError
    from ..pipeline.dater import add_dater

    try:
        from ..assets import default_model_dir

        nlp = build_pipeline(source or str(default_model_dir()), components=False)
        add_dater(nlp, weights)
        doc = nlp(text)
        estimate = doc._.date
    except StoicheiaError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from err
    if estimate is None:
        typer.echo("error: the text has no Greek letters to date", err=True)
        raise typer.Exit(1)
    typer.echo(json.dumps(estimate.to_dict()) if as_json else str(estimate))
    if html_out is not None:
        from ..date_render import render_date_html

        render_date_html(doc, path=html_out)
