"""The command line as a user meets it: each command loads only the components it needs, one
flag vocabulary (old spellings warn and still work), help with real placeholders, bad
input as one clear message; and the runtime package without the lab's dependencies, on
the default pipeline, which keeps a Leiden gap one token in one sentence."""

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
from stoicheia_spacy.cli.loading import NEEDS, excluded, load_for
from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
DECREE = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι [.4] ἐπεστάτει"


def _leaves() -> list[tuple[list[str], Any]]:
    out: list[tuple[list[str], Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            out.append((path, command))

    walk(typer.main.get_command(app), [])
    return out


@pytest.mark.parametrize("path", [p for p, c in _leaves() if p[0] not in {"bench", "pretrain"}],
                         ids=lambda p: " ".join(p))
def test_help_shows_real_placeholders(path: list[str]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for tag in ("<bool>", "<str>", "<int>", "<path>", "<float>", "<list"):
        assert tag not in result.output, (path, tag, result.output)
    usage = next(line for line in result.output.splitlines() if line.startswith("Usage:"))
    assert "{" not in usage, usage


def test_commands_that_read_text_share_one_vocabulary() -> None:
    for command in NEEDS:
        result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
        assert f"{command} [OPTIONS] TEXT_OR_FILE" in result.output, result.output
        for flag in ("--model", "--format", "--unit", "--output"):
            assert flag in result.output, (command, flag)
        assert "--json" in result.output and "--source" not in result.output  # --json: --format json


@pytest.fixture(scope="module")
def saved_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny checkpoint's encoder with a restorer and an accentuator, saved."""
    from stoicheia_spacy.assembly import build_pipeline

    nlp = build_pipeline(str(TINY), components=False)
    nlp.add_pipe("stoicheia_restorer")
    nlp.add_pipe("stoicheia_accentuator")
    folder = tmp_path_factory.mktemp("pipeline") / "p"
    nlp.to_disk(folder)
    return folder


def test_each_command_loads_only_what_it_needs(saved_pipeline: Path) -> None:
    assert excluded(saved_pipeline, NEEDS["restore"]) == ["stoicheia_accentuator"]
    assert load_for("restore", saved_pipeline).pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    assert load_for("accentuate", saved_pipeline).pipe_names == ["stoicheia_encoder"]
    with_restorer = load_for("accentuate", saved_pipeline, extra=["stoicheia_restorer"])
    assert with_restorer.pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]


def test_restore_on_a_saved_pipeline_as_json(saved_pipeline: Path) -> None:
    result = CliRunner().invoke(app, ["restore", DECREE, "--model", str(saved_pipeline), "--format", "json",
                                      "--top", "3", "--beam", "4"])
    assert result.exit_code == 0, result.output
    (gap,) = json.loads(result.stdout)
    assert gap["markup"] == "[.4]" and DECREE[gap["start"]:gap["end"]] == "[.4]"
    assert len(gap["candidates"]) == 3 and all(len(c["text"]) == 4 for c in gap["candidates"])


def test_dash_reads_standard_input(saved_pipeline: Path) -> None:
    result = CliRunner().invoke(app, ["restore", "-", "--model", str(saved_pipeline), "--format", "json",
                                      "--top", "2", "--beam", "4"], input=DECREE + "\n")
    assert result.exit_code == 0, result.output
    (gap,) = json.loads(result.stdout)
    assert gap["markup"] == "[.4]"


def test_text_or_file_and_units(saved_pipeline: Path, tmp_path: Path) -> None:
    source = tmp_path / "decrees.txt"
    source.write_text(f"{DECREE}\n\nτῶι δήμωι [.2] ἔδοξεν\n", encoding="utf-8")
    args = ["restore", str(source), "--model", str(saved_pipeline), "--format", "json", "--beam", "4", "--top", "2"]
    per_line = CliRunner().invoke(app, [*args, "--unit", "line"])
    assert per_line.exit_code == 0, per_line.output
    assert [[g["markup"] for g in json.loads(line)] for line in per_line.stdout.splitlines()] == [["[.4]"], ["[.2]"]]
    whole = CliRunner().invoke(app, [*args, "--unit", "file", "-o", str(tmp_path / "out.jsonl")])
    assert whole.exit_code == 0, whole.output
    (line,) = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [g["markup"] for g in json.loads(line)] == ["[.4]", "[.2]"]


def test_old_flags_warn_and_still_work() -> None:
    result = CliRunner().invoke(app, ["accentuate", "εναρχηηνολογος", "--source", str(TINY), "--json"])
    assert result.exit_code == 0, result.output
    assert "--source is deprecated: use --model" in result.stderr
    assert "--json" not in result.stderr  # an alias of --format json, not deprecated
    assert json.loads(result.stdout)["source"] == "εναρχηηνολογος"
    parse = CliRunner().invoke(app, ["parse", "μῆνιν ἄειδε θεά", "--paragraphs", "--model", str(TINY)])
    assert "--paragraphs is deprecated: use --unit paragraph" in parse.stderr
    # the tiny checkpoint has no morphosyntax heads: one clear line, no traceback
    assert parse.exit_code == 2 and "has no stoicheia_morphologizer" in parse.stderr
    assert "Traceback" not in parse.output


@pytest.mark.parametrize(("args", "message"), [
    (["restore", "ἔδοξεν [.3 τῶι", "--model", str(TINY)], "LeidenSyntaxError"),
    (["restore", DECREE, "--model", str(TINY), "--gap", "4"], "--gap 4: the text has 1 gap(s)"),
    (["restore", DECREE, "--top", "0"], "--top and --beam must be at least 1"),
    (["scan", "μῆνιν ἄειδε", "--heads", "/nonexistent/heads"], "--heads /nonexistent/heads: no such folder"),
    (["date", "ἔτους η", "--weights", "/nonexistent/dater"], "--weights /nonexistent/dater"),
    (["restore", "   "], "no text to read"),
])
def test_bad_input_is_one_clear_message(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr, result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


def test_a_missing_model_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["restore", DECREE, "--model", "/nonexistent/pipeline"])
    assert result.exit_code == 2 and "--model /nonexistent/pipeline: not an installed pipeline" in result.stderr
    assert "Traceback" not in result.output


def test_a_file_that_is_not_utf8_is_one_clear_message(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("λόγος".encode("utf-16"))
    result = CliRunner().invoke(app, ["restore", str(bad), "--model", str(TINY)])
    assert result.exit_code == 1 and "is not UTF-8 text" in result.stderr, result.output


# --- the runtime package without the lab, on the default pipeline -------------------------

#: Runs with the lab's dependencies made unimportable (None in sys.modules: what an install
#: without them looks like to ``import`` and to ``find_spec``, which spaCy's entry points of
#: other packages probe): imports the CLI (every command built),
#: loads the full default pipeline and prints what it made of a decree with a gap.
_BLOCKED = r"""
import json, sys
BLOCKED = {"datasets", "datasketch", "matplotlib", "rapidfuzz", "Levenshtein"}
for name in BLOCKED:  # as if not installed: import fails, importlib.util.find_spec says None
    sys.modules[name] = None
import typer
import torch
torch.set_num_threads(1)
from stoicheia_spacy.cli import app
typer.main.get_command(app)
from stoicheia_spacy.assembly import DEFAULT_SOURCE, build_pipeline
nlp = build_pipeline(DEFAULT_SOURCE)
doc = nlp(sys.argv[1])
print(json.dumps({
    "pipes": nlp.pipe_names, "text": doc.text,
    "tokens": [[t.text, t.pos_, t.tag_, t.lemma_, t.dep_, t.head.i] for t in doc],
    "sents": [s.text for s in doc.sents], "restored": doc._.restored,
    "blocked_loaded": sorted(m for m, mod in sys.modules.items() if m.split(".")[0] in BLOCKED and mod is not None),
}, ensure_ascii=False))
"""


@pytest.fixture(scope="module")
def default_without_lab() -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _BLOCKED, "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ"], env=env,
                          capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cli_and_default_pipeline_need_no_lab_dependency(default_without_lab: dict[str, Any]) -> None:
    assert default_without_lab["blocked_loaded"] == []
    assert {"stoicheia_encoder", "stoicheia_restorer", "stoicheia_parser"} <= set(default_without_lab["pipes"])


def test_default_pipeline_keeps_a_gap_one_token_in_one_sentence(default_without_lab: dict[str, Any]) -> None:
    out = default_without_lab
    assert out["text"] == "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ"
    assert [t[0] for t in out["tokens"]] == ["ἔδοξε", "τῇ", "βουλῇ", "[...]", "τῷ", "δήμῳ"]
    assert out["sents"] == [out["text"]]
    gap = out["tokens"][3]
    assert gap[1:5] == ["X", "X", "_", "dep"] and gap[5] == 2  # attached to the previous word
    assert all(t[5] != 3 for i, t in enumerate(out["tokens"]) if i != 3)  # no word hangs on the gap
    # the words are still tagged and lemmatized by the heads (lemmas, not a placeholder)
    assert all(t[1] != "X" for i, t in enumerate(out["tokens"]) if i != 3)
    assert out["tokens"][0][3] == "δοκέω" and out["tokens"][2][3] == "βουλή"
    assert "[...]" not in out["restored"]  # the encoder read the gap as letters to restore
