"""Errors on the command line: one ``error: ...`` line naming the fix and a non-zero status
(``--debug``: the traceback), the same line for non-Greek input in every command, no colour
codes when the output is not a terminal, and CLI options that reach a component only when
given (a pipeline's own ``beam_width`` holds otherwise)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stoicheia_spacy.cli import app
from stoicheia_spacy.errors import LexiconMissingError
from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
DECREE = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι [.4] ἐπεστάτει"


def _one_error_line(result: Any, *needles: str) -> str:
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture()
def corrupt_checkpoint(tmp_path: Path) -> Path:
    folder = tmp_path / "corrupt"
    folder.mkdir()
    (folder / "config.json").write_text((TINY / "config.json").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    return folder


def test_a_corrupt_checkpoint_is_one_line_naming_the_fix(corrupt_checkpoint: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["package", str(corrupt_checkpoint), "--name", "x", "-o", str(tmp_path / "o")])
    line = _one_error_line(result, "CheckpointError", "model.safetensors", "download it again")
    assert len(result.stderr.splitlines()) <= 2, result.stderr  # the line, at most the info before it
    assert line.count("\n") == 0
    debug = CliRunner().invoke(app, ["package", str(corrupt_checkpoint), "--name", "x", "-o", str(tmp_path / "o"),
                                     "--debug"])
    assert debug.exit_code != 0 and type(debug.exception).__name__ == "CheckpointError"  # the traceback


def test_a_mistyped_local_path_is_not_sent_to_the_hub(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    for source in (str(tmp_path / "models" / "tiny2"), "./tiny2", "models/a/b"):
        result = CliRunner().invoke(app, ["package", source, "--name", "x", "-o", str(tmp_path / "o")])
        _one_error_line(result, f"{source}: no such folder", "Hugging Face repo id")


def test_a_missing_data_package_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import stoicheia_spacy.cli.loading as loading

    def missing(*args: object, **kwargs: object) -> None:
        raise LexiconMissingError("stoicheia-lexicon-grc is not installed: run `make lexicon`")

    monkeypatch.setattr(loading, "load_for", missing)
    result = CliRunner().invoke(app, ["accentuate", "λογος"])
    _one_error_line(result, "LexiconMissingError", "make lexicon")


def test_an_unexpected_error_says_how_to_see_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import stoicheia_spacy.cli.loading as loading

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(loading, "load_for", broken)
    _one_error_line(CliRunner().invoke(app, ["accentuate", "λογος"]), "KeyError", "rerun with --debug")
    assert isinstance(CliRunner().invoke(app, ["accentuate", "λογος", "--debug"]).exception, KeyError)


@pytest.mark.parametrize("command", ["restore", "accentuate", "parse", "scan", "date", "which-model"])
@pytest.mark.parametrize("text", ["Gallia est omnis divisa", "[abc"])
def test_non_greek_input_is_the_same_line_everywhere(command: str, text: str) -> None:
    result = CliRunner().invoke(app, [command, text])
    _one_error_line(result, "has no Greek letters", "Greek script")


def test_a_missing_file_is_not_read_as_text() -> None:
    result = CliRunner().invoke(app, ["parse", "corpus/homer.txt"])
    _one_error_line(result, "corpus/homer.txt: no such file")


def test_which_model_reads_a_file(tmp_path: Path) -> None:
    passage = tmp_path / "passage.txt"
    passage.write_text("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην", encoding="utf-8")
    from_file = CliRunner().invoke(app, ["which-model", str(passage), "--json"])
    as_text = CliRunner().invoke(app, ["which-model", passage.read_text(encoding="utf-8"), "-f", "json"])
    assert from_file.exit_code == 0 and as_text.exit_code == 0, from_file.output + as_text.output
    assert json.loads(from_file.stdout) == json.loads(as_text.stdout)


def test_json_and_another_format_are_refused() -> None:
    result = CliRunner().invoke(app, ["restore", DECREE, "--json", "--format", "epidoc"])
    _one_error_line(result, "--json means --format json")


def test_no_colour_codes_in_a_pipe(tmp_path: Path) -> None:
    """``restore`` prints coloured tables on a terminal; through a pipe or into a file, none."""
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    env.pop("ANSI_COLORS_DISABLED", None)
    done = subprocess.run([sys.executable, "-m", "stoicheia_spacy.cli", "restore", DECREE, "-m", str(TINY),
                           "--beam", "2", "--top", "2"], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "gap 1" in done.stdout and "confident" in done.stdout
    assert "\x1b[" not in done.stdout + done.stderr


def test_colours_follow_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from stoicheia_spacy.cli import options

    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert not options.printer().show_color
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr("wasabi.printer.supports_ansi", lambda: True)
    monkeypatch.delenv("WASABI_LOG_FRIENDLY", raising=False)
    assert options.printer().show_color


# --- options that reach a component only when given ----------------------------------------

@pytest.fixture(scope="module")
def narrow_beam_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny checkpoint's encoder and a restorer whose packaged beam_width is 3."""
    from stoicheia_spacy.assembly import build_pipeline

    nlp = build_pipeline(str(TINY), components=False)
    nlp.add_pipe("stoicheia_restorer").configure(beam_width=3, n_candidates=12)
    folder = tmp_path_factory.mktemp("pipeline") / "p"
    nlp.to_disk(folder)
    return folder


@pytest.fixture()
def seen_settings(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The restorer's settings each time it restores a batch."""
    from stoicheia_spacy.restore.restorer import StoicheiaRestorer

    seen: list[Any] = []
    original = StoicheiaRestorer._restore

    def spy(self: StoicheiaRestorer, docs: list[Any], only: list[int] | None = None) -> list[Any]:
        seen.append(self.settings)
        return original(self, docs, only)

    monkeypatch.setattr(StoicheiaRestorer, "_restore", spy)
    return seen


def test_an_unset_beam_keeps_the_pipelines(narrow_beam_pipeline: Path, seen_settings: list[Any]) -> None:
    args = ["restore", DECREE, "-m", str(narrow_beam_pipeline), "--json", "--top", "2"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert [(s.beam_width, s.n_candidates) for s in seen_settings] == [(3, 12)]
    result = CliRunner().invoke(app, [*args, "--beam", "5", "--top", "15"])
    assert result.exit_code == 0, result.output
    assert [(s.beam_width, s.n_candidates) for s in seen_settings[1:]] == [(5, 15)]
    (gap,) = json.loads(result.stdout)
    assert 3 < len(gap["candidates"]) <= 15


def test_component_cfg_holds_for_one_call_only(narrow_beam_pipeline: Path, seen_settings: list[Any]) -> None:
    from stoicheia_spacy.assembly import load_pipeline

    nlp = load_pipeline(narrow_beam_pipeline)
    restorer: Any = nlp.get_pipe("stoicheia_restorer")
    list(nlp.pipe([DECREE], component_cfg={"stoicheia_restorer": {"beam_width": 7}}))
    nlp(DECREE)
    assert [s.beam_width for s in seen_settings] == [7, 3]
    assert restorer.settings.beam_width == 3 and nlp.config["components"]["stoicheia_restorer"]["settings"][
        "beam_width"] == 3


def test_a_metre_the_decode_does_not_apply_is_refused() -> None:
    """``scan --meter``: the default lattice decode forces it (issue 41); a verse no path of the
    metre fits (Odyssey 1.1 as a pentameter) is one error line."""
    pytest.importorskip("grc_stoicheia_doc_clean")
    verse = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
    same = CliRunner().invoke(app, ["scan", verse, "--meter", "hex", "--json"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.stdout)["verses"][0]["meter"]["name"] == "dactylic_hexameter"
    _one_error_line(CliRunner().invoke(app, ["scan", verse, "--meter", "penta"]),
                    "--meter penta", "no scansion of", "fits it")
    research = CliRunner().invoke(app, ["scan", verse, "--meter", "penta", "--format", "research"])
    assert research.exit_code == 0 and "[" in research.stdout
    _one_error_line(CliRunner().invoke(app, ["scan", verse, "--meter", "xyz"]), "ConfigError", "'xyz'")
