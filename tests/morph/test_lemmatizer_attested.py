"""The default lemmatizer never invents a lemma: every lemma is attested in the training
treebanks' lemma list (the component's lexicon) or in the lexicon data package's form table for
that form, or is the documented, flagged back-off."""

from __future__ import annotations

import pytest
from spacy.language import Language

from stoicheia_spacy.assembly import MORPHOSYNTAX
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.morph.lemmatizer import backoff_lemma

DECREE = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι· Κεκροπὶς ἐπρυτάνευε, [.4]ιος ἐγραμμάτευε, Εὐπείθης ἐπεστάτει."
ODYSSEY = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη."
JOHN = "Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν."
#: my own: Thucydides 1.1.1 and an optative of εἰμί in a condition
THUCYDIDES = "Θουκυδίδης Ἀθηναῖος ξυνέγραψε τὸν πόλεμον τῶν Πελοποννησίων καὶ Ἀθηναίων."
OPTATIVE = "εἰ γὰρ ταῦτα πράξαιτε, εὐδαίμονες εἴητε."


@pytest.fixture(scope="module")
def nlp(default_parts) -> Language:  # type: ignore[no-untyped-def]
    """The embedded default config's encoder and morphosyntax heads, with the settings it ships."""
    return default_parts(*MORPHOSYNTAX)


def _lemmas(nlp: Language, text: str) -> dict[str, tuple[str, bool]]:
    return {t.text: (t.lemma_, t._.lemma_backoff) for t in nlp(text) if any(c.isalpha() for c in t.text)}


@pytest.mark.parametrize("text", [DECREE, ODYSSEY, JOHN, THUCYDIDES, OPTATIVE])
def test_lemmas_that_are_not_greek_words_are_never_written(nlp: Language, text: str) -> None:
    lemmatizer = nlp.get_pipe("stoicheia_lemmatizer")
    lexicon = frozenset(lemmatizer.data["lexicon"])
    table = lemmatizer.form_table()  # the lexicon data package's form -> (lemma, XPOS) table, when installed
    for form, (lemma, backoff) in _lemmas(nlp, text).items():
        if form.startswith("["):
            continue
        in_table = table is not None and lemma in table.attested_lemmas()  # the form's, another's, a headword
        assert lemma in lexicon or in_table or backoff, f"{form} -> {lemma}: neither attested nor a flagged back-off"
        assert not backoff or lemma in (form, backoff_lemma(form, lexicon)[0])


def test_invented_lemmas_of_the_issue_are_gone(nlp: Language) -> None:
    seen = {**_lemmas(nlp, DECREE), **_lemmas(nlp, ODYSSEY), **_lemmas(nlp, JOHN), **_lemmas(nlp, OPTATIVE)}
    invented = {"πρυαννεύω", "ραμάφω", "ἐοστέλλω", "πλάγχξ", "νίπτω", "ἔω"}
    assert not invented & {lemma for lemma, _ in seen.values()}
    assert seen["Ἐν"][0] == "ἐν"  # not εἰς
    assert seen["εἴητε"][0] == "εἰμί"
    assert seen["ἦν"][0] == "εἰμί" and seen["λόγος"][0] == "λόγος"


def test_thucydides_lemmas_are_right(nlp: Language) -> None:
    seen = _lemmas(nlp, THUCYDIDES)
    assert seen["ξυνέγραψε"] in {("συγγράφω", False), ("ξυγγράφω", False), ("ξυνέγραψε", True)}
    assert seen["πόλεμον"][0] == "πόλεμος" and seen["τὸν"][0] == "ὁ"


def test_backoff_is_the_attested_lower_case_form_or_the_citation_form_flagged() -> None:
    lexicon = frozenset({"ἐν", "λόγος"})
    assert backoff_lemma("Ἐν", lexicon) == ("ἐν", False)
    assert backoff_lemma("πολλὰ", lexicon) == ("πολλά", True)  # grave written acute
    assert backoff_lemma("πλάγχθη", lexicon) == ("πλάγχθη", True)
    assert backoff_lemma("·", lexicon) == ("·", False)


def test_the_script_backoff_is_opt_in_and_stays_flagged(nlp: Language) -> None:
    """``backoff = "script"``: a word no attested script explains takes the best fitting script's
    lemma (an unattested guess) instead of itself, flagged as before; attested words are unchanged."""
    lemmatizer = nlp.get_pipe("stoicheia_lemmatizer")
    assert lemmatizer.settings.backoff == "form"
    before = _lemmas(nlp, ODYSSEY)
    with pytest.raises(ConfigError):
        lemmatizer.configure(backoff="guess")
    lemmatizer.configure(backoff="script")
    try:
        after = _lemmas(nlp, ODYSSEY)
    finally:
        lemmatizer.configure(backoff="form")
    for form, (lemma, flagged) in before.items():
        if not flagged:
            assert after[form] == (lemma, False)
        else:
            assert after[form][1]


def test_a_token_without_a_letter_is_its_own_lemma(nlp: Language) -> None:
    """Verses one a line, with the marks an edition prints: the line breaks and marks are their
    own lemmas (scripts had made ``ἕ`` of a line break, ``ά`` of ``|`` and ``ε`` of ``…``); the
    words still take attested lemmas and a gap still takes the gap lemma."""
    verses = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος\nοὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε, | …\n* [---] 12"
    doc = nlp(verses)
    marks = {t.text: t.lemma_ for t in doc if not any(c.isalpha() for c in t.text) and not t.text.startswith("[")}
    assert {"\n", ",", "|", "…", "*", "12"} <= set(marks)
    assert all(lemma == form for form, lemma in marks.items())
    assert not any(t._.lemma_backoff for t in doc if t.text in marks)
    lemmas = {t.text: t.lemma_ for t in doc}
    assert lemmas["[---]"] == "_" and lemmas["μῆνιν"] == "μῆνις"
