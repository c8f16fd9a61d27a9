"""The README's own example printed ``ἐν ἀρχὴ ἦν ὁ λόγος`` (issue 41, item 7): a dative after
``ἐν`` is a constraint. The lattice writes the word after a dative-only preposition, or after a
dative article, in its iota-subscript form where the lexicon has one."""

from __future__ import annotations

import pytest

from stoicheia_spacy.accent.formlex import FormLexicon
from stoicheia_spacy.accent.lattice import LatticeParams, decode_lattice
from stoicheia_spacy.codec import decode_planes, encode_planes

#: the lexicon alone, as the default pipeline's lattice weighs it (no backbone)
LEX_ONLY = LatticeParams(w_bnd=0.0, w_dia=0.0, oov_word=-12.0, oov_letter=-2.0)
#: a lexicon whose counts prefer the nominative, as the corpus counts of ἀρχή do
FORMS = [(form, 1000 * n) for form, n in [("ἐν", 50), ("ἀρχή", 9), ("ἀρχῇ", 5), ("ἦν", 20), ("ὁ", 100),
                                          ("λόγος", 10), ("δέ", 40), ("τῇ", 30), ("τή", 1), ("οἰκία", 9),
                                          ("οἰκίᾳ", 4), ("γυνή", 5), ("ἕν", 10), ("σύν", 10), ("θεῷ", 3),
                                          ("θεώ", 0), ("ἡ", 100)]]


def lex_alone(text: str, lexicon: FormLexicon, **changes: object) -> str:
    params = LatticeParams(**{**LEX_ONLY.to_dict(), **changes})
    return decode_planes(decode_lattice(encode_planes(text).letters, None, lexicon, params).planes)


@pytest.fixture(scope="module")
def lexicon() -> FormLexicon:
    return FormLexicon.from_forms(FORMS)


def test_en_arche_is_a_dative_after_en(lexicon: FormLexicon) -> None:
    assert lex_alone("εναρχηηνολογοσ", lexicon, govern_dative=False) == "ἐν ἀρχὴ ἦν ὁ λόγος"  # the defect
    assert lex_alone("εναρχηηνολογοσ", lexicon) == "ἐν ἀρχῇ ἦν ὁ λόγος"


def test_the_case_reaches_through_a_particle_and_the_dative_article(lexicon: FormLexicon) -> None:
    assert lex_alone("ενδετηοικιαηνγυνη", lexicon) == "ἐν δὲ τῇ οἰκίᾳ ἦν γυνή"
    assert lex_alone("συνθεω", lexicon) == "σὺν θεῷ"
    assert lex_alone("ηαρχη", lexicon) == "ἡ ἀρχή"  # no preposition: the nominative stays


def test_the_readme_example_accents_en_arche(lexicon_installed: str) -> None:
    import spacy

    nlp = spacy.load("grc_stoicheia_doc_clean", exclude=["stoicheia_restorer", "stoicheia_morphologizer",
                                                          "stoicheia_lemmatizer", "stoicheia_parser",
                                                          "stoicheia_scanner", "stoicheia_dater"])
    assert nlp("εναρχηηνολογοσκαιολογοσηνπροστονθεον")._.accent_text == \
        "ἐν ἀρχῇ ἦν ὁ λόγος καὶ ὁ λόγος ἦν πρὸς τὸν θεόν"
    # one of our own: Thucydides 2.43.3 (ἐν τῇ οἰκείᾳ σημαίνει), a dative article after ἐν
    assert nlp("εντηοικειασημαινει")._.accent_text.startswith("ἐν τῇ οἰκείᾳ")
