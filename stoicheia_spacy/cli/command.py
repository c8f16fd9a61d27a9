"""The command class of every ``stoicheia`` command: help with real placeholders, one
``error: ...`` line for an error (``--debug``: the traceback)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from ..errors import CheckpointError, ModelNotAvailableError, StoicheiaError

#: What to do about an error of each kind (appended to its message when it does not say it).
FIXES: dict[type[Exception], str] = {
    CheckpointError: "give a folder holding a complete config.json and model.safetensors, or download it again",
    ModelNotAvailableError: "check the name, or pass a local folder with --model",
}


def error_line(exc: BaseException) -> str:
    """The one line an error is reported with: its kind, its message (on one line), the fix."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, StoicheiaError):
        fix = next((text for kind, text in FIXES.items() if isinstance(exc, kind)), None)
        head = f"{type(exc).__name__}: {message}"
        return head if fix is None or fix in message else f"{head} ({fix})"
    if isinstance(exc, OSError):
        return message
    return f"{type(exc).__name__}: {message} (an unexpected error: rerun with --debug for the traceback)"


def _debug_option() -> Any:
    """A fresh ``--debug`` flag, made by typer as it makes the commands' own options."""

    def probe(debug: bool = typer.Option(False, "--debug", help="Show the traceback of an error "
                                         "(else one error: line)")) -> None:
        """Hold the option."""

    holder = typer.Typer(add_completion=False)
    holder.command()(probe)
    (option,) = typer.main.get_command(holder).params
    option.metavar = ""
    return option


class Command(TyperCommand):
    """A command whose help shows real placeholders: a positional argument by its name
    alone (``TEXT_OR_FILE``, not ``{text} <str>``), a flag with none (not ``<bool>``), an
    option by its choices or its name (``--out OUT``); with ``--debug`` (except pass-through
    commands, whose options are their module's), an error shows its traceback, else one
    ``error: ...`` line on stderr and status 1."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for param in self.params:
            if isinstance(param, TyperArgument):
                placeholder = param.metavar or (param.name or "ARG").upper()
                param.metavar = placeholder
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
                param._usage_display_name = lambda p=placeholder: p  # type: ignore[method-assign, misc]
            elif isinstance(param, TyperOption) and param.metavar is None:
                desc = param.type_descriptor
                choices = [getattr(c, "value", c) for c in desc.choices or ()] if desc.is_choice else []
                param.metavar = ("" if param.is_flag else "|".join(map(str, choices)) if choices
                                 else max(param.opts, key=len).lstrip("-").replace("-", "_").upper())
        self.debuggable = not (self.context_settings or {}).get("ignore_unknown_options")
        if self.debuggable:
            self.params.append(_debug_option())

    def invoke(self, ctx: Any) -> Any:
        debug = bool(ctx.params.pop("debug", False)) if self.debuggable else True
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if debug or type(exc).__module__.split(".")[0] in ("click", "typer"):  # exits, usage errors
                raise
            typer.echo(f"error: {error_line(exc)}", err=True)
            raise typer.Exit(1) from exc
