"""Typer commands that hand their arguments to an argparse ``main(argv)`` (benchmarks, pretraining)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

import typer

#: Context of a pass-through command: everything after its name goes to ``main(argv)``.
PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False,
                "help_option_names": []}


def pass_through(module: str, help_text: str, *, missing: str | None = None,
                 importer: Callable[[], ModuleType] | None = None) -> Callable[[typer.Context], None]:
    """A command calling ``module.main(args)``, imported only when the command runs (by
    ``importer`` when given).

    ``-h``/``--help`` print ``help_text`` (summary and example) and then the module's own
    options. ``missing``: the message for a module that cannot be imported.
    """

    def command(ctx: typer.Context) -> None:
        args = list(ctx.args)
        if args[:1] in (["-h"], ["--help"]):
            typer.echo(f"{help_text}\n")
        try:
            target = importer() if importer is not None else importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if missing is None or not (exc.name and module.startswith(exc.name)):
                raise
            typer.echo(f"error: {missing}", err=True)
            raise typer.Exit(1) from exc
        try:
            status = target.main(args)
        except SystemExit as exc:  # argparse's --help and usage errors
            status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
        raise typer.Exit(int(status or 0))

    command.__doc__ = help_text
    return command
