"""``stoicheia`` command line: one module per command, all on one typer ``app`` (:mod:`.app`)."""

from __future__ import annotations

from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    app()
