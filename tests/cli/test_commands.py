"""One ``stoicheia`` command line: every command's help has an example, choices are enums,
the ``python -m`` entry points are aliases of the sub-applications, and the package never
imports the standalone ``pretrain`` package on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from stoicheia_spacy.cli import app

REPO = Path(__file__).resolve().parents[2]


def _commands() -> list[list[str]]:
    """The argument path of every leaf command (``["corpus", "fetch"]``, ``["parse"]``, ...)."""
    paths: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            paths.append(path)

    walk(typer.main.get_command(app), [])
    return paths


def test_every_group_is_there() -> None:
    names = {p[0] for p in _commands()}
    assert {"accentuate", "demo", "package", "parse", "restore", "scan", "corpus", "bench", "pretrain"} <= names
    assert {p[1] for p in _commands() if p[0] == "corpus"} == {
        "fetch", "normalize", "tiers", "folds", "doc-clean", "verify", "report"}
    assert {"codec", "backbone", "quality", "restore", "parse"} <= {p[1] for p in _commands() if p[0] == "bench"}


@pytest.mark.parametrize("path", _commands(), ids=lambda p: " ".join(p))
def test_every_command_help_has_an_example(path: list[str]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    examples = [line for line in result.output.splitlines() if "Example: stoicheia " in line]
    assert examples, result.output
    assert f"stoicheia {' '.join(path)}" in examples[0]


def test_choices_are_enums() -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["accentuate", "λογος", "--diacritics", "guess"])
    assert bad.exit_code == 2 and "guess" in bad.output
    bad = runner.invoke(app, ["parse", str(REPO / "README.md"), "--format", "xml"])
    assert bad.exit_code == 2 and "xml" in bad.output
    bad = runner.invoke(app, ["corpus", "fetch", "--dest", "x", "--sources", "nowhere"])
    assert bad.exit_code == 2 and "nowhere" in bad.output


def test_bench_passes_its_options_through(capsys: pytest.CaptureFixture[str]) -> None:
    from stoicheia_lab.bench.__main__ import main

    assert main(["codec", "--mb", "0.02", "--repeat", "1"]) == 0
    assert "encode_planes" in capsys.readouterr().out
    assert main(["nope"]) == 2


def test_corpus_alias_reports_errors_with_status_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stoicheia_lab.corpus.__main__ import main

    assert main(["folds", "--corpus", str(tmp_path / "nothing")]) == 1
    assert main(["--help"]) == 0
    assert "Example: stoicheia corpus" not in capsys.readouterr().out  # group help lists the steps
    assert main(["tiers", "--help"]) == 0
    assert "Example: stoicheia corpus tiers" in capsys.readouterr().out


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env,
                          check=False)


def test_the_package_never_imports_pretrain(tmp_path: Path) -> None:
    code = ("import sys, stoicheia_spacy.cli, stoicheia_spacy.assembly, stoicheia_spacy.registrations as r; "
            "r.register_all(); print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'pretrain')))")
    out = _python("import json; " + code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_pretrain_delegates_when_importable_and_says_so_when_not(tmp_path: Path) -> None:
    presets = CliRunner().invoke(app, ["pretrain", "presets"])
    assert presets.exit_code == 0, presets.output
    assert "cpu" in json.loads(presets.output)
    code = ("import sys; sys.modules['pretrain'] = None; from pathlib import Path; from typer.testing import CliRunner; "
            "import stoicheia_spacy.cli.pretrain as p; p.CHECKOUT = Path(sys.argv[1]); "
            "from stoicheia_spacy.cli import app; r = CliRunner().invoke(app, ['pretrain', 'presets']); "
            "print(r.exit_code); print(r.output)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert out.returncode == 0, out.stderr
    status, _, message = out.stdout.partition("\n")
    assert status == "1" and "ships with the repository, not with the wheel" in message


def test_pretrain_runs_from_any_folder_when_installed_from_a_checkout(tmp_path: Path) -> None:
    """Not importable from the folder it runs in (no checkout on the path), ``stoicheia
    pretrain`` finds the package beside the installed stoicheia_spacy (``make install``)."""
    code = ("import sys, importlib.util; sys.path.insert(0, sys.argv[1]); import stoicheia_spacy.cli as cli; "
            "sys.path = [p for p in sys.path if p not in ('', '.', sys.argv[1])]; "
            "assert importlib.util.find_spec('pretrain') is None; "
            "sys.argv = ['stoicheia', 'pretrain', 'presets']; cli.main()")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, cwd=tmp_path,
                         env=env, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "cpu" in json.loads(out.stdout)
