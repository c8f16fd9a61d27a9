"""``stoicheia scan TEXT_OR_FILE``: scan and macronize Greek verse.

Loads the encoder and ``stoicheia_scanner`` only (:func:`.loading.load_for`; the default
model's scanner heads, or ``--model``'s, e.g. a package ``stoicheia package`` built from a
released meter checkout; ``--heads`` replaces the weights) and prints, per verse, the
macronized line, its syllables with the – ⏑ pattern, and the detected metre (``--format
json``: one object per Doc). Lines of TEXT_OR_FILE are verses. Without trained heads the
rule-only scansion is printed (undetermined syllables ×).

``--format`` ``macronize`` / ``scan`` / ``research`` print the strings of the authors'
``meter/predict.py --macronize`` (``_`` after a long and ``^`` after a short letter) and
``--scan`` (``[heavy]`` / ``{light}`` syllables), or both (macronized line, then bracketed
line), one input line at a time: every line is its own Doc, encoded alone as the research
tool encodes it, and length marks already in the input are stripped first. These formats
use the scanner's research decode (``decode = "research"``, the default of a packaged
released meter checkpoint; set here for any pipeline).
"""

from __future__ import annotations

import json
import re
import unicodedata
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from spacy.tokens import Doc

from ..records import plain
from .options import (
    Unit,
    deprecated_model,
    fail,
    friendly,
    load,
    model_option,
    output_option,
    read_input,
    read_text,
    source_option,
    text_argument,
    unit_option,
    write_output,
)

#: Length marks the research tools accept in their input (stripped before scanning).
_MARKS = re.compile("[_^\u0304\u0306]")


class ScanFormat(StrEnum):
    """What ``stoicheia scan`` writes."""

    text = "text"
    json = "json"
    research = "research"
    macronize = "macronize"
    scan = "scan"


def format_doc(doc: Doc) -> str:
    """Macronized text, then per verse: syllables, pattern and metre."""
    lines = ["".join(t._.macronized + t.whitespace_ for t in doc)]
    for verse in doc._.verses or []:
        scan = verse._.scansion
        meter = verse._.meter
        lines.append("  " + " | ".join(s.strip() for s in (scan.syllables if scan else ())))
        lines.append("  " + (scan.pattern if scan else ""))
        if meter:
            used = "metre applied" if meter.used else "metre not applied (gate)"
            unit = "letter" if meter.decoder == "research" else "syllable"
            cost = "n/a" if meter.cost is None else f"{meter.cost:.3f}"
            lines.append(f"  {meter.name}  cost {cost} nats/{unit}, {used}")
    return "\n".join(lines)


def strip_marks(line: str) -> str:
    """A line without the research tools' length marks (``_``, ``^``, combining macron/breve)."""
    return unicodedata.normalize("NFC", _MARKS.sub("", unicodedata.normalize("NFD", line)))


def research_lines(nlp: Any, text: str, fmt: str) -> list[str]:
    """The research strings of every line of ``text`` (``fmt``: macronize, scan or research)."""
    out: list[str] = []
    for raw in text.split("\n"):
        line = strip_marks(raw)
        if not line.strip():
            out.extend([line] * (2 if fmt == "research" else 1))
            continue
        verse = nlp(line)
        scan = (verse._.verses or [verse[:]])[0]._.scansion
        macronized = scan.macronized if scan is not None and scan.macronized is not None else line
        bracketed = scan.bracketed if scan is not None and scan.bracketed is not None else line
        out.extend({"macronize": [macronized], "scan": [bracketed], "research": [macronized, bracketed]}[fmt])
    return out


def doc_json(doc: Doc) -> dict[str, Any]:
    """Macronized text and, per verse, its scansion and metre."""
    return {"text": doc.text, "macronized": "".join(t._.macronized + t.whitespace_ for t in doc),
            "verses": [{"text": v.text, "scansion": plain(v._.scansion), "meter": plain(v._.meter)}
                       for v in doc._.verses or []]}


@friendly
def scan_command(
    text: str = text_argument("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"),
    model: str = model_option(),
    output_format: ScanFormat = typer.Option(ScanFormat.text, "--format", metavar="text|json|research|macronize|scan",
                                             help="text: macronized verse, syllables, pattern, metre; json: one object "
                                                  "per Doc; or the research strings: macronize, scan, research (both)"),
    unit: Unit = unit_option(Unit.file),
    output: Path = output_option(),
    meter: str = typer.Option(None, "--meter", metavar="METRE",
                              help="Force the verse's metre in the research decode (hex, penta, ia6, …)"),
    heads: Path = typer.Option(None, "--heads", metavar="FOLDER", help="Scanner weights folder (default: the model's)"),
    abstain_below: float = typer.Option(0.0, "--abstain-below", metavar="P", help="Leave macrons unmarked below this confidence"),
    source: str = source_option(),
) -> None:
    """Scan, macronize and detect the metre of TEXT_OR_FILE.

    Example: stoicheia scan "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"
    """
    import torch

    if heads is not None and not heads.is_dir():
        raise fail(f"--heads {heads}: no such folder")
    research = output_format in (ScanFormat.research, ScanFormat.macronize, ScanFormat.scan)
    raw = read_text(text).rstrip("\n") if research else ""
    texts = [] if research else read_input(text, unit)
    torch.set_num_threads(1)
    nlp = load("scan", deprecated_model(model, source), add=["stoicheia_scanner"] if heads else [])
    scanner: Any = nlp.get_pipe("stoicheia_scanner")
    if heads is not None:
        scanner.from_disk(heads)
    changes: dict[str, Any] = {"abstain_below": abstain_below}
    if research:
        changes["decode"] = "research"
    if meter is not None:
        changes["meter"] = meter
    scanner.configure(**changes)
    if research:
        write_output("\n".join(research_lines(nlp, raw, output_format.value)) + "\n", output)
        return
    docs = list(nlp.pipe(texts))
    if output_format is ScanFormat.json:
        out = "".join(json.dumps(doc_json(doc), ensure_ascii=False) + "\n" for doc in docs)
    else:
        out = "\n".join(format_doc(doc) for doc in docs) + "\n"
    write_output(out, output)
