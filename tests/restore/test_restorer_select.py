"""The restorer pipe: choosing gaps (restore_only, doc.spans, CLI --gap), bounded cost for
absurd widths under a memory limit, the restoration-only preset and the HTML view."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import spacy
import torch
from typer.testing import CliRunner

import stoicheia_spacy
import stoicheia_spacy.restore.restorer
from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.cli.loading import load_for
from stoicheia_spacy.restore.render import render_html
from tests.conftest import TINY

TEXT = "ἔδοξε τῆι βουλῆι [---] τῶι δήμωι [.4] ἐπεστάτει [.2] Κλεγένης"
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def nlp(tiny_restorer_nlp: spacy.Language) -> spacy.Language:
    return tiny_restorer_nlp


def test_restore_only_decodes_just_the_asked_gaps(nlp: spacy.Language) -> None:
    pipe = nlp.get_pipe("stoicheia_restorer")
    before = pipe.forwards
    doc = nlp(TEXT, component_cfg={"stoicheia_restorer": {"restore_only": [1]}})
    [item] = doc._.restorations
    assert doc.text[item.start : item.end] == "[.4]" and item.gap_index == 1
    assert all(len(c.text) == 4 for c in item.candidates)
    assert pipe.forwards - before == 4 + 1  # one gap of 4 letters, not three beam searches
    restored = doc._.restored
    assert "[---]" in restored and "[.2]" in restored and "[.4]" not in restored
    encoded = nlp.get_pipe("stoicheia_encoder")(nlp.make_doc(TEXT))  # the restorer reads the encoder's gaps
    assert [it.gap_index for it in pipe(encoded)._.restorations] == [0, 1, 2]


def test_gaps_in_doc_spans_are_the_ones_restored(nlp: spacy.Language) -> None:
    doc = nlp.make_doc(TEXT)
    start = TEXT.index("[.2]")
    doc.spans["restore_gaps"] = [doc.char_span(start, start + 4, alignment_mode="expand")]
    doc = nlp.get_pipe("stoicheia_restorer")(nlp.get_pipe("stoicheia_encoder")(doc))
    assert [it.gap_index for it in doc._.restorations] == [2]


def test_absurd_widths_are_reported_not_allocated(nlp: spacy.Language) -> None:
    """Wider than the restorer's max_width (64): too_wide, no beam search."""
    doc = nlp("ἔδοξε τῆι [ca. 500] βουλῆι [.3] δήμωι")
    wide, ok = doc._.restorations
    assert wide.status == "too_wide" and wide.candidates == () and wide.abstain
    assert ok.status == "restored" and ok.candidates
    html = render_html(doc)
    assert "not restored: too wide" in html and "class='cands abstain'" in html
    assert "[ca. 500]" in doc._.restored


SCRIPT = textwrap.dedent("""
    import resource, sys, torch
    torch.set_num_threads(1)
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    import stoicheia_spacy.restore.restorer
    from stoicheia_spacy.assembly import build_pipeline
    nlp = build_pipeline(sys.argv[1], components=False)
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 2, "n_candidates": 2}})
    for text in ("ἔδοξε τῆι [ca. 900] βουλῆι", "ἔδοξε τῆι [" + "-" * 300 + "] βουλῆι",
                 "ἔδοξε τῆι " + "-" * 300 + " βουλῆι [.2] δήμωι", "ἔδοξε [500-900] τῆι",
                 "ἔδοξε τῆι [ca. 100000] βουλῆι"):
        items = nlp(text)._.restorations
        print([(it.status, len(it.candidates)) for it in items])
""")


def test_huge_widths_stay_within_a_memory_limit(tmp_path: Path) -> None:
    limit = 3 * 1024**3  # a 3 GB address-space limit: the issue's [ca. 100000] took 24 GB
    script = tmp_path / "limit.py"
    script.write_text(SCRIPT.replace("AS_LIMIT", str(limit)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(stoicheia_spacy.__file__).resolve().parents[1])}
    run = subprocess.run([sys.executable, str(script), str(TINY)], capture_output=True, text=True, timeout=600,
                         env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.strip().splitlines()
    assert lines[0] == "[('too_wide', 0)]"
    assert lines[1] == "[('restored', 2)]"  # 300 dashes in brackets: an unknown width, decoded
    assert lines[2] == "[('restored', 2)]"  # 300 Ithaca dashes: lost letters in the context only
    assert lines[3] == "[('too_wide', 0)]"
    assert lines[4] == "[('too_wide', 0)]"  # the case: reported, never allocated


def test_restore_only_pipeline_of_a_checkpoint_has_two_pipes() -> None:
    nlp = load_for("restore", TINY)  # a checkpoint without a restorer gets one (the CLI's route)
    assert nlp.pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    doc = nlp("τῶι δήμωι [.3] ἐπεστάτει", component_cfg={"stoicheia_restorer": {"beam_width": 2, "n_candidates": 2}})
    assert doc._.restorations[0].status == "restored"


def test_cli_gap_option(tmp_path: Path) -> None:
    from stoicheia_spacy.cli import app

    model_dir = tmp_path / "pipe"
    nlp = build_pipeline(str(TINY), components=False)
    nlp.add_pipe("stoicheia_restorer")
    nlp.to_disk(model_dir)
    result = CliRunner().invoke(app, ["restore", TEXT, "--model", str(model_dir), "--gap", "3", "--beam", "2",
                                      "--top", "2"])
    assert result.exit_code == 0, result.output
    assert "gap 1: [.2]" in result.output and "[.4]" in result.output.splitlines()[0]
    bad = CliRunner().invoke(app, ["restore", TEXT, "--model", str(model_dir), "--gap", "4"])
    assert bad.exit_code == 1 and "3 gap(s)" in bad.output
