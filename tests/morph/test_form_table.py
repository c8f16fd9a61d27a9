"""The form -> {(lemma, XPOS)} table (issue 42, item 1) and its use in decoding: lookups of
real attested forms, a compact round trip, the lookup baseline, and the lemmatizer and
morphologizer taking the table's analyses for attested forms (the README's Odyssey line:
``ἔννεπε`` was lemmatised ``ἔνειμι`` and ``πλάγχθη`` ``πάσσω``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc

from stoicheia_spacy.assembly import default_config
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.morph.formtable import (
    FormTable,
    elision_spellings,
    enclitic_accent_dropped,
    iota_spellings,
    load_form_table,
    movable_nu,
)
from stoicheia_spacy.morph.settings import LemmatizerSettings, MorphologizerSettings
from stoicheia_spacy.morph.ud import MORPH_GROUPS

#: rows as the treebanks' training fold and the DDbDP tokens give them (form, lemma, tag, count)
ROWS = [
    ("ἔννεπε", "ἐνέπω", "v2spma---", 1),
    ("πλάγχθη", "πλάζω", "v3saip---", 1),
    ("καί", "καί", "c--------", 10472), ("καὶ", "καί", "c--------", 25071), ("καὶ", "καί", "d--------", 10949),
    ("δὲ", "δέ", "d--------", 9855), ("δὲ", "δέ", "c--------", 5106),
    ("τὴν", "ὁ", "l-s---fa-", 8627), ("τὴν", "ὁ", "p-s---fa-", 162), ("τὴν", "ὅς", "p-s---fa-", 22),
    ("ἀργυρίου", "ἀργύριον", "n-s---ng-", 700),
    ("ἐνέτυχόν", "ἐντυγχάνω", "v1saia---", 1),
]


@pytest.fixture(scope="module")
def table() -> FormTable:
    return FormTable.build(ROWS, sources=["test rows"])


def test_lookup_of_attested_forms(table: FormTable) -> None:
    assert table.lemmas("ἔννεπε") == ("ἐνέπω",)
    assert table.lemmas("τὴν") == ("ὁ", "ὅς")                   # most frequent first
    assert table.analyses("δὲ")[0] == ("δέ", "d--------", 9855)
    assert table.lemmas("Καὶ") == ("καί",)                      # sentence-initial capital
    assert table.best("τὴν") == ("ὁ", "l-s---fa-")               # the lookup baseline
    assert table.find("ἀργυρίῳ") is None and table.best("ἀργυρίῳ") is None and table.lemmas("") == ()


def test_a_final_grave_is_found_as_acute(table: FormTable) -> None:
    # the table holds καί (acute) and καὶ (grave) apart; a grave-only form falls back to its acute
    assert table.analyses("καί") != table.analyses("καὶ")
    assert FormTable.build([("πολλά", "πολύς", "a-p---na-", 2)]).lemmas("πολλὰ") == ("πολύς",)


def test_an_elided_form_is_found_in_any_spelling_of_its_elision() -> None:
    """The treebanks write an elision as a breathing over the last letter (``ἄλγἐ``, ``δ̓``),
    editions and keyboards as an apostrophe (``ἄλγε’``, ``ἄλγε᾽``): Iliad 1.2's ``μυρί’ … ἄλγε’``
    were tagged a feminine noun and lemmatised ``ἄω``."""
    elided = FormTable.build([("ἄλγἐ", "ἄλγος", "n-p---na-", 3), ("μυρί᾽", "μυρίος", "a-p---na-", 2),
                              ("δ̓", "δέ", "c--------", 50), ("δ’", "δέ", "d--------", 5)])
    assert elided.lemmas("ἄλγε’") == elided.lemmas("ἄλγε'") == elided.lemmas("ἄλγε᾽") == ("ἄλγος",)
    assert elided.best("μυρί’") == ("μυρίος", "a-p---na-")
    assert elided.analyses("δ᾽") == [("δέ", "c--------", 50)]  # the best attested spelling
    assert elided.analyses("δ’") == [("δέ", "d--------", 5)]   # a spelling the table has is taken as it is
    assert "ἄλγε’" in elision_spellings("ἄλγἐ") and "ἄλγἐ" in elision_spellings("ἄλγε’")
    for word in ("οὐ", "εἰ", "ἄλγος", "ὁ", "ἐ", "’"):  # breathings that are breathings, no elision
        assert elision_spellings(word) == ()


def test_an_enclitics_accent_and_a_movable_nu_are_looked_through() -> None:
    """Before an enclitic a word takes a second accent (``σκάπτοντί τι``), and ν comes and goes at
    the end of -σι, -ε: such a form unattested as written is found as the table writes it."""
    rows = FormTable.build([("σκάπτοντι", "σκάπτω", "v-sapamd-", 2), ("ἐκεραύνωσε", "κεραυνόω", "v3saia---", 1),
                            ("πᾶσιν", "πᾶς", "a-p---md-", 9), ("λέγει", "λέγω", "v3spia---", 4)])
    assert rows.lemmas("σκάπτοντί") == ("σκάπτω",) and rows.lemmas("ἐκεραύνωσεν") == ("κεραυνόω",)
    assert rows.best("πᾶσι") == ("πᾶς", "a-p---md-")
    assert rows.find("λέγειν") is None  # an infinitive, not λέγει with a movable ν
    assert enclitic_accent_dropped("εἰσήνεγκάν") == ("εἰσήνεγκαν",) and enclitic_accent_dropped("ἄνθρωπος") == ()
    assert movable_nu("ἐστίν") == ("ἐστί",) and movable_nu("ἐν") == () and movable_nu("λέγει") == ()
    papyrus = FormTable.build([("δήμῳ", "δῆμος", "n-s---md-", 3), ("τῇ", "ὁ", "l-s---fd-", 40)])
    assert papyrus.lemmas("δήμωι") == ("δῆμος",) and papyrus.best("τῆι") == ("ὁ", "l-s---fd-")  # iota adscript
    assert iota_spellings("λέγεσθαι") == () and iota_spellings("δήμῳ") == ("δήμωι",)


def test_headwords_are_lemmas_without_analyses(tmp_path: Path) -> None:
    """A dictionary's headwords ride in the table: lemmas the lemmatizer may write, forms of none."""
    heads = FormTable.build([("λόγος", "λόγος", "n-s---mn-", 5)], headwords=["διαπεριπατέω", "ζώννυμι", "λόγος"])
    assert heads.lemma_set() == {"λόγος"}
    assert heads.attested_lemmas() == {"λόγος", "διαπεριπατέω", "ζώννυμι"}
    assert heads.find("διαπεριπατέω") is None  # a headword is no attested form
    heads.to_disk(tmp_path / "t.npz")
    assert FormTable.from_disk(tmp_path / "t.npz").attested_lemmas() == heads.attested_lemmas()


def test_an_unattested_participle_takes_its_lsj_headword(default_morph: spacy.Language) -> None:
    """``διαπεριπατῶν`` (UD Perseus test) is in no treebank and no papyrus: its script's lemma is
    an LSJ headword the shipped table carries, so it is written, not the flagged form."""
    lem: Any = default_morph.get_pipe("stoicheia_lemmatizer")
    table = lem.form_table()
    if table is None or not len(table.headwords):
        pytest.skip("the lexicon data package (with its headwords) is not installed")
    doc = default_morph("ἦν δὲ διαπεριπατῶν ἐν τῇ ἀγορᾷ.")
    walking = doc[2]
    assert (walking.lemma_, walking._.lemma_backoff) == ("διαπεριπατέω", False)
    assert "διαπεριπατέω" not in table.lemma_set() and "διαπεριπατέω" in table.attested_lemmas()


def test_the_shipped_table_finds_iliad_elisions() -> None:
    shipped = load_form_table()
    if shipped is None:
        pytest.skip("the lexicon data package is not installed")
    assert shipped.lemmas("ἄλγε’")[:1] == ("ἄλγος",) and shipped.lemmas("μυρί’")[:1] == ("μυρίος",)


def test_round_trip_is_compact(table: FormTable, tmp_path: Path) -> None:
    path = tmp_path / "form_analyses.npz"
    table.to_disk(path)
    again = FormTable.from_disk(path)
    assert len(again) == len(table) == 8
    assert [again.analyses(f) for f, *_ in ROWS] == [table.analyses(f) for f, *_ in ROWS]
    assert again.sources == ["test rows"]
    assert path.stat().st_size < 4096
    with pytest.raises(ConfigError):
        FormTable.from_disk(tmp_path / "absent.npz")


def test_settings_validate_the_table_options() -> None:
    assert not LemmatizerSettings().form_table and not MorphologizerSettings().form_table
    with pytest.raises(ConfigError):
        LemmatizerSettings(form_table="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        MorphologizerSettings(table_prior=-1.0)


def test_table_fixes_the_readme_lemmas(default_morph: spacy.Language, table: FormTable) -> None:
    """The shipped decoding gives ἔννεπε -> ἔνειμι and πλάγχθη -> πάσσω (README); with the
    table, the attested lemmas; unattested forms keep the shipped lemma."""
    words = "ἄνδρα μοι ἔννεπε , μοῦσα , πολύτροπον , ὃς μάλα πολλὰ πλάγχθη .".split()
    nlp = default_morph
    with nlp.select_pipes(enable=["stoicheia_encoder"]):
        doc = nlp(Doc(nlp.vocab, words=words))
    lem: Any = nlp.get_pipe("stoicheia_lemmatizer")
    logits = np.asarray(lem.predict([doc])[0])
    shipped = lem.lemmatize_flagged(words, logits)[0]
    with_table = lem.lemmatize_flagged(words, logits, table)[0]
    assert shipped[2] != "ἐνέπω" and shipped[11] != "πλάζω"
    assert with_table[2] == "ἐνέπω" and with_table[11] == "πλάζω"
    assert [a for k, a in enumerate(with_table) if k not in (2, 11)] == [a for k, a in enumerate(shipped)
                                                                          if k not in (2, 11)]
    morph: Any = nlp.get_pipe("stoicheia_morphologizer")
    m_logits = np.asarray(morph.predict([doc])[0])[:, :sum(MORPH_GROUPS)]
    upos, tags = morph.table_decode(m_logits, words, table)
    assert tags[2] == "v2spma---" and upos[2] == "VERB"          # the table's tag for ἔννεπε
    plain_upos, plain_tags = morph.decode(m_logits)
    assert [t for k, t in enumerate(tags) if k not in (2, 11)] == [t for k, t in enumerate(plain_tags)
                                                                   if k not in (2, 11)]


def test_pipeline_with_form_table_on_writes_the_table_analyses(default_morph: spacy.Language, table: FormTable,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``form_table = true`` in both components' settings: ``token.lemma_`` / ``tag_`` come
    from the table for attested forms (the table of the installed data package stood in)."""
    import stoicheia_spacy.morph.lemmatizer as lemmatizer_module
    import stoicheia_spacy.morph.morphologizer as morphologizer_module

    monkeypatch.setattr(lemmatizer_module, "load_form_table", lambda: table)
    monkeypatch.setattr(morphologizer_module, "load_form_table", lambda: table)
    nlp = default_morph
    lem: Any = nlp.get_pipe("stoicheia_lemmatizer")
    morph: Any = nlp.get_pipe("stoicheia_morphologizer")
    monkeypatch.setattr(lem, "settings", lem.settings.replace(form_table=True))
    monkeypatch.setattr(morph, "settings", morph.settings.replace(form_table=True))
    with nlp.select_pipes(disable=["stoicheia_parser"] if "stoicheia_parser" in nlp.pipe_names else []):
        doc = nlp("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη.")
    by_text = {t.text: t for t in doc}
    assert by_text["ἔννεπε"].lemma_ == "ἐνέπω" and by_text["ἔννεπε"].tag_ == "v2spma---"
    assert by_text["πλάγχθη"].lemma_ == "πλάζω" and by_text["πλάγχθη"].tag_ == "v3saip---"


#: the real table's analyses (DDbDP + fold 0) of two words of a PapyGreek dev letter, "so you spend
#: one litra and a stater of weight" (δαπανᾶς is not in the table)
PAPYRUS_ROWS = [
    ("μίαν", "εἷς", "m-s---fa-", 1078), ("μίαν", "εἷς", "a-s---fa-", 69),
    ("ὁλκῆς", "ὁλκή", "n-s---fg-", 159), ("ὁλκῆς", "ὁλκή", "n-p---mn-", 19), ("ὁλκῆς", "ὁλκός", "a-s---fg-", 2),
    ("λίτραν", "λίτρα", "n-s---fa-", 59), ("στατῆρα", "στατήρ", "n-s---ma-", 23),
]
PAPYRUS_WORDS = "διὸ δαπανᾶς λίτραν μίαν καὶ ὁλκῆς στατῆρα .".split()


def test_settings_give_a_papyrus_its_own_table_weight() -> None:
    """``table_prior_papyrus`` for a Doc whose domain is papyrus (``doc._.domain`` or the
    ``domain`` setting), ``table_prior`` for any other Doc; the text itself is not read."""
    nlp = spacy.blank("grc")
    settings = MorphologizerSettings(table_prior=0.0, table_prior_papyrus=12.0)
    doc = nlp("διὸ δαπανᾶς λίτραν μίαν")
    assert settings.table_weight(doc) == 0.0 and settings.table_weight() == 0.0
    doc._.domain = "papyrus"
    assert settings.table_weight(doc) == 12.0
    doc._.domain = "inscription"
    assert settings.table_weight(doc) == 0.0
    assert settings.replace(domain="papyrus").table_weight(nlp("ἄνδρα μοι ἔννεπε")) == 12.0
    assert settings.replace(domain="literary").table_weight(doc) == 0.0
    assert LemmatizerSettings(table_prior_papyrus=1.0, domain="papyrus").table_weight() == 1.0
    with pytest.raises(ConfigError):
        MorphologizerSettings(domain="koine")
    with pytest.raises(ConfigError):
        LemmatizerSettings(table_prior_papyrus=-1.0)


def test_the_papyrus_weight_fixes_the_heads_xpos(default_morph: spacy.Language,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """On a PapyGreek dev letter the heads tag μίαν and ὁλκῆς as adjectives (the literary
    treebanks' numeral convention; ὁλκός) and keep them under weight 0 (the literary weight), the
    table allowing both; the papyrus weight takes the documentary analyses, numeral and noun
    (gold), in decoding and in the pipeline for a Doc marked as a papyrus."""
    import stoicheia_spacy.morph.morphologizer as morphologizer_module

    table = FormTable.build(PAPYRUS_ROWS)
    nlp = default_morph
    morph: Any = nlp.get_pipe("stoicheia_morphologizer")
    with nlp.select_pipes(enable=["stoicheia_encoder"]):
        doc = nlp(Doc(nlp.vocab, words=PAPYRUS_WORDS))
    logits = np.asarray(morph.predict([doc])[0])[:, :sum(MORPH_GROUPS)]
    defaults = MorphologizerSettings()
    _, heads = morph.decode(logits)
    _, literary = morph.table_decode(logits, PAPYRUS_WORDS, table, prior=0.0)
    upos, papyrus = morph.table_decode(logits, PAPYRUS_WORDS, table, prior=defaults.table_prior_papyrus)
    _, other = morph.table_decode(logits, PAPYRUS_WORDS, table, prior=defaults.table_prior)
    assert (heads[3], heads[5]) == (literary[3], literary[5]) == ("a-s---fa-", "a-s---fg-")
    assert (other[3], other[5]) == ("a-s---fa-", "a-s---fg-")
    assert (papyrus[3], papyrus[5]) == ("m-s---fa-", "n-s---fg-") and (upos[3], upos[5]) == ("NUM", "NOUN")
    assert table.best("μίαν") == ("εἷς", "m-s---fa-")             # what the lookup baseline says

    monkeypatch.setattr(morphologizer_module, "load_form_table", lambda: table)
    monkeypatch.setattr(morph, "settings", defaults.replace(form_table=True, table_prior=0.0))
    with nlp.select_pipes(enable=["stoicheia_encoder", "stoicheia_morphologizer"]):
        plain = nlp(Doc(nlp.vocab, words=PAPYRUS_WORDS))
        marked = Doc(nlp.vocab, words=PAPYRUS_WORDS)
        marked._.domain = "papyrus"
        marked = nlp(marked)
    assert (plain[3].tag_, plain[5].tag_) == ("a-s---fa-", "a-s---fg-")
    assert (marked[3].tag_, marked[5].tag_, marked[3].pos_) == ("m-s---fa-", "n-s---fg-", "NUM")
    monkeypatch.setattr(morph, "settings", defaults.replace(form_table=True))
    with nlp.select_pipes(enable=["stoicheia_encoder", "stoicheia_morphologizer"]):
        plain = nlp(Doc(nlp.vocab, words=PAPYRUS_WORDS))
    assert (plain[3].tag_, plain[5].tag_) == ("a-s---fa-", "a-s---fg-")  # literary weight 0: the heads


def test_table_lemmas_are_attested_for_forms_the_table_does_not_attest(default_morph: spacy.Language) -> None:
    """``table_lexicon``: a form the table does not attest (``ἀνείργειν``, AGDT fold-0 dev, Josephus)
    may take a lemma the table gives another form (``ἀνείργω``) where the component's lexicon
    lacks it and the lemmatizer backed off to the flagged form; an attested form is unchanged."""
    words = ("Κἀν τούτῳ Βεντίδιος ὁ Ῥωμαίων στρατηγὸς πεμφθεὶς ἐκ Συρίας Πάρθους ἀνείργειν μετ᾽ ἐκείνους "
             "εἰς Ἰουδαίαν παρέβαλεν .").split()
    table = FormTable.build([("ἀνείργω", "ἀνείργω", "v1spia---", 1), *ROWS])
    nlp = default_morph
    with nlp.select_pipes(enable=["stoicheia_encoder"]):
        doc = nlp(Doc(nlp.vocab, words=words))
    lem: Any = nlp.get_pipe("stoicheia_lemmatizer")
    logits = np.asarray(lem.predict([doc])[0])
    k = words.index("ἀνείργειν")
    assert "ἀνείργω" not in lem.attested_lemmas() and "ἀνείργω" in lem.attested_lemmas(table)
    settings = lem.settings
    try:
        lem.settings = settings.replace(table_lexicon=False)
        before, flags = lem.lemmatize_flagged(words, logits, table)
        lem.settings = settings.replace(table_lexicon=True)
        after, after_flags = lem.lemmatize_flagged(words, logits, table)
    finally:
        lem.settings = settings
    assert (before[k], flags[k]) == ("ἀνείργειν", True)
    assert (after[k], after_flags[k]) == ("ἀνείργω", False)
    assert lem.lemmatize_flagged(words, logits)[0][k] == "ἀνείργειν"  # no table: the component's lexicon only
    assert LemmatizerSettings().table_lexicon
    with pytest.raises(ConfigError):
        LemmatizerSettings(table_lexicon="yes")  # type: ignore[arg-type]


def test_the_default_config_ships_the_weights_fitted_on_dev() -> None:
    """The embedded default config's form-table settings are the ones ``parse_eval.py fit`` chose
    (``projects/parse/metrics/lookup_weight_fit.json``): tag weight 12 for every text (AGDT fold-0
    + UD PROIEL dev jointly; PapyGreek dev), lemma weights 2 / 1, the table's lemmas attested."""
    blocks = spacy.util.load_config(default_config())["components"]
    morph = MorphologizerSettings.from_dict({k: v for k, v in blocks["stoicheia_morphologizer"]["settings"].items()
                                             if not k.startswith("@")})
    lem = LemmatizerSettings.from_dict({k: v for k, v in blocks["stoicheia_lemmatizer"]["settings"].items()
                                        if not k.startswith("@")})
    assert morph.form_table and (morph.table_prior, morph.table_prior_papyrus) == (0.0, 12.0)
    assert lem.form_table and lem.table_lexicon and (lem.table_prior, lem.table_prior_papyrus) == (2.0, 1.0)
