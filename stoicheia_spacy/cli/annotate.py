"""``stoicheia annotate INPUT -o DIR``: annotate a corpus, locally or on a Ray cluster.

INPUT is a plain-text file (one document per file, blank-line paragraph or line: ``--unit``),
a JSON-lines file of ``{"id", "text", ...}`` records, an EpiDoc TEI file (``.xml``: its
edition, one document), or a folder of them (``.gz`` too). Each input file gives one output
file per ``--format`` in DIR (``json``: ``NAME.jsonl``, one JSON object per document;
``conllu``; ``docbin``); finished files are skipped on a rerun, records that cannot be
annotated are listed in ``DIR/NAME.errors.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .options import Unit, model_option, output_option, printer, unit_option, warn

#: ``--format`` names (the task commands' ``json`` is JSON lines here too) -> the writer's.
FORMAT_NAMES = {"json": "jsonl", "jsonl": "jsonl", "conllu": "conllu", "docbin": "docbin"}

def annotate_command(
    source: Path = typer.Argument(..., metavar="INPUT", help="Text / JSON-lines / EpiDoc .xml file, or a folder of them"),
    output: Path = output_option(folder=True),
    model: str = model_option(),
    output_format: str = typer.Option("json", "--format", "-f", metavar="json|conllu|docbin",
                                      help="What to write (comma-separated for several): json (NAME.jsonl), "
                                           "conllu, docbin"),
    components: str = typer.Option(None, "--components", help="Run only these components, e.g. restorer"),
    engine: str = typer.Option("local", "--engine", metavar="local|ray", help="local or ray"),
    n_process: int = typer.Option(1, "--n-process", metavar="N", help="Worker processes (local) or actors (ray)"),
    threads: int = typer.Option(1, "--threads", metavar="N", help="torch threads per worker"),
    address: str = typer.Option(None, "--address", help="Existing Ray cluster (e.g. ray://head:10001 or auto)"),
    batch_size: int = typer.Option(32, "--batch-size", metavar="N", help="Records per task"),
    max_chars: int = typer.Option(4096, "--max-chars", metavar="N", help="Longer texts are annotated in pieces of this size"),
    unit: Unit = unit_option(),
    quiet: bool = typer.Option(False, "--quiet", metavar="", help="No progress bar"),
    out: Path = typer.Option(None, "--out", hidden=True, help="Deprecated: use --output/-o"),
) -> None:
    """Annotate INPUT into the folder OUTPUT with a pipeline, resumably.

    Example: stoicheia annotate corpus.jsonl -o annotated
    """
    from ..annotate import EngineConfig, annotate

    if out is not None:
        warn("annotate --out is deprecated: use -o/--output")
        output = output or out
    if output is None:
        raise typer.BadParameter("give the folder to write into", param_hint="-o/--output")
    msg = printer()
    names = [f.strip() for f in output_format.split(",") if f.strip()]
    unknown = [f for f in names if f not in FORMAT_NAMES]
    if unknown:
        raise typer.BadParameter(f"{unknown[0]!r}: give json, conllu or docbin (comma-separated)", param_hint="--format")
    formats = list(dict.fromkeys(FORMAT_NAMES[f] for f in names))
    cfg = EngineConfig(model=model, threads=threads, workers=n_process, address=address, max_chars=max_chars,
                       components=[c.strip() for c in components.split(",")] if components else None)
    summary = annotate(source, output, formats=formats, engine=engine, config=cfg, batch_size=batch_size,
                       unit=unit.value, progress=not quiet)
    for err in summary.errors[:20]:
        msg.warn(f"skipped {err['id']}: {err['error']}")
    if len(summary.errors) > 20:
        msg.warn(f"... {len(summary.errors) - 20} more in {output}/*.errors.jsonl")
    msg.good(json.dumps(summary.to_dict(), ensure_ascii=False))

