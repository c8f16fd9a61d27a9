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
write the quantities of the scanner's own decode, so they agree with ``--format text``:
the research decode of a packaged released meter checkpoint (``decode = "research"``), the
lattice decode of the default model. ``--meter`` forces the metre under either decode
(``elegiac``: verses alternate hexameter and pentameter).
"""

from __future__ import annotations

import json
import re
import unicodedata
from enum import StrEnum
from pathlib import Path
from typing import Any

import torch
import typer
from spacy.tokens import Doc

from ..records import plain
from ..scan.research import LATTICE_METERS, grammar_name, verse_grammar
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
    read_text,
    require_greek,
    source_option,
    text_argument,
    unit_option,
    write_output,
)

#: The scanner's pipe name (its settings are passed as ``component_cfg`` under it).
SCANNER = "stoicheia_scanner"

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


def research_lines(nlp: Any, text: str, fmt: str, changes: dict[str, Any] | None = None) -> list[str]:
    """The research strings of every line of ``text`` (``fmt``: macronize, scan or research);
    ``changes``: the scanner's settings for this run (``component_cfg``)."""
    out: list[str] = []
    changes = dict(changes or {})
    forced = grammar_name(changes["meter"]) if changes.get("meter") else None
    index = 0  # verse number (an elegiac couplet alternates hexameter and pentameter)
    for raw in text.split("\n"):
        line = strip_marks(raw)
        if not line.strip():
            out.extend([line] * (2 if fmt == "research" else 1))
            continue
        cfg = {**changes, "meter": verse_grammar(forced, index)} if forced else changes
        index += 1
        verse = nlp(line, component_cfg={SCANNER: cfg})  # each line alone, as the research tool
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


def _check_meter_applied(docs: list[Doc], meter: str) -> None:
    """Refuse a ``--meter`` the scanner's decode did not apply (a verse no path of it fits)."""
    wanted = grammar_name(meter)
    grammars = {verse_grammar(wanted, 0), verse_grammar(wanted, 1)}  # an elegiac couplet: hex and penta
    allowed = grammars | {name for g in grammars if g for name in LATTICE_METERS.get(g, ())}
    for doc in docs:
        for verse in doc._.verses or []:
            found = verse._.meter.name if verse._.meter is not None else None
            if verse._.scansion is not None and verse._.scansion.syllables and (found not in allowed or
                                                                                not verse._.meter.used):
                raise fail(f"--meter {meter}: no scansion of {verse.text!r} fits it (the scanner found "
                           f"{found or 'no metre'})")


def scan_command(
    text: str = text_argument("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"),
    model: str = model_option(),
    fmt: ScanFormat = format_option(ScanFormat.text, "text|json|research|macronize|scan",
                                    "text: macronized verse, syllables, pattern, metre; json: one object per Doc; "
                                    "or the research strings: macronize, scan, research (both)"),
    as_json: bool = json_option(),
    unit: Unit = unit_option(),
    output: Path = output_option(),
    meter: str = typer.Option(None, "--meter", metavar="METRE",
                              help="Force the verse's metre (hex, penta, ia6, …; default: the scanner's, detected)"),
    heads: Path = typer.Option(None, "--heads", metavar="FOLDER", help="Scanner weights folder (default: the model's)"),
    abstain_below: float = typer.Option(None, "--abstain-below", metavar="P",
                                        help="Leave macrons unmarked below this confidence (default: the scanner's)"),
    source: str = source_option(),
) -> None:
    """Scan, macronize and detect the metre of TEXT_OR_FILE.

    Example: stoicheia scan "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"
    """
    output_format = ScanFormat(chosen_format(fmt, as_json))
    if heads is not None and not heads.is_dir():
        raise fail(f"--heads {heads}: no such folder")
    research = output_format in (ScanFormat.research, ScanFormat.macronize, ScanFormat.scan)
    raw = read_text(text).rstrip("\n") if research else ""
    if research:
        require_greek([line for line in raw.splitlines() if line.strip()] or [raw])
    texts = [] if research else read_input(text, unit)
    torch.set_num_threads(1)
    nlp = load("scan", deprecated_model(model, source), add=[SCANNER] if heads else [])
    scanner: Any = nlp.get_pipe(SCANNER)
    if heads is not None:
        scanner.from_disk(heads)
    # the settings given here; the others stay the scanner's (the research formats print its own decode's
    # quantities: the research decode of a released meter package, the lattice of the default model)
    changes = given(abstain_below=abstain_below, meter=meter)
    if changes:
        with scanner.settings_for_call(changes):  # an unknown metre: one error line, before any work
            pass
    if research:
        write_output("\n".join(research_lines(nlp, raw, output_format.value, changes)) + "\n", output)
        return
    docs = list(nlp.pipe(texts, component_cfg={SCANNER: changes}))
    if meter is not None:
        _check_meter_applied(docs, meter)
    if output_format is ScanFormat.json:
        out = "".join(json.dumps(doc_json(doc), ensure_ascii=False) + "\n" for doc in docs)
    else:
        out = "\n".join(format_doc(doc) for doc in docs) + "\n"
    write_output(out, output)
