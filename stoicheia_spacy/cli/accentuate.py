"""``stoicheia accentuate TEXT``: accents, breathings, word division, punctuation, capitals.

Leiden gaps in TEXT (``[.4]``, ``[---]``...) are kept as markup tokens; ``--restore``
also runs the encoder and ``stoicheia_restorer`` on the accentuated text and prints the
top restoration of every gap (and, with ``--json``, the candidates)."""

from __future__ import annotations

import json

import typer

from .app import app

_MODES = "keep | copy | predict | drop"


@app.command("accentuate")
def accentuate_command(
    text: str = typer.Argument(..., help="Greek text, e.g. unaccented scriptio continua"),
    model: str = typer.Option(None, "--model", help="Backbone directory or hub id (default: embedded model)"),
    boundary: str = typer.Option("auto", "--boundary",
                                 help=f"Word division: auto (divide scriptio continua, keep spaced text) | {_MODES}"),
    diacritics: str = typer.Option("keep", "--diacritics", help=f"Accents/breathings: {_MODES}"),
    punctuation: str = typer.Option("keep", "--punctuation", help=f"Punctuation: {_MODES}"),
    capitals: str = typer.Option("predict", "--capitals", help=f"Capitals: {_MODES}"),
    lowercase: bool = typer.Option(False, "--lowercase", help="Ignore the input's capitals"),
    notation: str = typer.Option("leiden", "--notation", help="Gap markup: leiden | ddbdp | none"),
    restore: bool = typer.Option(False, "--restore", help="Also restore the gaps (encoder + restorer)"),
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
        gaps = None if notation == "none" else notation
        if restore:
            from ..assets import default_model_dir
            from ..pipeline import restorer  # noqa: F401  (registers the factory)
            from .package import build_pipeline

            source = model or str(default_model_dir())
            from ..models import torch_backbone

            nlp = build_pipeline(source, components=False)
            shared = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)  # type: ignore[attr-defined]
            nlp.tokenizer = StoicheiaSegmenter(nlp.vocab, model_source=source, model=shared, control=control,
                                               notation=gaps)  # one backbone for tokenizer and pipes
            nlp.add_pipe("stoicheia_restorer", config={"notation": gaps or "leiden"})
            doc = nlp(text)
        else:
            doc = StoicheiaSegmenter(spacy.blank("grc").vocab, model_source=model, control=control,
                                     notation=gaps)(text)
    except StoicheiaError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from err
    if as_json:
        out = {"source": text, "text": doc.text, "tokens": [t.text for t in doc],
               **doc._.source_alignment.to_dict()}
        if restore:
            out["restored"] = doc._.restored
            out["restorations"] = doc._.restorations
        typer.echo(json.dumps(out, ensure_ascii=False))
    else:
        typer.echo(doc._.restored if restore else doc.text)
