"""``stoicheia accentuate TEXT``: accents, breathings, word division, punctuation, capitals."""

from __future__ import annotations

import json

import typer

from .app import app

_MODES = "keep | copy | predict | drop"


@app.command("accentuate")
def accentuate_command(
    text: str = typer.Argument(..., help="Greek text, e.g. unaccented scriptio continua"),
    model: str = typer.Option(None, "--model", help="Backbone directory or hub id (default: embedded model)"),
    boundary: str = typer.Option("keep", "--boundary", help=f"Word division: {_MODES}"),
    diacritics: str = typer.Option("keep", "--diacritics", help=f"Accents/breathings: {_MODES}"),
    punctuation: str = typer.Option("keep", "--punctuation", help=f"Punctuation: {_MODES}"),
    capitals: str = typer.Option("predict", "--capitals", help=f"Capitals: {_MODES}"),
    lowercase: bool = typer.Option(False, "--lowercase", help="Ignore the input's capitals"),
    as_json: bool = typer.Option(False, "--json", help="Print text, tokens and alignment as JSON"),
) -> None:
    """Print the accentuated, word-divided rendering of TEXT."""
    import spacy

    from ..accent.predict import PlaneControl
    from ..accent.segment import StoicheiaSegmenter
    from ..errors import StoicheiaError

    try:
        control = PlaneControl(boundary=boundary, diacritics=diacritics, punctuation=punctuation,
                               capitals=capitals, lowercase=lowercase)
        seg = StoicheiaSegmenter(spacy.blank("grc").vocab, model_source=model, control=control)
        doc = seg(text)
    except StoicheiaError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from err
    if as_json:
        typer.echo(json.dumps({"source": text, "text": doc.text, "tokens": [t.text for t in doc],
                               **doc._.source_alignment.to_dict()}, ensure_ascii=False))
    else:
        typer.echo(doc.text)
