"""``stoicheia date TEXT_OR_FILE``: the estimated date of a Greek document (the weighted median year
of the most similar dated papyri) with its 90 % interval, or why no date is given (a literary or too
short text: the dater's register test, :class:`stoicheia_spacy.date.text.Register`).

Loads the encoder and ``stoicheia_dater`` only (:func:`.loading.load_for`; ``--weights``
replaces the dater's fit); ``--html`` also writes
:func:`stoicheia_spacy.date.render.render_date_html` of the Doc."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from .options import (
    Unit,
    chosen_format,
    deprecated_model,
    fail,
    format_option,
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


class DateFormat(StrEnum):
    """What ``stoicheia date`` writes."""

    text = "text"
    json = "json"


def date_command(
    text: str = text_argument("Ἀρίστων Ζήνωνι χαίρειν. ἔρρωσο. ἔτους η, Μεχεὶρ θ."),
    model: str = model_option(),
    fmt: DateFormat = format_option(DateFormat.text, "text|json",
                                    "text: the weighted median year and its interval, or why no date is given; "
                                    "json: also the histogram, applicable and reason"),
    as_json: bool = json_option(),
    unit: Unit = unit_option(),
    output: Path = output_option(),
    weights: Path = typer.Option(None, "--weights", metavar="FOLDER",
                                 help="A stoicheia_dater folder (default: the model's, the PaDoC fit)"),
    html_out: Path = typer.Option(None, "--html", metavar="FILE",
                                  help="Also write the histogram and interval as an HTML/SVG page here"),
    source: str = source_option(),
) -> None:
    """Print the estimated date of TEXT_OR_FILE (the weighted median year of the most similar dated
    papyri) and its 90 % interval, widened for a short text; for a text outside what the dater was
    fitted on (literary, or too short) "no date" and why.

    Example: stoicheia date "Ἀρίστων Ζήνωνι χαίρειν. ἔρρωσο. ἔτους η, Μεχεὶρ θ."
    """

    out_format = chosen_format(fmt, as_json)
    if weights is not None and not (weights / "model").is_file():
        raise fail(f"--weights {weights}: no stoicheia_dater weights there (expected a 'model' file)")
    texts = read_input(text, unit)
    nlp = load("date", deprecated_model(model, source), add=["stoicheia_dater"] if weights else [])
    if weights is not None:
        dater: Any = nlp.get_pipe("stoicheia_dater")
        dater.from_disk(weights)
    docs = list(nlp.pipe(texts))
    lines = []
    for doc in docs:
        estimate = doc._.date
        if estimate is None:
            raise fail("the text has no Greek letters to date")
        lines.append(json.dumps(estimate.to_dict()) if out_format == "json" else str(estimate))
    write_output("\n".join(lines) + "\n", output)
    if html_out is not None:
        from ..date.render import render_date_html

        render_date_html(docs[0], path=html_out)
