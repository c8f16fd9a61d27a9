"""``stoicheia parse FILE``: tag, lemmatize and parse Greek text; CoNLL-U (or JSON) out.

Without ``--model`` the embedded default backbone is used with the morphosyntax heads
shipped beside it; ``--model`` takes an installed package name or a pipeline directory.
Each non-empty line (or paragraph with ``--paragraphs``) of FILE is one Doc; sentences
come from the parser's trees.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import typer
from spacy.language import Language
from spacy.tokens import Doc

from .app import app


def load_parse_pipeline(model: str | None = None) -> Language:
    """An installed/saved pipeline, or the default backbone + its shipped heads."""
    import spacy

    if model:
        import stoicheia_spacy.pipeline  # noqa: F401

        from ..morph import package as _package  # noqa: F401  (registers the morphosyntax factories)

        return spacy.load(model)
    from ..cli.package import build_pipeline
    from ..morph.package import add_morphosyntax, default_morphosyntax_dir

    nlp = build_pipeline("embedded:grc_stoicheia_doc_clean")
    if not add_morphosyntax(nlp, default_morphosyntax_dir()):
        raise typer.BadParameter("no morphosyntax heads are shipped with the default model: pass --model")
    return nlp


def to_conllu(doc: Doc, doc_id: str | None = None) -> Iterator[str]:
    """CoNLL-U lines of a Doc (one block per sentence; HEAD 0 = root)."""
    if doc_id:
        yield f"# newdoc id = {doc_id}"
    sents = list(doc.sents) if doc.has_annotation("DEP") or doc.has_annotation("SENT_START") else [doc[:]]
    for k, sent in enumerate(sents, 1):
        yield f"# sent_id = {doc_id + '-' if doc_id else ''}{k}"
        yield f"# text = {sent.text.strip()}"
        for tok in sent:
            head = 0 if tok.head.i == tok.i else tok.head.i - sent.start + 1
            misc = "_" if tok.whitespace_ or tok.i == sent.end - 1 else "SpaceAfter=No"
            fields = [str(tok.i - sent.start + 1), tok.text, tok.lemma_ or "_", tok.pos_ or "_", tok.tag_ or "_",
                      str(tok.morph) or "_", str(head) if tok.dep_ else "_", tok.dep_ or "_", "_", misc]
            yield "\t".join(fields)
        yield ""


def _chunks(text: str, paragraphs: bool) -> Iterable[str]:
    parts = text.split("\n\n") if paragraphs else text.splitlines()
    return [" ".join(p.split()) for p in parts if p.strip()]


@app.command("parse")
def parse_command(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="UTF-8 Greek text"),
    output_format: str = typer.Option("conllu", "--format", help="conllu or json"),
    model: str = typer.Option(None, "--model", help="installed package or pipeline directory"),
    output: Path = typer.Option(None, "--output", "-o", help="write here instead of stdout"),
    paragraphs: bool = typer.Option(False, "--paragraphs", help="blank-line separated paragraphs are Docs"),
) -> None:
    """Tag, lemmatize and parse FILE."""
    if output_format not in {"conllu", "json"}:
        raise typer.BadParameter("--format must be conllu or json")
    nlp = load_parse_pipeline(model)
    texts = _chunks(file.read_text(encoding="utf-8"), paragraphs)
    lines: list[str] = []
    for i, doc in enumerate(nlp.pipe(texts), 1):
        if output_format == "conllu":
            lines.extend(to_conllu(doc, f"{file.stem}-{i}"))
        else:
            lines.append(json.dumps(doc.to_json(), ensure_ascii=False))
    text = "\n".join(lines) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
