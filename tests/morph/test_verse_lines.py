"""Verses one a line, as a user pastes them: the line breaks are whitespace tokens in spaCy,
analysed as spaCy's taggers analyse whitespace, and no words in CoNLL-U."""

from __future__ import annotations

import conllu
import pytest
from spacy.language import Language

from stoicheia_spacy.assembly import MORPHOSYNTAX
from stoicheia_spacy.morph.conllu import to_conllu
from stoicheia_spacy.morph.morphologizer import DIGITS_TAG, SPACE_TAG

#: Iliad 1.1-3, one verse a line
ILIAD = ("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος\nοὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,\n"
         "πολλὰς δ’ ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν")


@pytest.fixture(scope="module")
def nlp(default_parts) -> Language:  # type: ignore[no-untyped-def]
    return default_parts(*MORPHOSYNTAX)


def test_line_breaks_are_whitespace_not_words(nlp: Language) -> None:
    doc = nlp(ILIAD)
    assert doc.text == ILIAD
    breaks = [t for t in doc if t.is_space]
    assert len(breaks) == 2
    for tok in breaks:  # was a masculine accusative plural noun, lemma ἕ
        assert (tok.tag_, tok.pos_, str(tok.morph), tok.lemma_) == (SPACE_TAG, "SPACE", "", "\n")
    assert not any(t.head.is_space for t in doc if not t.is_space)
    words = {t.text: t for t in doc}
    assert words["ἔθηκε"].pos_ == "VERB"
    # elided with an apostrophe, as editions print it (the treebanks write ἄλγἐ): was ἄω, a noun;
    # the form table is in the lexicon data package, built from the data mirror
    if nlp.get_pipe("stoicheia_lemmatizer").form_table() is not None:
        assert (words["ἄλγε’"].lemma_, words["μυρί’"].lemma_, words["μυρί’"].pos_) == ("ἄλγος", "μυρίος", "ADJ")


def test_conllu_of_verses_is_valid_and_keeps_the_line_breaks(nlp: Language) -> None:
    written = to_conllu(nlp(ILIAD), "il")
    sents = conllu.parse(written)
    words = [w for s in sents for w in s]
    assert [w["form"] for w in words] == [t for t in ILIAD.replace("’", "’ ").replace(",", " ,").split()]
    for sent in sents:
        assert "\n" not in sent.metadata["text"]
        assert [w["id"] for w in sent] == list(range(1, len(sent) + 1))
        assert all(0 <= w["head"] <= len(sent) for w in sent)
        assert sum(w["head"] == 0 for w in sent) >= 1
    misc = {w["form"]: w["misc"] for w in words}
    assert misc["Ἀχιλῆος"] == {"SpacesAfter": "\\n"}
    assert misc["οὐλομένην"] == {"SpaceAfter": "No"}


def test_a_numeral_in_digits_is_a_numeral(nlp: Language) -> None:
    """A year or a line number in digits (no treebank writes one) was tagged punctuation."""
    doc = nlp("ὁ δὲ Κῦρος ἀπέθανε — 25 ἔτη.")
    digits = next(t for t in doc if t.text == "25")
    assert (digits.pos_, digits.tag_, digits.lemma_) == ("NUM", DIGITS_TAG, "25")
