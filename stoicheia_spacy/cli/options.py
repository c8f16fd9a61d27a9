"""The one flag vocabulary of the ``stoicheia`` commands.

Every flag means the same in every command that has it:

* ``TEXT_OR_FILE``: the text itself, or a UTF-8 file of it; text without a Greek letter is
  refused (:func:`read_input`);
* ``-m/--model MODEL``: a pipeline (installed package, or folder with ``config.cfg``) or a
  backbone checkpoint (hub id, folder, ``embedded:NAME``), see :mod:`.loading`;
* ``-f/--format NAME``: what is written, with the same names everywhere: ``text`` (for
  people), ``json`` (one JSON object per line and Doc), ``conllu``, ``epidoc``...;
  ``--json`` is ``--format json`` in every command that writes JSON;
* ``--unit line|paragraph|file``: a file is one Doc per line, blank-line paragraph or, by
  default in every command, the whole file;
* ``-o/--output PATH``: where the result goes instead of standard output: a file for the
  commands that write one stream, a folder for those that write several files
  (``annotate``, ``package``);
* ``--debug``: the traceback of an error (:class:`.command.Command`), else one
  ``error: ...`` line naming the fix.

A CLI option that overrides a component setting defaults to ``None`` and reaches the
component (``nlp.pipe(..., component_cfg=...)``) only when given, so a pipeline's own
settings (e.g. a packaged ``beam_width``) hold otherwise (:func:`given`).
The deprecated ``--source`` (now ``--model``) and ``parse --paragraphs`` (now ``--unit
paragraph``) still work and print what replaced them. Colours only on a terminal
(:func:`printer`).
"""

from __future__ import annotations

import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from thinc.api import ConfigValidationError
from wasabi import Printer

from ..errors import ConfigError, LexiconMissingError

MODEL_HELP = ("Pipeline (installed package, or folder with config.cfg) or backbone checkpoint "
              "(hub id, folder, embedded:NAME); default: grc_stoicheia_doc_clean if installed, "
              "else the embedded model")

#: A Greek letter (Greek and Coptic, Greek Extended).
_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")
#: An ANSI escape sequence (colour, bold).
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: A letter of any script (a text with letters but no Greek one is not read).
_LETTER = re.compile(r"[^\W\d_]")


class Unit(StrEnum):
    """What one Doc is when reading a file."""

    line = "line"
    paragraph = "paragraph"
    file = "file"


#: The ``--unit`` default of every command.
DEFAULT_UNIT = Unit.file


def model_option() -> Any:
    """``-m/--model MODEL``."""
    return typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP)


def source_option() -> Any:
    """The deprecated ``--source CHECKPOINT`` (hidden; means ``--model``)."""
    return typer.Option(None, "--source", metavar="CHECKPOINT", hidden=True,
                        help="Deprecated: use --model")


def format_option(default: Any, choices: str, help_text: str) -> Any:
    """``-f/--format NAME``."""
    return typer.Option(default, "--format", "-f", metavar=choices, help=help_text)


def json_option() -> Any:
    """``--json``: the same as ``--format json``."""
    return typer.Option(False, "--json", metavar="", help="The same as --format json")


def unit_option() -> Any:
    """``--unit line|paragraph|file`` (default :data:`DEFAULT_UNIT`)."""
    return typer.Option(DEFAULT_UNIT, "--unit", metavar="line|paragraph|file",
                        help="When the input is a file: one Doc per line, blank-line paragraph, or the whole file")


def output_option(folder: bool = False) -> Any:
    """``-o/--output FILE`` (``folder``: ``-o/--output DIR``)."""
    if folder:
        return typer.Option(None, "--output", "-o", metavar="DIR",
                            help="Folder to write into (one file per input file and format)")
    return typer.Option(None, "--output", "-o", metavar="FILE", help="Write here instead of standard output")


def text_argument(example: str) -> Any:
    """The positional ``TEXT_OR_FILE``."""
    return typer.Argument(..., metavar="TEXT_OR_FILE", show_default=False,
                          help=f"Greek text, or a UTF-8 file of it, e.g. '{example}'")


def flag(name: str, help_text: str) -> Any:
    """A boolean ``--name`` flag (no type placeholder in the help)."""
    return typer.Option(False, name, metavar="", help=help_text)


class PlainPrinter(Printer):
    """A wasabi printer whose dividers are plain too when colours are off (wasabi bolds them
    whatever ``show_color`` says)."""

    def divider(self, *args: Any, **kwargs: Any) -> str | None:
        if self.show_color:
            return super().divider(*args, **kwargs)
        no_print, self.no_print = self.no_print, True
        try:
            line = super().divider(*args, **kwargs)
        finally:
            self.no_print = no_print
        if line is None or self.no_print:
            return None if line is None else _ANSI.sub("", line)
        print(_ANSI.sub("", line))
        return None


def printer(no_print: bool = False) -> Printer:
    """A wasabi printer with colours only when standard output is a terminal (no ANSI
    codes in a file or a pipe)."""
    msg = PlainPrinter(no_print=no_print)
    msg.show_color = msg.show_color and sys.stdout.isatty()
    return msg


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


def chosen_format(fmt: Any, as_json: bool) -> str:
    """The ``--format`` value, ``json`` when ``--json`` is given (with a default or the same
    ``--format``); ``--json`` with another ``--format`` is refused."""
    value = str(getattr(fmt, "value", fmt))
    if not as_json:
        return value
    if value not in ("json", "text", "conllu"):  # the defaults: --json replaces them
        raise fail(f"--json means --format json: give one of --json and --format {value}")
    return "json"


def given(**options: Any) -> dict[str, Any]:
    """The options that were given (not ``None``): what a command passes to a component."""
    return {name: value for name, value in options.items() if value is not None}


def load(command: str, model: str | None, **kwargs: Any) -> Any:
    """:func:`.loading.load_for`, a bad ``--model`` reported as a usage error (status 2)."""
    from .loading import load_for

    try:
        return load_for(command, model, **kwargs)
    except LexiconMissingError:  # a data package to install, not a bad --model: one error line
        raise
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


def looks_like_path(text: str) -> bool:
    """``text`` reads as a file name (``notes.txt``, ``./a``, ``dir/a.xml``) rather than Greek text."""
    return (not _GREEK.search(text) and len(text) < 256 and "\n" not in text and " " not in text
            and ("/" in text or "\\" in text or re.search(r"\.[A-Za-z0-9]{1,5}$", text) is not None))


def read_text(text_or_file: str) -> str:
    """TEXT_OR_FILE's text: the file's, standard input's for ``-``, or the argument itself (a
    literal ``\\n`` is a newline). A name that reads as a path of a missing file is refused (not
    read as the text)."""
    if text_or_file == "-":
        return sys.stdin.read()
    path = input_file(text_or_file)
    if path is None:
        if looks_like_path(text_or_file):
            raise fail(f"{text_or_file}: no such file (give Greek text or the path of a UTF-8 file)")
        return text_or_file.replace("\\n", "\n")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from exc


def require_greek(texts: list[str], where: str = "the text") -> None:
    """Refuse a text with letters but no Greek one (Latin, transliteration); markup alone
    (``[---]``, a line number) passes."""
    for text in texts:
        if not _GREEK.search(text) and _LETTER.search(text):
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise fail(f"{where} has no Greek letters ({shown!r}): stoicheia reads Ancient Greek in "
                       "Greek script (Unicode, with or without accents)")


def read_input(text_or_file: str, unit: Unit) -> list[str]:
    """The Docs' texts: :func:`read_text` cut by ``unit``; empty units are dropped; each
    must hold a Greek letter."""
    text = read_text(text_or_file)
    path = input_file(text_or_file)
    if unit is Unit.file:
        parts = [text]
    elif unit is Unit.paragraph:
        parts = [" ".join(p.split()) for p in text.split("\n\n")]
    else:
        parts = text.splitlines()
    parts = [p for p in parts if p.strip()]
    if not parts:
        raise fail("no text to read" + (f" in {path}" if path is not None else ""))
    require_greek(parts, str(path) if path is not None else "the text")
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
