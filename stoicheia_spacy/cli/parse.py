"""``stoicheia parse FILE``: tag, lemmatize and parse Greek text; CoNLL-U (or JSON) out.

Without ``--model`` the embedded default backbone is used with the morphosyntax heads
shipped beside it; ``--model`` names a pipeline (an installed package or a directory).
Each non-empty line (or paragraph with ``--paragraphs``) of FILE is one Doc; sentences
come from the parser's trees. With ``--pretokenized`` (the research tools' input) each
non-empty line is one sentence whose words are split on whitespace, kept as given.
``--decode research|paper`` switches a packaged released tagger-parser's decoders
(:func:`stoicheia_spacy.release.tagger_parser.set_decode`; packages decode ``research``
by default).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer


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


def _chunks(text: str, paragraphs: bool) -> Iterable[str]:
    parts = text.split("\n\n") if paragraphs else text.splitlines()
    return [" ".join(p.split()) for p in parts if p.strip()]


def parse_command(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="UTF-8 Greek text"),
    output_format: OutputFormat = typer.Option(OutputFormat.conllu, "--format", help="Output format"),
    model: str = typer.Option(None, "--model", help="Pipeline: installed package or directory (default: embedded backbone + shipped heads)"),
    output: Path = typer.Option(None, "--output", "-o", help="Write here instead of stdout"),
    paragraphs: bool = typer.Option(False, "--paragraphs", help="Blank-line separated paragraphs are Docs"),
    pretokenized: bool = typer.Option(False, "--pretokenized", help="One sentence per line, words split on spaces"),
    decode: Decode = typer.Option(None, "--decode", help="Decoder of a released tagger-parser package (default: its own, research)"),
) -> None:
    """Tag, lemmatize and parse FILE.

    Example: stoicheia parse homer.txt --format conllu -o homer.conllu

    Example (the research tools' input): stoicheia parse words.txt --pretokenized --decode paper
    """
    from ..assembly import morphosyntax_pipeline
    from ..errors import ConfigError
    from ..scoring.conll import to_conllu

    try:
        nlp = morphosyntax_pipeline(model)
    except ConfigError as err:
        raise typer.BadParameter(str(err), param_hint="--model") from err
    except OSError as err:  # spaCy: no pipeline there (e.g. a raw checkpoint: package it first)
        raise typer.BadParameter(f"{model} is not a spaCy pipeline (package a checkpoint with "
                                 f"stoicheia package): {err}", param_hint="--model") from err
    if decode is not None:
        from ..release.tagger_parser import set_decode

        try:
            set_decode(nlp, decode.value)
        except ConfigError as err:
            raise typer.BadParameter(str(err), param_hint="--decode") from err
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise typer.BadParameter(f"{file} is not UTF-8 text: {err}", param_hint="FILE") from err
    inputs: list[Any] = pretokenized_docs(nlp.vocab, text) if pretokenized else list(_chunks(text, paragraphs))
    parts: list[str] = []
    for i, doc in enumerate(nlp.pipe(inputs), 1):
        if output_format is OutputFormat.conllu:
            parts.append(to_conllu(doc, f"{file.stem}-{i}"))
        else:
            parts.append(json.dumps(doc.to_json(), ensure_ascii=False) + "\n")
    text = "".join(parts)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
