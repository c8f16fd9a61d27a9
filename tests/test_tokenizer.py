"""stoicheia.GreekTokenizer.v1: elided words stay one token (as in the treebanks), every
Leiden gap is one token, the text is kept exactly, and the packaged pipelines use it."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.tokenizer import GreekTokenizer, is_gap_token
from tests.conftest import TINY


@pytest.fixture(scope="module")
def nlp() -> spacy.Language:
    return spacy.blank("grc", config={"nlp": {"tokenizer": {"@tokenizers": "stoicheia.GreekTokenizer.v1"}}})


@pytest.mark.parametrize(("text", "tokens"), [
    ("ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε,", ["ἣ", "μυρί᾽", "Ἀχαιοῖς", "ἄλγε᾽", "ἔθηκε", ","]),
    ("οὐκ ἔστ’, ὦ φίλε", ["οὐκ", "ἔστ’", ",", "ὦ", "φίλε"]),   # spaCy's grc defaults: ἔστ ’ ,
    ("τοῦτ᾽. καὶ δ' ἄρα", ["τοῦτ᾽", ".", "καὶ", "δ'", "ἄρα"]),
    ("ἀλλ’· (ἐπ’)", ["ἀλλ’", "·", "(", "ἐπ’", ")"]),
    ("said 'hello'", ["said", "'", "hello", "'"]),              # after Latin: still a quote
])
def test_elision_stays_on_the_word(nlp: spacy.Language, text: str, tokens: list[str]) -> None:
    doc = nlp(text)
    assert [t.text for t in doc] == tokens
    assert doc.text == text


@pytest.mark.parametrize(("text", "tokens"), [
    ("Σωκράτης· «οὐκ οἶδα».", ["Σωκράτης", "·", "«", "οὐκ", "οἶδα", "»", "."]),   # was οἶδα». (a NOUN)
    ("(ὡς λέγεται). καὶ", ["(", "ὡς", "λέγεται", ")", ".", "καὶ"]),
    ("“ταῦτα”· ἀλλ’ οὐ", ["“", "ταῦτα", "”", "·", "ἀλλ’", "οὐ"]),
])
def test_a_stop_after_a_closing_quote_or_parenthesis_is_its_own_token(nlp: spacy.Language, text: str,
                                                                      tokens: list[str]) -> None:
    doc = nlp(text)
    assert [t.text for t in doc] == tokens and doc.text == text


def test_default_grc_tokenizer_splits_what_ours_keeps(nlp: spacy.Language) -> None:
    assert [t.text for t in spacy.blank("grc")("ἔστ’,")] == ["ἔστ", "’", ","]
    assert [t.text for t in nlp("ἔστ’,")] == ["ἔστ’", ","]


def test_built_pipelines_use_it_and_it_survives_serialization(tmp_path: Path) -> None:
    pipe = build_pipeline(str(TINY), components=False)
    assert pipe.config["nlp"]["tokenizer"]["@tokenizers"] == "stoicheia.GreekTokenizer.v1"
    pipe.to_disk(tmp_path / "p")
    again = spacy.load(tmp_path / "p")
    assert [t.text for t in again("οὐκ ἔστ’, ὦ φίλε")][:3] == ["οὐκ", "ἔστ’", ","]


# --- Leiden markup: one token per gap ------------------------------------------------

@pytest.mark.parametrize(("text", "tokens"), [
    ("ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ", ["ἔδοξε", "τῇ", "βουλῇ", "[...]", "τῷ", "δήμῳ"]),
    ("τῆι βουλῆι [.4] δήμωι", ["τῆι", "βουλῆι", "[.4]", "δήμωι"]),
    ("ἔδοξεν [---] δήμωι", ["ἔδοξεν", "[---]", "δήμωι"]),
    ("καὶ [ca. 5] τῶι", ["καὶ", "[ca. 5]", "τῶι"]),
    ("καὶ [.2-5] τῶι", ["καὶ", "[.2-5]", "τῶι"]),
    ("ἔδοξ[εν τῆι] βουλῆι", ["ἔδοξ[εν", "τῆι]", "βουλῆι"]),       # a supplement is part of its words
    ("⟦Γέτα⟧ καὶ {ε}ἔτους", ["⟦Γέτα⟧", "καὶ", "{ε}", "ἔτους"]),
    ("ἐπὶ |gap=4| ἄρχοντος", ["ἐπὶ", "|gap=4|", "ἄρχοντος"]),
    ("δήμωι [.3]. ἔδοξε", ["δήμωι", "[.3]", ".", "ἔδοξε"]),
    ("οὐκ ἔστ’, [---]", ["οὐκ", "ἔστ’", ",", "[---]"]),            # elision rules still apply
    ("ἀρχὴ [ καὶ", ["ἀρχὴ", "[", "καὶ"]),                           # an unclosed bracket is spaCy's
])
def test_leiden_gap_is_one_token(nlp: spacy.Language, text: str, tokens: list[str]) -> None:
    doc = nlp(text)
    assert [t.text for t in doc] == tokens
    assert doc.text == text
    assert [t.text for t in doc if is_gap_token(t.text)] == [t for t in tokens if is_gap_token(t)]
    assert not doc.has_annotation("SENT_START") or len(list(doc.sents)) == 1


@pytest.mark.parametrize("text", ["  [.3]  καὶ ", "[...]", "α[β]γ", "[α][β] [γ]\n[δ]", "τῆι  [---]  τε\n"])
def test_text_is_kept_exactly_around_gaps(nlp: spacy.Language, text: str) -> None:
    assert nlp(text).text == text


def test_gap_tokenizer_survives_serialization(tmp_path: Path) -> None:
    pipe = build_pipeline(str(TINY), components=False)
    pipe.to_disk(tmp_path / "p")
    again = spacy.load(tmp_path / "p")
    assert isinstance(again.tokenizer, GreekTokenizer)
    assert [t.text for t in again("καὶ [ca. 5] τῶι")] == ["καὶ", "[ca. 5]", "τῶι"]


def test_encoder_still_sees_the_gap_as_unknown_letters() -> None:
    pipe = build_pipeline(str(TINY), components=False)
    doc = pipe("ἔδοξε τῇ βουλῇ [.3] τῷ δήμῳ")
    assert [t.text for t in doc][3] == "[.3]"
    gaps = doc._.stoicheia.gaps
    assert len(gaps) == 1 and gaps[0].width == 3


def test_gap_placeholders_on_a_parse() -> None:
    """The parser's gap handling on its own: no word takes a gap as head, each gap is
    attached to the previous word of its sentence (the next one at its start)."""
    import numpy as np

    from stoicheia_spacy.morph.parser import _tree_without_gaps

    rng = np.random.default_rng(0)
    scores = rng.normal(size=(6, 6))
    gaps = [True, False, False, True, False]  # [.3] w w [---] w
    heads = _tree_without_gaps(scores, gaps)
    assert heads[0] == 2 and heads[3] == 3  # 1-based: gap 0 -> word 1, gap 3 -> word 2
    assert not {1, 4} & {int(h) for j, h in enumerate(heads) if not gaps[j]}
    assert sum(int(h) == 0 for h in heads) == 1
