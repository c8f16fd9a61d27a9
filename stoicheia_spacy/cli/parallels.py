"""``stoicheia parallels TEXT_OR_FILE``: the passages of the open corpus most similar to a text.

Runs the opt-in ``stoicheia_parallels`` pipe (:mod:`stoicheia_spacy.parallels.component`) on a
blank Greek pipeline: per Doc, up to ``--top`` passages, most shared letter 12-grams first, the
text's own document and its duplicates left out. ``--json``: per Doc, one line with the list of
its passages (``Passage.to_dict()``)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import spacy
import typer

from ..assembly import extend
from .options import (
    Unit,
    chosen_format,
    fail,
    format_option,
    json_option,
    output_option,
    printer,
    read_input,
    text_argument,
    unit_option,
    write_output,
)


class ParallelsFormat(StrEnum):
    """What ``stoicheia parallels`` writes."""

    text = "text"
    json = "json"


def parallels_command(
    text: str = text_argument("ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν"),
    fmt: ParallelsFormat = format_option(ParallelsFormat.text, "text|json",
                                         "text: a table of passages per Doc; json: per Doc, a line with its passages"),
    as_json: bool = json_option(),
    unit: Unit = unit_option(),
    output: Path = output_option(),
    top: int = typer.Option(5, "--top", metavar="N", help="How many passages to list per Doc"),
) -> None:
    """List the passages of the open corpus (papyri and literary texts) most similar to TEXT_OR_FILE.

    Example: stoicheia parallels "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν" --top 3
    """
    output_format = ParallelsFormat(chosen_format(fmt, as_json))
    if top < 1:
        raise fail("--top must be at least 1")
    texts = read_input(text, unit)
    nlp = spacy.blank("grc")
    extend(nlp, {"components": {"stoicheia_parallels": {"factory": "stoicheia_parallels", "n": top}}})
    pipe: Any = nlp.get_pipe("stoicheia_parallels")
    pipe.index()  # a missing index: one error line
    docs = list(nlp.pipe(texts))
    if output_format is ParallelsFormat.json:
        write_output("".join(json.dumps([p.to_dict() for p in doc._.parallels], ensure_ascii=False) + "\n"
                             for doc in docs), output)
        return
    lines = []
    msg = printer(no_print=output is not None)
    for doc in docs:
        if not doc._.parallels:
            msg.warn("No passage of the corpus shares a 12-letter string with the text")
        for rank, p in enumerate(doc._.parallels, start=1):
            where = p.id + (f", l. {p.line}" if p.line is not None else "")
            lines.append(f"{rank}. {where} ({p.shared} shared, {p.score:.0%}): {p.text}"
                         + (f"  {p.url}" if p.url else ""))
    write_output("\n".join(lines) + "\n", output)
