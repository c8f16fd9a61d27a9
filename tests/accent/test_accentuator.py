"""The stoicheia_accentuator pipe: decodes the encoder's logits (no backbone of its own);
token norms from the rendering, text untouched."""

from __future__ import annotations

import spacy

from stoicheia_spacy.codec import decode_planes, encode_planes


def test_accentuator_pipe_sets_norms_and_keeps_text(tmp_path, tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    nlp = tiny_nlp("stoicheia_accentuator")
    text = "εν αρχη ην ο λογος, και ο λογος ην προς τον θεον."
    doc = nlp(text)
    assert doc.text == text
    assert [t.text for t in doc] == [t.text for t in spacy.blank("grc")(text)]
    rendered = doc._.accent_text
    assert encode_planes(rendered).letters.tolist() == encode_planes(text).letters.tolist()
    assert rendered.split(" ")[0].lower() == doc[0].norm_
    words = [t.norm_ for t in doc if t.text not in ",."]
    assert " ".join(words) == rendered.replace(",", "").replace(".", "").lower()
    nlp.to_disk(tmp_path / "p")
    assert sorted(p.name for p in (tmp_path / "p" / "stoicheia_accentuator").iterdir()) == ["lexicon.json"]
    again = spacy.load(tmp_path / "p")(text)
    assert again._.accent_text == rendered
    assert spacy.blank("grc").from_config(nlp.config).from_bytes(nlp.to_bytes())(text)._.accent_text == rendered


def test_unmarked_text_is_hidden_from_the_backbone(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    """Bare text: its diacritics (and, without punctuation, punctuation) are fed as UNKNOWN so
    that the heads predict them; edited polytonic text is fed as written."""
    from stoicheia_spacy.alphabet import DIA_UNKNOWN, PUNCT_UNKNOWN

    nlp = tiny_nlp()
    bare = nlp("εν αρχη ην ο λογος")._.stoicheia
    assert (bare.inputs.diacritics == DIA_UNKNOWN).all() and (bare.inputs.punctuation == PUNCT_UNKNOWN).all()
    assert (bare.planes.diacritics == 0).all()  # the text's own planes stay as encoded
    edited = nlp("ἐν ἀρχῇ ἦν ὁ λόγος")._.stoicheia
    assert edited.inputs == edited.planes


def test_accentuator_keeps_complete_input(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    nlp = tiny_nlp("stoicheia_accentuator", configs={"stoicheia_accentuator": {
        "settings": {"punctuation": "copy", "capitals": "copy"}}})
    text = "Ἐν ἀρχῇ ἦν ὁ λόγος."
    doc = nlp(text)
    assert doc._.accent_text == decode_planes(encode_planes(text))
    assert doc[1].norm_ == "ἀρχῇ"


def test_accentuator_renders_the_encoders_gaps_and_falls_back_on_bad_markup(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    from stoicheia_spacy.leiden import parse_gaps

    nlp = tiny_nlp("stoicheia_accentuator", configs={"stoicheia_accentuator": {"settings": {"punctuation": "drop"}}})
    text = "ἔδοξε τῇ βουλῇ [.4] τῷ δήμῳ"
    doc = nlp(text)
    assert doc.text == text
    [gap] = doc._.stoicheia.gaps
    assert (gap.width, gap.markup) == (4, "[.4]")
    rendered = doc._.accent_text
    assert " [.4] " in rendered and "◌" not in rendered
    assert encode_planes(parse_gaps(rendered).text).letters.tolist() == \
        encode_planes(parse_gaps(text).text).letters.tolist()
    assert doc._.source_alignment.source_to_rendered[text.index("[")] == rendered.index("[")
    prose = "λόγος (καὶ ἔργον"  # an unbalanced bracket: plain text, no error
    doc = nlp(prose)
    assert doc._.stoicheia.markup_error and not doc._.stoicheia.gaps
    assert encode_planes(doc._.accent_text).letters.tolist() == encode_planes(prose).letters.tolist()


def test_accentuator_without_encoder_fails_clearly() -> None:
    import pytest

    from stoicheia_spacy.errors import ConfigError

    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_accentuator")
    with pytest.raises(ConfigError, match="stoicheia_encoder"):
        nlp("λόγος")
