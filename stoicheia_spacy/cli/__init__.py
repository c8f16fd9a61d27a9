"""``stoicheia`` command line: one module per command group, all on one typer ``app``."""

from __future__ import annotations

from . import accentuate as _accentuate  # noqa: F401  (registers the command)
from . import annotate as _annotate  # noqa: F401  (registers the command)
from . import demo as _demo  # noqa: F401  (registers the command)
from . import package as _package  # noqa: F401  (registers the command)
from . import parse as _parse  # noqa: F401  (registers the command)
from . import restore as _restore  # noqa: F401  (registers the command)
from . import scan as _scan  # noqa: F401  (registers the command)
from . import which_model as _which_model  # noqa: F401  (registers the command)
from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    app()
