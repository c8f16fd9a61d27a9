"""One flag vocabulary: every command's ``--help`` works, a short flag is the same long flag
everywhere, ``-m/--model``, ``-f/--format`` (with ``--json`` where JSON is written),
``--unit`` and ``-o/--output`` mean one thing in every command, and every flag the README
and the docs show (``stoicheia CMD ... --flag``) exists on that command."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from stoicheia_spacy.cli import app
from stoicheia_spacy.cli.loading import NEEDS
from stoicheia_spacy.cli.options import DEFAULT_UNIT, MODEL_HELP

REPO = Path(__file__).resolve().parents[2]
#: Commands that load a pipeline (``-m/--model``).
LOADERS = {*NEEDS, "annotate", "serve", "demo"}
#: Commands whose ``-o/--output`` is a folder (they write several files); the others write a file.
FOLDER_OUTPUT = {"annotate", "package"}


def _leaves() -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        else:
            out[path] = command

    walk(typer.main.get_command(app), ())
    return out


LEAVES = _leaves()
#: Commands whose options are their module's own (argparse: pretrain, bench), not this vocabulary.
PASS_THROUGH = {path[0] for path, command in LEAVES.items()
                if (command.context_settings or {}).get("ignore_unknown_options")}
OWN = {path: command for path, command in LEAVES.items() if path[0] not in PASS_THROUGH}


def _option(command: Any, name: str) -> Any:
    return next((p for p in command.params if name in getattr(p, "opts", ())), None)


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_every_help_works(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    if "Needs the lab" in result.output:  # the lab is not installed: the command says how to get it
        return
    assert result.exit_code == 0, result.output
    assert "Example: stoicheia " + " ".join(path) in result.output
    if path[0] not in PASS_THROUGH:
        assert "--debug" in result.output  # the traceback of an error, on request


def test_a_short_flag_is_one_long_flag_everywhere() -> None:
    longs: dict[str, set[str]] = {}
    for command in OWN.values():
        for param in command.params:
            opts = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
            for short in (o for o in opts if re.fullmatch(r"-[A-Za-z]", o)):
                longs.setdefault(short, set()).update(o for o in opts if o.startswith("--"))
    assert {s: v for s, v in longs.items() if len(v) != 1} == {}
    assert longs["-m"] == {"--model"} and longs["-o"] == {"--output"} and longs["-f"] == {"--format"}
    assert longs["-n"] == {"--name"}  # package; annotate's workers are --n-process


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_every_loader_takes_model(name: str) -> None:
    model = _option(LEAVES[(name,)], "--model")
    assert model is not None and "-m" in model.opts and model.help == MODEL_HELP, name


def test_format_json_output_and_unit_agree() -> None:
    for path, command in OWN.items():
        fmt = _option(command, "--format")
        if fmt is not None:
            assert "-f" in fmt.opts, path
            names = set(str(fmt.metavar).split("|"))
            assert (_option(command, "--json") is not None) == ("json" in names and path != ("annotate",)), path
        unit = _option(command, "--unit")
        if unit is not None:
            assert str(getattr(unit.default, "value", unit.default)) == DEFAULT_UNIT.value, path
        output = _option(command, "--output")
        if output is not None and path[0] != "corpus":
            assert "-o" in output.opts, path
            assert output.metavar == ("DIR" if path[0] in FOLDER_OUTPUT else "FILE"), path
        source = _option(command, "--source")
        if source is not None and path[0] in LOADERS:
            assert source.hidden, path  # the deprecated spelling of --model


#: ``stoicheia CMD [SUB] ...`` in a code line or an inline code span of the docs.
_SHOWN = re.compile(r"stoicheia ((?:[a-z][\w-]*)(?: [a-z][\w-]*)?)([^`\n]*)")
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _documented() -> list[tuple[str, tuple[str, ...], str]]:
    """(file, command path, flag) of every flag the README and docs show after a command."""
    out = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for match in _SHOWN.finditer(doc.read_text(encoding="utf-8")):
            words = match.group(1).split()
            path = next((p for p in ((*words,), (words[0],)) if p in LEAVES), None)
            if path is None or path[0] in PASS_THROUGH:
                continue
            rest = match.group(2) if len(path) == len(words) else " ".join(words[1:]) + match.group(2)
            out += [(doc.name, path, flag) for flag in _FLAG.findall(rest.split("|")[0] if "|--" in rest else rest)]
    return out


DOCUMENTED = _documented()


def test_the_docs_show_flags() -> None:
    assert len(DOCUMENTED) > 30 and {p[0] for _, p, _ in DOCUMENTED} >= {"restore", "parse", "annotate", "package"}


@pytest.mark.parametrize(("doc", "path", "flag"), DOCUMENTED, ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_every_documented_flag_exists(doc: str, path: tuple[str, ...], flag: str) -> None:
    command = LEAVES[path]
    names = {o for p in command.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
    assert flag in names | {"--help"}, f"{doc}: stoicheia {' '.join(path)} has no {flag}"
    param = next((p for p in command.params if flag in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))),
                 None)
    assert param is None or not param.hidden, f"{doc} shows the deprecated {flag} of stoicheia {' '.join(path)}"
