"""The stoicheia_accentuator pipe: token norms from the rendering, text untouched."""

from __future__ import annotations

from pathlib import Path

import spacy

import stoicheia_spacy.pipeline.accentuator  # noqa: F401  (registers the factory until the entry point exists)
from stoicheia_spacy.codec import decode_planes, encode_planes

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "char_bert_tiny"


def test_accentuator_pipe_sets_norms_and_keeps_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_accentuator", config={"model_source": str(TINY)})
    text = "εν αρχη ην ο λογος, και ο λογος ην προς τον θεον."
    doc = nlp(text)
    assert doc.text == text
    assert [t.text for t in doc] == [t.text for t in spacy.blank("grc")(text)]
    rendered = doc._.accent_text
    assert encode_planes(rendered).letters.tolist() == encode_planes(text).letters.tolist()
    assert rendered.split(" ")[0] == doc[0].norm_
    words = [t.norm_ for t in doc if t.text not in ",."]
    assert " ".join(words) == rendered.replace(",", "").replace(".", "")
    nlp.to_disk(tmp_path / "p")
    again = spacy.load(tmp_path / "p")(text)
    assert again._.accent_text == rendered


def test_accentuator_keeps_complete_input() -> None:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_accentuator", config={"model_source": str(TINY), "punctuation": "copy",
                                                  "capitals": "copy"})
    text = "Ἐν ἀρχῇ ἦν ὁ λόγος."
    doc = nlp(text)
    assert doc._.accent_text == decode_planes(encode_planes(text))
    assert doc[1].norm_ == "ἀρχῇ"


def test_accentuator_feeds_gaps_and_falls_back_on_bad_markup() -> None:
    from stoicheia_spacy.leiden import parse_gaps

    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_accentuator", config={"model_source": str(TINY), "punctuation": "drop"})
    text = "ἔδοξε τῇ βουλῇ [.4] τῷ δήμῳ"
    doc = nlp(text)
    assert doc.text == text
    rendered = doc._.accent_text
    assert " [.4] " in rendered and "◌" not in rendered
    assert encode_planes(parse_gaps(rendered).text).letters.tolist() == \
        encode_planes(parse_gaps(text).text).letters.tolist()
    assert doc._.source_alignment.source_to_rendered[text.index("[")] == rendered.index("[")
    prose = "λόγος (καὶ ἔργον"  # an unbalanced bracket: plain text, no error
    assert encode_planes(nlp(prose)._.accent_text).letters.tolist() == encode_planes(prose).letters.tolist()
