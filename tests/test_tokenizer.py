"""stoicheia.GreekTokenizer.v1: elided words stay one token (as in the treebanks), the text
is kept exactly, and the packaged pipelines use it."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from stoicheia_spacy.assembly import build_pipeline

TINY = Path(__file__).resolve().parent / "fixtures" / "char_bert_tiny"


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


def test_default_grc_tokenizer_splits_what_ours_keeps(nlp: spacy.Language) -> None:
    assert [t.text for t in spacy.blank("grc")("ἔστ’,")] == ["ἔστ", "’", ","]
    assert [t.text for t in nlp("ἔστ’,")] == ["ἔστ’", ","]


def test_built_pipelines_use_it_and_it_survives_serialization(tmp_path: Path) -> None:
    pipe = build_pipeline(str(TINY), components=False)
    assert pipe.config["nlp"]["tokenizer"]["@tokenizers"] == "stoicheia.GreekTokenizer.v1"
    pipe.to_disk(tmp_path / "p")
    again = spacy.load(tmp_path / "p")
    assert [t.text for t in again("οὐκ ἔστ’, ὦ φίλε")][:3] == ["οὐκ", "ἔστ’", ","]
