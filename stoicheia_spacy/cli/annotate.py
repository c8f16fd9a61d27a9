"""``stoicheia annotate INPUT --out DIR``: annotate a corpus, locally or on a Ray cluster.

INPUT is a plain-text file (one document per line, paragraph or file: ``--unit``), a
JSON-lines file of ``{"id", "text", ...}`` records, an EpiDoc TEI file (``.xml``: its edition,
one document), or a folder of them (``.gz`` too). Each
input file gives one output file per ``--format`` in DIR; finished files are skipped on a
rerun, records that cannot be annotated are listed in ``DIR/NAME.errors.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from wasabi import Printer


def annotate_command(
    source: Path = typer.Argument(..., help="Text / JSON-lines / EpiDoc .xml file, or a folder of them"),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (one file per input file and format)"),
    model: str = typer.Option(None, "--model", help="Pipeline package name or directory (default: grc_stoicheia_doc_clean)"),
    output_format: str = typer.Option("jsonl", "--format", help="jsonl, conllu, docbin (comma-separated for several)"),
    components: str = typer.Option(None, "--components", help="Run only these components, e.g. restorer"),
    engine: str = typer.Option("local", "--engine", help="local or ray"),
    n_process: int = typer.Option(1, "--n-process", "-n", help="Worker processes (local) or actors (ray)"),
    threads: int = typer.Option(1, "--threads", help="torch threads per worker"),
    address: str = typer.Option(None, "--address", help="Existing Ray cluster (e.g. ray://head:10001 or auto)"),
    batch_size: int = typer.Option(32, "--batch-size", help="Records per task"),
    max_chars: int = typer.Option(4096, "--max-chars", help="Longer texts are annotated in pieces of this size"),
    unit: str = typer.Option("line", "--unit", help="Plain text: a document per line, paragraph or file"),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar"),
) -> None:
    """Annotate SOURCE into OUT with a pipeline, resumably.

    Example: stoicheia annotate corpus.jsonl --out annotated
    """
    from ..annotate import EngineConfig, annotate
    from ..errors import StoicheiaError

    msg = Printer()
    formats = [f.strip() for f in output_format.split(",") if f.strip()]
    cfg = EngineConfig(model=model, threads=threads, workers=n_process, address=address, max_chars=max_chars,
                       components=[c.strip() for c in components.split(",")] if components else None)
    try:
        summary = annotate(source, out, formats=formats, engine=engine, config=cfg, batch_size=batch_size,
                           unit=unit, progress=not quiet)
    except StoicheiaError as exc:
        msg.fail(f"{type(exc).__name__}: {exc}", exits=1)
    for err in summary.errors[:20]:
        msg.warn(f"skipped {err['id']}: {err['error']}")
    if len(summary.errors) > 20:
        msg.warn(f"... {len(summary.errors) - 20} more in {out}/*.errors.jsonl")
    msg.good(json.dumps(summary.to_dict(), ensure_ascii=False))
