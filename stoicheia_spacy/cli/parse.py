"""``stoicheia parse TEXT_OR_FILE``: tag, lemmatize and parse Greek text; CoNLL-U (or JSON) out.

Loads the encoder and the morphosyntax components only (:func:`.loading.load_for`).
Each non-empty line (``--unit paragraph``: blank-line paragraph; ``--unit file``: the
whole file) is one Doc; sentences come from the parser's trees. With ``--pretokenized``
(the research tools' input) each non-empty line is one sentence whose words are split on
whitespace, kept as given. ``--decode research|paper`` switches a packaged released
tagger-parser's decoders (:func:`stoicheia_spacy.morph.released.set_decode`;
packages decode ``research`` by default).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from .options import (
    Unit,
    deprecated_json,
    flag,
    friendly,
    input_file,
    load,
    model_option,
    output_option,
    read_input,
    read_text,
    text_argument,
    unit_option,
    warn,
    write_output,
)


class OutputFormat(StrEnum):
    """What ``stoicheia parse`` writes."""

    conllu = "conllu"
    json = "json"


class Decode(StrEnum):
    """Decoders of a released tagger-parser (``--decode``)."""

    research = "research"
    paper = "paper"


def pretokenized_docs(vocab: Any, text: str) -> list[Any]:
    """One Doc per non-empty line, its words split on whitespace, the whole line one sentence."""
    from spacy.tokens import Doc

    docs = []
    for line in text.splitlines():
        words = line.split()
        if words:
            docs.append(Doc(vocab, words=words, spaces=[True] * (len(words) - 1) + [False],
                            sent_starts=[True, *([False] * (len(words) - 1))]))
    return docs


@friendly
def parse_command(
    text: str = text_argument("μῆνιν ἄειδε θεά"),
    output_format: OutputFormat = typer.Option(OutputFormat.conllu, "--format", metavar="conllu|json",
                                               help="Output format"),
    model: str = model_option(),
    unit: Unit = unit_option(Unit.line),
    output: Path = output_option(),
    pretokenized: bool = flag("--pretokenized", "One sentence per line, words split on spaces"),
    decode: Decode = typer.Option(None, "--decode", metavar="research|paper",
                                  help="Decoder of a released tagger-parser package (default: its own, research)"),
    paragraphs: bool = typer.Option(False, "--paragraphs", hidden=True, help="Deprecated: use --unit paragraph"),
    as_json: bool = typer.Option(False, "--json", hidden=True, help="Deprecated: use --format json"),
) -> None:
    """Tag, lemmatize and parse TEXT_OR_FILE.

    Example: stoicheia parse homer.txt --format conllu -o homer.conllu

    Example (the research tools' input): stoicheia parse words.txt --pretokenized --decode paper
    """
    from ..errors import ConfigError
    from ..morph.conllu import to_conllu

    if paragraphs:
        warn("--paragraphs is deprecated: use --unit paragraph")
        unit = Unit.paragraph
    fmt = deprecated_json(output_format.value, as_json)
    raw = read_text(text) if pretokenized else None
    texts = [] if pretokenized else read_input(text, unit)
    path = input_file(text)
    stem = path.stem if path is not None else "text"
    nlp = load("parse", model)
    if decode is not None:
        from ..morph.released import set_decode

        try:
            set_decode(nlp, decode.value)
        except ConfigError as err:
            raise typer.BadParameter(str(err), param_hint="--decode") from err
    inputs: list[Any] = pretokenized_docs(nlp.vocab, raw or "") if pretokenized else texts
    parts: list[str] = []
    for i, doc in enumerate(nlp.pipe(inputs), 1):
        if fmt == OutputFormat.conllu:
            parts.append(to_conllu(doc, f"{stem}-{i}"))
        else:
            parts.append(json.dumps(doc.to_json(), ensure_ascii=False) + "\n")
    write_output("".join(parts), output)
