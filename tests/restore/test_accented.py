"""Candidates an editor can paste: restoration candidates rendered with accents and word division
by the accentuator in the gap's context (the default pipeline, ``stoicheia restore --accent``, the
HTML view), the letters-only form kept for scoring."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import spacy
import torch
from typer.testing import CliRunner

from stoicheia_spacy.restore.accented import bare, context_window

torch.set_num_threads(1)
DECREE = "ἔδοξεν τῆι βουλῆι [---] τῶι δήμωι"


def _letters(text: str) -> str:
    return bare(text).lower().replace("ς", "σ")


def test_bare_strips_every_diacritic_and_keeps_an_iota_subscript_as_a_letter() -> None:
    assert bare("τῇ βουλῇ ἔδοξε") == "τηι βουληι εδοξε"
    assert bare("Ἀθηναίων") == "Αθηναιων"


def test_context_window_keeps_whole_words_and_stops_at_other_markup() -> None:
    text = "ἐπὶ τῆς [.2] πρυτανείας ἔδοξε τῆι βουλῆι [---] τῶι δήμωι ἐπεστάτει Νικίας"
    start = text.index("[---]")
    left, right = context_window(text, start, start + 5, 24)
    assert left == "πρυτανείας ἔδοξε τῆι βουλῆι "[-len(left):] and not left.startswith("]")
    assert "[" not in left and "]" not in left  # cut after the other gap's markup
    assert right.startswith(" τῶι δήμωι") and not right.endswith("Νικ")  # whole words only
    word = "ἔδοξε τῆι β[ουλ]ῆι καί"
    left, right = context_window(word, word.index("["), word.index("]") + 1, 24)
    assert left == "ἔδοξε τῆι β" and right == "ῆι καί"


@pytest.fixture(scope="module")
def nlp(default_nlp: spacy.Language) -> spacy.Language:
    return default_nlp  # installed by make test (make default-package)


def test_the_default_pipeline_accents_the_top_candidates_in_context(nlp: spacy.Language) -> None:
    doc = nlp(DECREE)
    assert doc.text == DECREE
    [item] = doc._.restorations
    top = nlp.get_pipe("stoicheia_accentuator").cfg["candidates"]
    assert top == 5
    shown = [(c.text, c.accented) for c in item.candidates][:top]
    assert all(form is not None for _, form in shown)
    for cand, form in shown:  # the same letters and word division, diacritics added
        assert _letters(form) == _letters(cand), (cand, form)
        assert form.count(" ") == cand.strip().count(" ")
    marked = [form for _, form in shown if any(unicodedata.combining(ch)
                                               for ch in unicodedata.normalize("NFD", form))]
    assert len(marked) >= 3, shown  # whole Greek words get their accents and breathings
    if "και" in [c for c, _ in shown]:  # καί before a word takes the grave
        assert dict(shown)["και"] == "καὶ"
    assert all(c.accented is None for c in item.candidates[top:])


def test_a_candidate_inside_a_word_takes_the_whole_words_accents(nlp: spacy.Language) -> None:
    doc = nlp("ἔδοξε τῆι β[.3]ῆι καὶ τῶι δήμωι")
    [item] = doc._.restorations
    for cand in item.candidates[:5]:
        assert cand.accented is not None and _letters(cand.accented) == _letters(cand.text)


def test_cli_restore_accent_shows_and_exports_the_accented_forms(tmp_path: Path) -> None:
    from stoicheia_spacy.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["restore", DECREE, "--top", "3", "--accent", "--html", str(tmp_path / "r.html")],
                        terminal_width=200)
    assert out.exit_code == 0, out.output
    assert "accented" in out.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'class="bare"' in page
    js = runner.invoke(app, ["restore", DECREE, "--top", "3", "--accent", "--format", "json"])
    assert js.exit_code == 0, js.output
    [gap] = json.loads(js.output.strip().splitlines()[-1])
    assert all(_letters(c["accented"]) == _letters(c["text"]) for c in gap["candidates"] if "accented" in c)
    assert any("accented" in c for c in gap["candidates"])
    plain = runner.invoke(app, ["restore", DECREE, "--top", "3", "--format", "json"])
    [gap] = json.loads(plain.output.strip().splitlines()[-1])
    assert all("accented" not in c for c in gap["candidates"])  # without --accent: two components, no accents
