"""``stoicheia scan``: scan and macronize Greek verse with the default package's scanner.

Builds the default pipeline (embedded backbone + ``stoicheia_scanner`` heads from
``<default model>/scanner``, see :func:`scanner_pipeline`) and prints, per verse, the
macronized line, its syllables with the – ⏑ pattern, and the detected metre.
Without trained heads the rule-only scansion is printed (undetermined syllables ×).
"""

from __future__ import annotations

from pathlib import Path

import typer
from spacy.language import Language
from spacy.tokens import Doc

from .app import app

DEFAULT_SOURCE = "embedded:grc_stoicheia_doc_clean"


def scanner_dir() -> Path | None:
    """The shipped scanner heads folder, or None when they are not trained/shipped."""
    from ..assets import default_model_dir

    path = Path(default_model_dir()) / "scanner"
    return path if (path / "heads.safetensors").is_file() else None


def scanner_pipeline(source: str = DEFAULT_SOURCE, heads: Path | None = None) -> Language:
    """Encoder from ``source`` + ``stoicheia_scanner`` loaded from ``heads`` (default: shipped)."""
    from ..pipeline import scanner as _scanner  # noqa: F401  (registers the factory)
    from .package import build_pipeline

    heads = heads or scanner_dir()
    if heads is None:
        raise typer.BadParameter("no trained scanner heads found (train with projects/meter)")
    nlp = build_pipeline(source, components=False)  # only the encoder: the scanner is added below
    nlp.add_pipe("stoicheia_scanner").from_disk(heads)  # type: ignore[attr-defined]
    return nlp


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


@app.command("scan")
def scan(
    text: str = typer.Argument(..., help="Greek verse; separate lines with newlines"),
    heads: Path = typer.Option(None, help="scanner heads folder (default: shipped)"),
    source: str = typer.Option(DEFAULT_SOURCE, help="backbone checkpoint"),
    abstain_below: float = typer.Option(0.0, help="leave macrons unmarked below this confidence"),
) -> None:
    """Scan, macronize and detect the metre of TEXT."""
    import torch

    torch.set_num_threads(1)
    nlp = scanner_pipeline(source, heads)
    nlp.get_pipe("stoicheia_scanner").cfg["abstain_below"] = abstain_below  # type: ignore[attr-defined]
    typer.echo(format_doc(nlp(text.replace("\\n", "\n"))))
