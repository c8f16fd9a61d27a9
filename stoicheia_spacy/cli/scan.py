"""``stoicheia scan``: scan and macronize Greek verse.

Default: the embedded backbone with the shipped scanner heads (see
:func:`stoicheia_spacy.assembly.scanner_pipeline`), printing per verse the macronized line,
its syllables with the – ⏑ pattern, and the detected metre. ``--model`` takes a pipeline
(an installed package such as one built by ``stoicheia package`` from a released meter
checkpoint, or a pipeline folder). Without trained heads the rule-only scansion is printed
(undetermined syllables ×).

``--format`` ``macronize`` / ``scan`` / ``research`` print the strings of the authors'
``meter/predict.py --macronize`` (``_`` after a long and ``^`` after a short letter) and
``--scan`` (``[heavy]`` / ``{light}`` syllables), or both (macronized line, then bracketed
line), one input line at a time: every line is its own Doc, encoded alone as the research
tool encodes it, and length marks already in the input are stripped first. These formats
use the scanner's research decode (``decode = "research"``, the default of a packaged
released meter checkpoint; set here for any pipeline).
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from spacy.tokens import Doc

from ..assembly import DEFAULT_SOURCE

#: Length marks the research tools accept in their input (stripped before scanning).
_MARKS = re.compile("[_^\u0304\u0306]")


class ScanFormat(StrEnum):
    """What ``stoicheia scan`` prints."""

    text = "text"
    research = "research"
    macronize = "macronize"
    scan = "scan"


def format_doc(doc: Doc) -> str:
    """Macronized text, then per verse: syllables, pattern and metre."""
    lines = ["".join(t._.macronized + t.whitespace_ for t in doc)]
    for verse in doc._.verses or []:
        scan = verse._.scansion or {}
        meter = verse._.meter
        lines.append("  " + " | ".join(s.strip() for s in scan.get("syllables", [])))
        lines.append("  " + scan.get("pattern", ""))
        if meter:
            used = "metre applied" if meter["used"] else "metre not applied (gate)"
            unit = "letter" if "labels" in meter else "syllable"
            cost = "n/a" if meter["cost"] is None else f"{meter['cost']:.3f}"
            lines.append(f"  {meter['name']}  cost {cost} nats/{unit}, {used}")
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
        scan = (verse._.verses or [verse[:]])[0]._.scansion or {}
        macronized, bracketed = scan.get("macronized", line), scan.get("bracketed", line)
        out.extend({"macronize": [macronized], "scan": [bracketed], "research": [macronized, bracketed]}[fmt])
    return out


def scan_command(
    text: str = typer.Argument(..., help="Greek verse (or a file of verses); separate lines with newlines"),
    model: str = typer.Option(None, "--model", help="Pipeline: installed package or directory with a stoicheia_scanner"),
    fmt: ScanFormat = typer.Option(ScanFormat.text, "--format", help="text, or the research strings: macronize, scan, research (both)"),
    meter: str = typer.Option(None, "--meter", help="Force the verse's metre in the research decode (hex, penta, ia6, …)"),
    heads: Path = typer.Option(None, "--heads", help="Scanner heads folder (default: shipped)"),
    source: str = typer.Option(DEFAULT_SOURCE, "--source", help="Backbone checkpoint: hub id, directory or embedded:NAME"),
    abstain_below: float = typer.Option(0.0, "--abstain-below", help="Leave macrons unmarked below this confidence"),
) -> None:
    """Scan, macronize and detect the metre of TEXT.

    Example: stoicheia scan "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"
    """
    import torch

    from ..assembly import load_pipeline, scanner_pipeline
    from ..errors import StoicheiaError

    torch.set_num_threads(1)
    path = Path(text)
    if "\n" not in text and len(text) < 4096 and path.is_file():
        text = path.read_text(encoding="utf-8").rstrip("\n")
    try:
        if model:
            nlp = load_pipeline(model)
            if "stoicheia_scanner" not in nlp.pipe_names:
                raise typer.BadParameter(f"{model} has no stoicheia_scanner", param_hint="--model")
            nlp.select_pipes(enable=["stoicheia_encoder", "stoicheia_scanner"])
        else:
            nlp = scanner_pipeline(source, heads)
        scanner: Any = nlp.get_pipe("stoicheia_scanner")
        scanner.cfg["abstain_below"] = abstain_below
        if fmt is not ScanFormat.text:
            scanner.cfg["decode"] = "research"
        if meter is not None:
            scanner.set_cfg({"meter": meter})
        if fmt is ScanFormat.text:
            typer.echo(format_doc(nlp(text.replace("\\n", "\n"))))
        else:
            typer.echo("\n".join(research_lines(nlp, text.replace("\\n", "\n"), fmt.value)))
    except (StoicheiaError, OSError) as err:
        typer.echo(f"{type(err).__name__}: {err}", err=True)
        raise typer.Exit(1) from err
