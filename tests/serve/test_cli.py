"""``stoicheia serve`` on the command line: loopback by default, clear messages for bad options."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from stoicheia_spacy.cli import app


def test_serve_binds_loopback_by_default() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "127.0.0.1" in result.output and "Example: stoicheia serve" in result.output


def test_a_missing_pipeline_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["serve", "--model", str(tmp_path / "nowhere"), "--port", "8099"])
    assert result.exit_code == 1
    assert "cannot load the pipeline" in result.output and "Traceback" not in result.output


def test_model_and_source_exclude_each_other() -> None:
    result = CliRunner().invoke(app, ["serve", "--model", "a", "--source", "b"])
    assert result.exit_code == 2 and "not both" in result.output
