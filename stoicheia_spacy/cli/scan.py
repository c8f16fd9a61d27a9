"""``stoicheia scan``: scan and macronize Greek verse with the default package's scanner.

Builds the default pipeline (embedded backbone + ``stoicheia_scanner`` heads from
``<default model>/scanner``, see :func:`stoicheia_spacy.assembly.scanner_pipeline`) and prints, per verse, the
macronized line, its syllables with the – ⏑ pattern, and the detected metre.
Without trained heads the rule-only scansion is printed (undetermined syllables ×).
"""

from __future__ import annotations

from pathlib import Path

import typer
from spacy.tokens import Doc

from ..assembly import DEFAULT_SOURCE


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
            lines.append(f"  {meter['name']}  cost {meter['cost']:.3f} nats/syllable, {used}")
    return "\n".join(lines)


def scan_command(
    text: str = typer.Argument(..., help="Greek verse; separate lines with newlines"),
    heads: Path = typer.Option(None, "--heads", help="Scanner heads folder (default: shipped)"),
    source: str = typer.Option(DEFAULT_SOURCE, "--source", help="Backbone checkpoint: hub id, directory or embedded:NAME"),
    abstain_below: float = typer.Option(0.0, "--abstain-below", help="Leave macrons unmarked below this confidence"),
) -> None:
    """Scan, macronize and detect the metre of TEXT.

    Example: stoicheia scan "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"
    """
    import torch

    from ..assembly import scanner_pipeline
    from ..errors import ConfigError

    torch.set_num_threads(1)
    try:
        nlp = scanner_pipeline(source, heads)
    except ConfigError as err:
        raise typer.BadParameter(str(err), param_hint="--heads") from err
    nlp.get_pipe("stoicheia_scanner").cfg["abstain_below"] = abstain_below  # type: ignore[attr-defined]
    typer.echo(format_doc(nlp(text.replace("\\n", "\n"))))
