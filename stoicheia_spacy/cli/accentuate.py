"""``stoicheia accentuate TEXT``: accents, breathings, word division, punctuation, capitals.

Leiden gaps in TEXT (``[.4]``, ``[---]``...) are kept as markup tokens; ``--restore``
also runs the encoder and ``stoicheia_restorer`` on the accentuated text and prints the
top restoration of every gap (and, with ``--format json``, the candidates)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from .options import (
    Unit,
    deprecated_json,
    deprecated_model,
    fail,
    flag,
    friendly,
    json_option,
    load,
    model_option,
    output_option,
    read_input,
    source_option,
    text_argument,
    unit_option,
    write_output,
)

MODES = "keep|copy|predict|drop"


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


class AccentFormat(StrEnum):
    """What ``stoicheia accentuate`` writes."""

    text = "text"
    json = "json"


@friendly
def accentuate_command(
    text: str = text_argument("ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ"),
    model: str = model_option(),
    output_format: AccentFormat = typer.Option(AccentFormat.text, "--format", metavar="text|json",
                                               help="text: the accentuated text; json: text, tokens and alignment"),
    unit: Unit = unit_option(Unit.file),
    output: Path = output_option(),
    boundary: BoundaryMode = typer.Option(BoundaryMode.auto, "--boundary", metavar="auto|keep|copy|predict|drop",
                                          help="Word division (auto: divide scriptio continua, keep spaced text)"),
    diacritics: PlaneMode = typer.Option(PlaneMode.keep, "--diacritics", metavar=MODES, help="Accents and breathings"),
    punctuation: PlaneMode = typer.Option(PlaneMode.keep, "--punctuation", metavar=MODES, help="Punctuation"),
    capitals: PlaneMode = typer.Option(PlaneMode.predict, "--capitals", metavar=MODES, help="Capitals"),
    lowercase: bool = flag("--lowercase", "Ignore the input's capitals"),
    notation: Notation = typer.Option(Notation.leiden, "--notation", metavar="leiden|ddbdp|epidoc|none",
                                      help="Gap markup (epidoc: TEXT_OR_FILE is an EpiDoc TEI file)"),
    restore: bool = flag("--restore", "Also restore the gaps (encoder + restorer)"),
    source: str = source_option(),
    as_json: bool = json_option(),
) -> None:
    """Print the accentuated, word-divided rendering of TEXT_OR_FILE.

    Loads the encoder (and, with --restore, the restorer) only; the accentuation runs on
    the encoder's backbone as the tokenizer stoicheia.Segmenter.v1.

    Example: stoicheia accentuate "ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ" --boundary predict --diacritics predict
    """
    from ..accent.predict import PlaneControl
    from ..accent.segment import StoicheiaSegmenter
    from ..encoder.model import torch_backbone

    fmt = deprecated_json(output_format.value, as_json)
    gaps = None if notation is Notation.none else notation.value
    if notation is Notation.epidoc:
        from ..leiden.epidoc import read_epidoc

        view = read_epidoc(text)
        if not view.text.strip():
            raise fail(str(view.message))
        texts, gaps = [view.text], "leiden"
    else:
        texts = read_input(text, unit)
    control = PlaneControl(boundary=boundary.value, diacritics=diacritics.value,
                           punctuation=punctuation.value, capitals=capitals.value, lowercase=lowercase)
    nlp = load("accentuate", deprecated_model(model, source), extra=["stoicheia_restorer"] if restore else ())
    shared = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    nlp.tokenizer = StoicheiaSegmenter(nlp.vocab, model=shared, control=control,
                                       notation=gaps)  # one backbone for tokenizer and pipes
    if restore:
        restorer: Any = nlp.get_pipe("stoicheia_restorer")
        restorer.configure(notation=gaps or "leiden")
        docs = [nlp(t) for t in texts]
    else:
        docs = [nlp.make_doc(t) for t in texts]
    lines = []
    for source_text, doc in zip(texts, docs, strict=True):
        if fmt == "json":
            out = {"source": source_text, "text": doc.text, "tokens": [t.text for t in doc],
                   **doc._.source_alignment.to_dict()}
            if restore:
                out["restored"] = doc._.restored
                out["restorations"] = [r.to_dict() for r in doc._.restorations]
            lines.append(json.dumps(out, ensure_ascii=False))
        else:
            lines.append(doc._.restored if restore else doc.text)
    write_output("\n".join(lines) + "\n", output)
