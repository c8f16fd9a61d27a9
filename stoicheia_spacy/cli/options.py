"""The one flag vocabulary of the commands that read Greek text.

Every such command takes ``TEXT_OR_FILE`` (the text itself, or a UTF-8 file), ``--model``
(a pipeline or a checkpoint, see :mod:`.loading`), ``--format`` (what it writes),
``--unit`` (a file is one Doc per ``line``, ``paragraph`` or the whole ``file``) and
``--output``/``-o``. Old spellings still work and print a deprecation message:
``--source`` (now ``--model``), ``--json`` (now ``--format json``) and ``parse
--paragraphs`` (now ``--unit paragraph``). Bad input ends with ``error: ...`` on stderr and
status 1, never a traceback (:func:`friendly`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

MODEL_HELP = ("Pipeline (installed package, or folder with config.cfg) or backbone checkpoint "
              "(hub id, folder, embedded:NAME); default: grc_stoicheia_doc_clean if installed, "
              "else the embedded model")


class Unit(StrEnum):
    """What one Doc is when reading a file."""

    line = "line"
    paragraph = "paragraph"
    file = "file"


def model_option() -> Any:
    """``--model MODEL``."""
    return typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP)


def source_option() -> Any:
    """The deprecated ``--source CHECKPOINT`` (hidden; means ``--model``)."""
    return typer.Option(None, "--source", metavar="CHECKPOINT", hidden=True,
                        help="Deprecated: use --model")


def json_option() -> Any:
    """The deprecated ``--json`` flag (hidden; means ``--format json``)."""
    return typer.Option(False, "--json", metavar="", hidden=True, help="Deprecated: use --format json")


def unit_option(default: Unit) -> Any:
    """``--unit line|paragraph|file``."""
    return typer.Option(default, "--unit", metavar="line|paragraph|file",
                        help="When TEXT_OR_FILE is a file: one Doc per line, blank-line paragraph, or the whole file")


def output_option() -> Any:
    """``--output FILE`` / ``-o FILE``."""
    return typer.Option(None, "--output", "-o", metavar="FILE", help="Write here instead of stdout")


def text_argument(example: str) -> Any:
    """The positional ``TEXT_OR_FILE``."""
    return typer.Argument(..., metavar="TEXT_OR_FILE", show_default=False,
                          help=f"Greek text, or a UTF-8 file of it, e.g. '{example}'")


def flag(name: str, help_text: str) -> Any:
    """A boolean ``--name`` flag (no type placeholder in the help)."""
    return typer.Option(False, name, metavar="", help=help_text)


def warn(message: str) -> None:
    """A message on stderr."""
    typer.echo(f"warning: {message}", err=True)


def deprecated_model(model: str | None, source: str | None) -> str | None:
    """``--model``, or the deprecated ``--source`` with a message."""
    if source is not None:
        warn("--source is deprecated: use --model (it takes a pipeline or a checkpoint)")
        if model is None:
            return source
    return model


def deprecated_json(output_format: str, as_json: bool) -> str:
    """``--format``, or ``json`` for the deprecated ``--json`` with a message."""
    if as_json:
        warn("--json is deprecated: use --format json")
        return "json"
    return output_format


def load(command: str, model: str | None, **kwargs: Any) -> Any:
    """:func:`.loading.load_for`, a bad ``--model`` reported as a usage error (status 2)."""
    from thinc.api import ConfigValidationError

    from ..errors import ConfigError
    from .loading import load_for

    try:
        return load_for(command, model, **kwargs)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--model") from exc
    except ConfigValidationError as exc:  # e.g. a pipeline saved by an older version of the package
        raise typer.BadParameter(f"{model}: its config does not validate with this version of "
                                 f"stoicheia-spacy (rebuild it with `stoicheia package`): {exc}",
                                 param_hint="--model") from exc


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on stderr; raise the returned ``typer.Exit(1)``."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def input_file(text_or_file: str) -> Path | None:
    """TEXT_OR_FILE as an existing file, or None when it is text."""
    if len(text_or_file) > 1024 or "\n" in text_or_file:
        return None
    path = Path(text_or_file)
    try:
        return path if path.is_file() else None
    except (OSError, ValueError):  # a name invalid for the file system: it is text
        return None


def read_text(text_or_file: str) -> str:
    """TEXT_OR_FILE's text: the file's, or the argument itself (a literal ``\\n`` is a newline)."""
    path = input_file(text_or_file)
    if path is None:
        return text_or_file.replace("\\n", "\n")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from exc


def read_input(text_or_file: str, unit: Unit) -> list[str]:
    """The Docs' texts: :func:`read_text` cut by ``unit``; empty units are dropped."""
    text = read_text(text_or_file)
    is_file = input_file(text_or_file) is not None
    path = Path(text_or_file)
    if unit is Unit.file:
        parts = [text]
    elif unit is Unit.paragraph:
        parts = [" ".join(p.split()) for p in text.split("\n\n")]
    else:
        parts = text.splitlines()
    parts = [p for p in parts if p.strip()]
    if not parts:
        raise fail("no text to read" + (f" in {path}" if is_file else ""))
    return parts


def write_output(text: str, output: Path | None) -> None:
    """``text`` to ``output``, else stdout."""
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror}") from exc


def friendly(command: F) -> F:
    """``command`` with bad input reported as ``error: ...`` and status 1, no traceback:
    package errors (:class:`~stoicheia_spacy.errors.StoicheiaError`), unreadable files and
    missing models (``OSError``)."""
    from ..errors import StoicheiaError

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except StoicheiaError as exc:
            raise fail(f"{type(exc).__name__}: {exc}") from exc
        except OSError as exc:
            raise fail(str(exc)) from exc

    return wrapper  # type: ignore[return-value]
