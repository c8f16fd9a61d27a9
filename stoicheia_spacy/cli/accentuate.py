"""``stoicheia accentuate TEXT``: accents, breathings, word division, punctuation, capitals.

Leiden gaps in TEXT (``[.4]``, ``[---]``...) are kept as markup tokens; ``--restore``
also runs the encoder and ``stoicheia_restorer`` on the accentuated text and prints the
top restoration of every gap (and, with ``--format json``, the candidates)."""

from __future__ import annotations

import json
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from ..accent.predict import PlaneControl
from ..encoder.model import torch_backbone
from ..leiden.epidoc import read_epidoc
from .options import (
    Unit,
    chosen_format,
    deprecated_model,
    fail,
    format_option,
    given,
    json_option,
    load,
    model_option,
    output_option,
    read_input,
    require_greek,
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


def accent_json(source: str, doc: Any, restore: bool) -> dict[str, Any]:
    """The ``--format json`` object of one Doc: source, text, tokens, alignment (and restorations)."""
    out = {"source": source, "text": doc.text, "tokens": [t.text for t in doc], **doc._.source_alignment.to_dict()}
    if restore:
        out["restored"] = doc._.restored
        out["restorations"] = [r.to_dict() for r in doc._.restorations]
    return out


def accentuate_command(
    text: str = text_argument("ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ"),
    model: str = model_option(),
    fmt: AccentFormat = format_option(AccentFormat.text, "text|json",
                                      "text: the accentuated text; json: text, tokens and alignment"),
    as_json: bool = json_option(),
    unit: Unit = unit_option(),
    output: Path = output_option(),
    boundary: BoundaryMode = typer.Option(None, "--boundary", metavar="auto|keep|copy|predict|drop",
                                          help="Word division (auto: divide scriptio continua, keep spaced text; "
                                               "default: the pipeline's segmenter's, else auto)"),
    diacritics: PlaneMode = typer.Option(None, "--diacritics", metavar=MODES,
                                         help="Accents and breathings (default: the pipeline's, else keep)"),
    punctuation: PlaneMode = typer.Option(None, "--punctuation", metavar=MODES,
                                          help="Punctuation (default: the pipeline's, else keep)"),
    capitals: PlaneMode = typer.Option(None, "--capitals", metavar=MODES,
                                       help="Capitals (default: the pipeline's, else predict)"),
    lowercase: bool = typer.Option(None, "--lowercase", metavar="", help="Ignore the input's capitals"),
    notation: Notation = typer.Option(Notation.leiden, "--notation", metavar="leiden|ddbdp|epidoc|none",
                                      help="Gap markup (epidoc: TEXT_OR_FILE is an EpiDoc TEI file)"),
    restore: bool = typer.Option(False, "--restore", metavar="", help="Also restore the gaps (encoder + restorer)"),
    source: str = source_option(),
) -> None:
    """Print the accentuated, word-divided rendering of TEXT_OR_FILE.

    Loads the encoder (and, with --restore, the restorer) only; the accentuation runs on
    the encoder's backbone as the tokenizer stoicheia.Segmenter.v1.

    Example: stoicheia accentuate "ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ" --boundary predict --diacritics predict
    """
    from ..accent.segment import StoicheiaSegmenter
    out_format = chosen_format(fmt, as_json)
    gaps = None if notation is Notation.none else notation.value
    if notation is Notation.epidoc:
        view = read_epidoc(text)
        if not view.text.strip():
            raise fail(str(view.message))
        texts, gaps = [view.text], "leiden"
        require_greek(texts, text)
    else:
        texts = read_input(text, unit)
    nlp = load("accentuate", deprecated_model(model, source), extra=["stoicheia_restorer"] if restore else ())
    # the planes given here; the others stay those of the pipeline's segmenter (else auto word division)
    own = nlp.tokenizer.control if isinstance(nlp.tokenizer, StoicheiaSegmenter) else PlaneControl(boundary="auto")
    control = replace(own, **given(boundary=boundary and boundary.value, diacritics=diacritics and diacritics.value,
                                   punctuation=punctuation and punctuation.value,
                                   capitals=capitals and capitals.value, lowercase=lowercase))
    shared = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    nlp.tokenizer = StoicheiaSegmenter(nlp.vocab, model=shared, control=control,
                                       notation=gaps)  # one backbone for tokenizer and pipes
    if restore:  # the restorer reads the notation the segmenter kept
        docs = list(nlp.pipe(texts, component_cfg={"stoicheia_restorer": {"notation": gaps or "leiden"}}))
    else:
        docs = [nlp.make_doc(t) for t in texts]
    if out_format == "json":
        lines = [json.dumps(accent_json(s, doc, restore), ensure_ascii=False) for s, doc in zip(texts, docs, strict=True)]
    else:
        lines = [doc._.restored if restore else doc.text for doc in docs]
    write_output("\n".join(lines) + "\n", output)
