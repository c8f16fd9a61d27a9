"""The stoicheia_restorer pipe: offsets into doc.text, spans, serialization, CLI, bad input,
and real restorations by the default model."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy
import torch
from typer.testing import CliRunner

from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.restore.render import render_html
from tests.conftest import TINY

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def nlp(tiny_restorer_nlp: spacy.Language) -> spacy.Language:
    return tiny_restorer_nlp


def test_gap_offsets_point_at_the_markup_in_doc_text(nlp: spacy.Language) -> None:
    text = "ἔδοξε τῆι βουλῆι [---] τῶι δήμωι [.4] ἐπεστάτει"
    doc = nlp(text)
    assert doc.text == text
    items = doc._.restorations
    assert [doc.text[it.start : it.end] for it in items] == ["[---]", "[.4]"]
    assert items[0].max_width is None and items[1].min_width == items[1].max_width == 4
    assert all(0 < len(it.candidates) <= 4 for it in items)
    assert all(len(c.text) == 4 for c in items[1].candidates)  # spaces count toward the width
    restored = doc._.restored
    top0, top1 = items[0].candidates[0].text, items[1].candidates[0].text
    assert restored == f"ἔδοξε τῆι βουλῆι [{top0}] τῶι δήμωι [{top1}] ἐπεστάτει"


def test_editorial_restorations_are_text_unless_stripped(nlp: spacy.Language) -> None:
    text = "ἔδοξε τῆι β[ουλ]ῆι"
    assert nlp(text)._.restorations == []
    pipe = nlp.get_pipe("stoicheia_restorer")
    pipe.configure(strip_restorations=True)
    try:
        doc = nlp(text)
    finally:
        pipe.configure(strip_restorations=False)
    [item] = doc._.restorations
    assert doc.text[item.start : item.end] == "[ουλ]"
    assert all(len(c.text) == 3 for c in item.candidates)
    assert doc._.restored.startswith("ἔδοξε τῆι β[") and doc._.restored.endswith("]ῆι")


def test_gaps_from_doc_spans(nlp: spacy.Language) -> None:
    doc = nlp.make_doc("ἔδοξε τῆι βουλῆι καὶ τῶι δήμωι")
    doc.spans["restore"] = [doc.char_span(17, 20)]  # καὶ
    doc = nlp(doc)
    [item] = doc._.restorations
    assert (item.start, item.end, item.gap_index) == (17, 20, None)
    assert doc._.restored == f"ἔδοξε τῆι βουλῆι [{item.candidates[0].text}] τῶι δήμωι"


def test_abstain_below_keeps_candidates_but_not_the_restoration(nlp: spacy.Language) -> None:
    pipe = nlp.get_pipe("stoicheia_restorer")
    pipe.configure(abstain_below=1.0)
    try:
        doc = nlp("τῆι βουλῆι [.3] δήμωι")
    finally:
        pipe.configure(abstain_below=0.0)
    [item] = doc._.restorations
    assert item.abstain and item.candidates
    assert doc._.restored == "τῆι βουλῆι [.3] δήμωι"
    html = render_html(doc)
    assert "abstain" in html and "<table" in html and item.candidates[0].text in html


def test_no_gaps_and_malformed_markup(nlp: spacy.Language) -> None:
    doc = nlp("ἔδοξε τῆι βουλῆι")
    assert doc._.restorations == []
    assert doc._.restored == "ἔδοξε τῆι βουλῆι"
    bad = nlp("ἔδοξε τῆι [βουλῆι")  # read as plain text by the encoder: nothing restored, no exception
    assert bad.text == "ἔδοξε τῆι [βουλῆι" and bad._.restorations == [] and bad._.restored == bad.text
    assert "[" in bad._.stoicheia.markup_error
    assert "markup did not parse" in render_html(bad)
    with pytest.raises(ConfigError):
        nlp.add_pipe("stoicheia_restorer", name="bad", config={"settings": {"mode": "sideways"}})


def test_the_restorer_reads_the_encoders_single_parse(nlp: spacy.Language, monkeypatch: pytest.MonkeyPatch) -> None:
    """One Leiden parse per Doc, in the encoder: the restorer takes doc._.stoicheia.gaps."""
    from stoicheia_spacy.leiden import parser

    text = "ἔδοξε τῆι βουλῆι [c. 2-3] τῶι δήμωι [.4] ἐπεστάτει [---] ὁ"
    calls = []
    run = parser._Scanner.run

    def counted(self):
        calls.append(self)
        return run(self)

    monkeypatch.setattr(parser._Scanner, "run", counted)
    doc = nlp.get_pipe("stoicheia_encoder")(nlp.make_doc(text))
    assert len(calls) == 1 and [g.markup for g in doc._.stoicheia.gaps] == ["[ca. 2-3]", "[.4]", "[---]"]

    def forbidden(self):
        raise AssertionError("the restorer parsed the markup again")

    monkeypatch.setattr(parser._Scanner, "run", forbidden)
    items = nlp.get_pipe("stoicheia_restorer")(doc)._.restorations
    assert [doc.text[it.start : it.end] for it in items] == ["[c. 2-3]", "[.4]", "[---]"]
    assert [(it.min_width, it.max_width) for it in items] == [(2, 3), (4, 4), (1, None)]
    assert {len(c.text) for c in items[0].candidates} <= {2, 3} and {len(c.text) for c in items[1].candidates} == {4}
    [only] = nlp.get_pipe("stoicheia_restorer")(doc, restore_only=[1])._.restorations
    assert only.gap_index == 1 and doc.text[only.start : only.end] == "[.4]"


def test_needs_the_encoder_pipe() -> None:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_restorer")
    with pytest.raises(ConfigError, match="stoicheia_encoder"):
        nlp("τῆι [.2] βουλῆι")


def test_to_disk_and_spacy_load_keep_the_restorer(nlp: spacy.Language, tmp_path: Path) -> None:
    pipe = nlp.get_pipe("stoicheia_restorer")
    pipe.configure(temperature=2.5)
    try:
        nlp.to_disk(tmp_path / "p")
    finally:
        pipe.configure(temperature=1.0)
    # config.cfg is the one carrier of the settings: configure() recorded them there, no cfg file
    assert not (tmp_path / "p" / "stoicheia_restorer" / "cfg").exists()
    saved = spacy.util.load_config(tmp_path / "p" / "config.cfg")["components"]["stoicheia_restorer"]["settings"]
    assert saved["temperature"] == 2.5 and saved["beam_width"] == 4
    assert nlp.config["components"]["stoicheia_restorer"]["settings"]["temperature"] == 1.0
    loaded = spacy.load(tmp_path / "p")
    assert loaded.pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    assert loaded.get_pipe("stoicheia_restorer").cfg["temperature"] == 2.5
    a = nlp("τῆι βουλῆι [.3] δήμωι")._.restorations[0].candidates
    b = loaded("τῆι βουλῆι [.3] δήμωι")._.restorations[0].candidates
    assert [c.text for c in a] == [c.text for c in b]  # same weights, same texts


def test_cli_prints_candidates(tmp_path: Path) -> None:
    from stoicheia_spacy.cli import app

    nlp = build_pipeline(str(TINY))
    nlp.to_disk(tmp_path / "p")
    runner = CliRunner()
    out = runner.invoke(app, ["restore", "ἔδοξεν τῆι βουλῆι [.3] δήμωι", "--model", str(tmp_path / "p"),
                              "--beam", "3", "--top", "3", "--html", str(tmp_path / "r.html")])
    assert out.exit_code == 0, out.output
    assert "gap 1: [.3]" in out.output and "candidate" in out.output
    assert (tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = runner.invoke(app, ["restore", "τῆι [βουλῆι", "--model", str(tmp_path / "p")])
    assert bad.exit_code == 1 and "LeidenSyntaxError" in bad.output


def test_default_model_restores_a_formulaic_decree_phrase() -> None:
    """Measured on the embedded 21M model: ουλ (β[ουλ]ῆι) and καί are its top-1 candidates."""
    from stoicheia_spacy.assets import default_model_dir

    nlp = build_pipeline(str(default_model_dir()), components=False)
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"strip_restorations": True, "context": 64}})
    docs = list(nlp.pipe(["ἔδοξε τῆι β[ουλ]ῆι καὶ τῶι δήμωι", "ἔδοξε τῆι βουλῆι [καὶ] τῶι δήμωι"]))
    first = [c.text for c in docs[0]._.restorations[0].candidates]
    second = [c.text for c in docs[1]._.restorations[0].candidates]
    assert len(first) == 20 and first[0] == "ουλ"
    assert "και" in second[:3]
    assert nlp.get_pipe("stoicheia_restorer").forwards == 3 + 1  # both gaps in one beam search


def test_restoration_context_is_called_context_and_old_window_settings_still_load(nlp: spacy.Language) -> None:
    """The letters kept on each side of a gap are the restorer's ``context`` (distinct from the
    backbone's ``char_window`` and the encoder's long-document windows); a pipeline saved
    with the older ``window`` key reads it as the context."""
    restorer = nlp.get_pipe("stoicheia_restorer")
    assert "context" in restorer.cfg and "window" not in restorer.cfg
    restorer.set_cfg({"window": 24})
    assert restorer.cfg["context"] == 24 and "window" not in restorer.cfg
