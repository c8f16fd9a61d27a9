"""``stoicheia bench`` / ``stoicheia corpus`` come from the lab's entry points; without the lab
they say how to install it."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

import pytest
import typer
from typer.testing import CliRunner

app_module = importlib.import_module("stoicheia_spacy.cli.app")


def test_without_the_lab_each_lab_command_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "entry_points", lambda group: [])
    target = typer.Typer()
    app_module.add_commands(target)
    for name in ("bench", "corpus"):
        result = CliRunner().invoke(target, [name, "quality", "--dev-letters", "10"])
        assert result.exit_code == 1
        assert "pip install -e lab" in result.output
        assert f"`stoicheia {name}` is part of the lab" in result.output


def test_the_installed_lab_registers_bench_and_corpus() -> None:
    names = {ep.name for ep in entry_points(group=app_module.COMMANDS_GROUP)}
    if not names:
        pytest.skip("the lab is not installed here (`pip install -e lab`; `make install` does it)")
    assert {"bench", "corpus"} <= names
    result = CliRunner().invoke(app_module.app, ["bench", "--help"])
    assert result.exit_code == 0 and "codec" in result.output and "quality" in result.output
