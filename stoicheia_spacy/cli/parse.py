"""``stoicheia parse TEXT_OR_FILE``: tag, lemmatize and parse Greek text; CoNLL-U (or JSON) out.

Loads the encoder and the morphosyntax components only (:func:`.loading.load_for`).
A file is one Doc (``--unit line``: each non-empty line; ``--unit paragraph``: each
blank-line paragraph), its line breaks read as spaces; sentences come from the parser's trees. ``--format text`` prints a
table per sentence (word, lemma, UPOS, tag, features, head, relation). With ``--pretokenized``
(the research tools' input) each non-empty line is one sentence whose words are split on
whitespace, kept as given. ``--decode research|paper`` switches a packaged released
tagger-parser's decoders (:func:`stoicheia_spacy.morph.released.set_decode`;
packages decode ``research`` by default). ``--scheme ud`` writes Universal Dependencies
relations and trees (the parser's ``scheme`` setting, :mod:`stoicheia_spacy.morph.agdt_ud_tree`)
instead of the AGDT ones; CoNLL-U, JSON and the text table all follow it.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from spacy.tokens import Doc
from wasabi import table

from ..errors import ConfigError
from .options import (
    Unit,
    chosen_format,
    deprecated_model,
    fail,
    flag,
    format_option,
    input_file,
    json_option,
    load,
    model_option,
    output_option,
    read_input,
    read_text,
    require_greek,
    source_option,
    text_argument,
    unit_option,
    warn,
    write_output,
)


class OutputFormat(StrEnum):
    """What ``stoicheia parse`` writes."""

    conllu = "conllu"
    json = "json"
    text = "text"


#: The columns of ``--format text``.
TEXT_HEADER = ("#", "word", "lemma", "UPOS", "tag", "features", "head", "relation")


class Scheme(StrEnum):
    """Annotation scheme of the relations (``--scheme``)."""

    agdt = "agdt"
    ud = "ud"


class Decode(StrEnum):
    """Decoders of a released tagger-parser (``--decode``)."""

    research = "research"
    paper = "paper"


def set_scheme(nlp: Any, scheme: str) -> None:
    """Switch the parser of ``nlp`` to ``scheme`` for this session (``--scheme``; a saved pipeline
    keeps it as ``scheme`` in ``[components.stoicheia_parser.settings]``)."""
    parsers = [nlp.get_pipe(n) for n in nlp.pipe_names if nlp.get_pipe_meta(n).factory == "stoicheia_parser"]
    if not parsers:
        raise typer.BadParameter("the pipeline has no stoicheia_parser", param_hint="--scheme")
    for parser in parsers:
        try:
            parser.configure(scheme=scheme)
        except ConfigError as err:
            raise typer.BadParameter(str(err), param_hint="--scheme") from err


def pretokenized_docs(vocab: Any, text: str) -> list[Any]:
    """One Doc per non-empty line, its words split on whitespace, the whole line one sentence."""
    docs = []
    for line in text.splitlines():
        words = line.split()
        if words:
            docs.append(Doc(vocab, words=words, spaces=[True] * (len(words) - 1) + [False],
                            sent_starts=[True, *([False] * (len(words) - 1))]))
    return docs


def text_table(doc: Any) -> str:
    """``--format text``: per sentence, an aligned table of its words (1-based heads, 0 = root),
    numbered as in CoNLL-U (whitespace tokens are no words)."""
    from ..morph.conllu import span_words, word_tokens

    blocks = []
    for sent in doc.sents:
        rows = [(w["id"], t.text, t.lemma_, t.pos_, t.tag_, str(t.morph) or "_", w["head"], t.dep_)
                for t, w in zip(word_tokens(sent), span_words(sent), strict=True)]
        blocks.append(f"# {sent.text.strip()}\n" + table(rows, header=TEXT_HEADER, divider=True, max_col=200))
    return "\n".join(blocks)


def parse_command(
    text: str = text_argument("μῆνιν ἄειδε θεά"),
    model: str = model_option(),
    fmt: OutputFormat = format_option(OutputFormat.conllu, "conllu|json|text",
                                      "conllu: CoNLL-U; json: one Doc.to_json() per line; text: a table per sentence"),
    as_json: bool = json_option(),
    unit: Unit = unit_option(),
    output: Path = output_option(),
    pretokenized: bool = flag("--pretokenized", "One sentence per line, words split on spaces"),
    decode: Decode = typer.Option(None, "--decode", metavar="research|paper",
                                  help="Decoder of a released tagger-parser package (default: its own, research)"),
    scheme: Scheme = typer.Option(Scheme.agdt, "--scheme", metavar="agdt|ud",
                                  help="Relations and trees: agdt (the heads' own) or ud (Universal Dependencies)"),
    paragraphs: bool = typer.Option(False, "--paragraphs", hidden=True, help="Deprecated: use --unit paragraph"),
    source: str = source_option(),
) -> None:
    """Tag, lemmatize and parse TEXT_OR_FILE.

    Example: stoicheia parse homer.txt --format conllu -o homer.conllu

    Example (the research tools' input): stoicheia parse words.txt --pretokenized --decode paper

    Example (UD relations): stoicheia parse homer.txt --scheme ud -o homer.conllu
    """
    from ..morph.conllu import to_conllu

    if paragraphs:
        warn("--paragraphs is deprecated: use --unit paragraph")
        unit = Unit.paragraph
    out_format = chosen_format(fmt, as_json)
    raw = read_text(text) if pretokenized else None
    if raw is not None:
        require_greek([line for line in raw.splitlines() if line.strip()] or [raw])
    # a line break inside a Doc is a space (the parser's trees make the sentences)
    texts = [] if pretokenized else [" ".join(t.split()) for t in read_input(text, unit)]
    path = input_file(text)
    stem = path.stem if path is not None else "text"
    nlp = load("parse", deprecated_model(model, source))
    if decode is not None:
        from ..morph.released import set_decode

        try:
            set_decode(nlp, decode.value)
        except ConfigError as err:
            raise typer.BadParameter(str(err), param_hint="--decode") from err
    if scheme != Scheme.agdt:
        set_scheme(nlp, scheme.value)
    inputs: list[Any] = pretokenized_docs(nlp.vocab, raw or "") if pretokenized else texts
    parts: list[str] = []
    for i, doc in enumerate(nlp.pipe(inputs), 1):
        data = doc._.stoicheia
        if data is not None and data.markup_error is not None:  # read as plain text: tags of brackets
            raise fail(f"LeidenSyntaxError: {data.markup_error}")
        if out_format == OutputFormat.conllu:
            parts.append(to_conllu(doc, f"{stem}-{i}"))
        elif out_format == OutputFormat.text:
            parts.append(text_table(doc) + "\n")
        else:
            parts.append(json.dumps(doc.to_json(), ensure_ascii=False) + "\n")
    write_output("".join(parts), output)
