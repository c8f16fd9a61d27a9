"""``stoicheia accentuate TEXT``: accents, breathings, word division, punctuation, capitals.

Leiden gaps in TEXT (``[.4]``, ``[---]``...) are kept as markup tokens; ``--restore``
also runs the encoder and ``stoicheia_restorer`` on the accentuated text and prints the
top restoration of every gap (and, with ``--json``, the candidates)."""

from __future__ import annotations

import json
from enum import StrEnum

import typer


class PlaneMode(StrEnum):
    """What to do with one plane of the input (see :mod:`stoicheia_spacy.accent.predict`)."""

    keep = "keep"
    copy = "copy"
    predict = "predict"
    drop = "drop"


class BoundaryMode(StrEnum):
    """What to do with word division: a plane mode, or ``auto`` (resolved per Doc)."""

    auto = "auto"
    keep = "keep"
    copy = "copy"
    predict = "predict"
    drop = "drop"


class Notation(StrEnum):
    """Gap markup read in the input."""

    leiden = "leiden"
    ddbdp = "ddbdp"
    epidoc = "epidoc"  # TEXT is an EpiDoc TEI file (path or XML): its edition, read as Leiden
    none = "none"


def accentuate_command(
    text: str = typer.Argument(..., help="Greek text, e.g. unaccented scriptio continua"),
    source: str = typer.Option(None, "--source", help="Backbone checkpoint: hub id, directory or embedded:NAME (default: the embedded model)"),
    boundary: BoundaryMode = typer.Option(BoundaryMode.auto, "--boundary",
                                          help="Word division (auto: divide scriptio continua, keep spaced text)"),
    diacritics: PlaneMode = typer.Option(PlaneMode.keep, "--diacritics", help="Accents and breathings"),
    punctuation: PlaneMode = typer.Option(PlaneMode.keep, "--punctuation", help="Punctuation"),
    capitals: PlaneMode = typer.Option(PlaneMode.predict, "--capitals", help="Capitals"),
    lowercase: bool = typer.Option(False, "--lowercase", help="Ignore the input's capitals"),
    notation: Notation = typer.Option(Notation.leiden, "--notation",
                                      help="Gap markup (epidoc: TEXT is an EpiDoc TEI file)"),
    restore: bool = typer.Option(False, "--restore", help="Also restore the gaps (encoder + restorer)"),
    as_json: bool = typer.Option(False, "--json", help="Print text, tokens and alignment as JSON"),
) -> None:
    """Print the accentuated, word-divided rendering of TEXT.

    Example: stoicheia accentuate "ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ" --boundary predict --diacritics predict
    """
    import spacy

    from ..accent.predict import PlaneControl
    from ..accent.segment import StoicheiaSegmenter
    from ..errors import StoicheiaError

    try:
        control = PlaneControl(boundary=boundary.value, diacritics=diacritics.value,
                               punctuation=punctuation.value, capitals=capitals.value, lowercase=lowercase)
        gaps = None if notation is Notation.none else notation.value
        if notation is Notation.epidoc:
            from ..leiden.epidoc import read_epidoc

            view = read_epidoc(text)
            if not view.text.strip():
                typer.echo(f"error: {view.message}", err=True)
                raise typer.Exit(1)
            text, gaps = view.text, "leiden"
        if restore:
            from ..assembly import build_pipeline
            from ..assets import default_model_dir
            from ..models import torch_backbone

            backbone = source or str(default_model_dir())
            nlp = build_pipeline(backbone, components=False)
            shared = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)  # type: ignore[attr-defined]
            nlp.tokenizer = StoicheiaSegmenter(nlp.vocab, model_source=backbone, model=shared, control=control,
                                               notation=gaps)  # one backbone for tokenizer and pipes
            nlp.add_pipe("stoicheia_restorer", config={"settings": {"notation": gaps or "leiden"}})
            doc = nlp(text)
        else:
            doc = StoicheiaSegmenter(spacy.blank("grc").vocab, model_source=source, control=control,
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
