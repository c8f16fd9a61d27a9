"""The typer application behind the ``stoicheia`` console command."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="stoicheia",
    help="Stoicheia for spaCy: package released checkpoints as pipelines, run demos.",
    no_args_is_help=True,
    add_completion=False,
)
