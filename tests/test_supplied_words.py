"""A word with an editor's supplement is one word (issue 42, item 5): ``ἐνέτυχ[όν]`` was cut
into ``ἐνέτυχ`` + ``[όν]`` and tagged as two tokens; the supplement now stays marked on the
token (``token._.supplied``), the heads read the whole word (``token._.word``), ``doc.text``
is unchanged and CoNLL-U writes the word with its Leiden form in MISC. The lines are real
documentary papyri (DDbDP, BGU 1 100 and the duke-nlp tokens) and an IOSPE decree."""

from __future__ import annotations

import lzma
from pathlib import Path

import conllu
import pytest
import spacy

from stoicheia_spacy.leiden.epidoc import read_epidoc
from stoicheia_spacy.morph.conllu import to_conllu
from stoicheia_spacy.tokenizer import SUPPLEMENT, is_gap_token, word_texts


@pytest.fixture(scope="module")
def nlp() -> spacy.Language:
    return spacy.blank("grc", config={"nlp": {"tokenizer": {"@tokenizers": "stoicheia.GreekTokenizer.v1"}}})


@pytest.mark.parametrize(("text", "tokens", "words"), [
    # BGU 1 100, 4-8 (DDbDP), line breaks joined
    ("κεχαραγμένο[ν] δεξιῷ, καὶ ἀπέχω τὴν συ[ν]πεφωνημένην τειμὴν ἀργυρ[ί]ου δραχμὰς",
     ["κεχαραγμένο[ν]", "δεξιῷ", ",", "καὶ", "ἀπέχω", "τὴν", "συ[ν]πεφωνημένην", "τειμὴν", "ἀργυρ[ί]ου", "δραχμὰς"],
     ["κεχαραγμένον", "δεξιῷ", ",", "καὶ", "ἀπέχω", "τὴν", "συνπεφωνημένην", "τειμὴν", "ἀργυρίου", "δραχμὰς"]),
    ("ἐνέτυχ[όν] σοι", ["ἐνέτυχ[όν]", "σοι"], ["ἐνέτυχόν", "σοι"]),
    ("ἀποδο[ῦ]ναι τὸ [ἀργύριον].", ["ἀποδο[ῦ]ναι", "τὸ", "[ἀργύριον]", "."], ["ἀποδοῦναι", "τὸ", "ἀργύριον", "."]),
    ("ἔδοξ[εν τῆι] βουλῆι", ["ἔδοξ[εν", "τῆι]", "βουλῆι"], ["ἔδοξεν", "τῆι", "βουλῆι"]),  # across two words
    ("δ[ι' ἐ]μοῦ [.4]", ["δ[ι'", "ἐ]μοῦ", "[.4]"], ["δι'", "ἐμοῦ", "[.4]"]),               # elision kept
    ("ἐπιμέλει[αν·] καὶ", ["ἐπιμέλει[αν", "·]", "καὶ"], ["ἐπιμέλειαν", "·", "καὶ"]),      # a stop stays apart
    # an editor's addition of letters the scribe left out, as literary editions print it
    ("οὐκ ἐποίησε⟨ν⟩ ⟨ἂν⟩. ⟨τ⟩ὸ", ["οὐκ", "ἐποίησε⟨ν⟩", "⟨ἂν⟩", ".", "⟨τ⟩ὸ"], ["οὐκ", "ἐποίησεν", "ἂν", ".", "τὸ"]),
])
def test_word_with_supplement_is_one_token(nlp: spacy.Language, text: str, tokens: list[str], words: list[str]) -> None:
    doc = nlp(text)
    assert doc.text == text
    assert [t.text for t in doc] == tokens
    assert word_texts(doc) == words == [t._.word for t in doc]
    assert not any(is_gap_token(t.text) for t in doc if t._.supplied)


def test_supplement_offsets_mark_the_supplied_letters(nlp: spacy.Language) -> None:
    doc = nlp("ἀποδο[ῦ]ναι [α][β] ἔδοξ[εν τῆι] βουλῆι")
    assert [t._.supplied for t in doc] == [((5, 8),), ((0, 3), (3, 6)), ((4, 7),), ((0, 4),), ()]
    assert [t.text[a:b] for t in doc for a, b in t._.supplied] == ["[ῦ]", "[α]", "[β]", "[εν", "τῆι]"]
    assert doc[0].norm_ == "ἀποδοῦναι"  # the hashed form features read the word


def test_gaps_are_still_one_token_each(nlp: spacy.Language) -> None:
    doc = nlp("καὶ [...] τ[ῆς] [ca. 5] ⟦Γέτα⟧ {ε}ἔτους")
    assert [t.text for t in doc] == ["καὶ", "[...]", "τ[ῆς]", "[ca. 5]", "⟦Γέτα⟧", "{ε}", "ἔτους"]
    assert [is_gap_token(t.text) for t in doc] == [False, True, False, True, True, True, False]


def test_ddbdp_partly_restored_words_are_one_token(nlp: spacy.Language, shared_data: Path) -> None:
    """Every partly restored word (completeness ``P``) of the first documents of the
    auto-tagged DDbDP tokens is one token whose word is the form without brackets."""
    forms: list[str] = []
    with lzma.open(shared_data / "papyri" / "duke_nlp_2018_ddbdp_tokens.tsv.xz", "rt", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) > 5 and cols[5] == "P" and SUPPLEMENT.search(cols[3]) and " " not in cols[3] \
                    and all(ch not in cols[3] for ch in "-|*@\\/<>()⟦{"):
                forms.append(cols[3])
            if len(forms) >= 300:
                break
    assert len(forms) == 300
    doc = nlp(" ".join(forms))
    words = [t for t in doc if t.text not in ".,·"]
    assert [t.text.rstrip(".,·") for t in words] == [f.rstrip(".,·") for f in forms]
    assert all(t._.supplied for t in words)
    assert [t._.word for t in words] == [f.replace("[", "").replace("]", "").rstrip(".,·") for f in forms]


def test_epidoc_supplied_inside_w_is_one_word(nlp: spacy.Language, shared_data: Path) -> None:
    """IOSPE 1.1: ``<w>δεδό<supplied reason="lost">χθαι</supplied></w>`` and
    ``<w>ἕνεκε<supplied reason="lost">ν</supplied></w>`` are one token each."""
    text = read_epidoc(shared_data / "epidoc" / "iospe" / "1.1.xml").text
    doc = nlp(text)
    assert doc.text == text
    by_word = {t._.word: t for t in doc if t._.supplied}
    assert by_word["δεδόχθαι"].text == "δεδό[χθαι"
    assert by_word["ἕνεκεν"].text == "ἕνεκε[ν]"
    assert not any(t.text.startswith("[") and t.text.endswith("]") and is_gap_token(t.text)
                   and SUPPLEMENT.fullmatch(t.text) for t in doc)


@pytest.fixture(scope="module")
def default_morph() -> spacy.Language:
    try:
        return spacy.load("grc_stoicheia_doc_clean", exclude=["stoicheia_restorer", "stoicheia_accentuator",
                                                               "stoicheia_scanner", "stoicheia_dater"])
    except OSError:
        pytest.skip("the default pipeline grc_stoicheia_doc_clean is not installed")


def test_default_pipeline_tags_and_parses_the_whole_word(default_morph: spacy.Language) -> None:
    text = "καὶ ἀπέχω τὴν συ[ν]πεφωνημένην τιμὴν ἀργυρ[ί]ου δραχμὰς. ἀποδο[ῦ]ναι τὸ ἀργύριον."
    doc = default_morph(text)
    assert doc.text == text
    tok = {t._.word: t for t in doc}
    assert tok["ἀργυρίου"].pos_ == "NOUN" and tok["ἀργυρίου"].lemma_ == "ἀργύριον"
    assert tok["ἀργυρίου"].tag_[7] == "g"                  # genitive, read from the whole word
    assert tok["ἀποδοῦναι"].lemma_ == "ἀποδίδωμι" and tok["ἀποδοῦναι"].tag_[4] == "n"  # infinitive
    assert tok["συνπεφωνημένην"].pos_ == "VERB"
    assert all(t.dep_ != "dep" for t in doc if t._.supplied)  # a word, not a gap placeholder
    sents = conllu.parse(to_conllu(doc))
    words = [w for s in sents for w in s]
    row = next(w for w in words if w["form"] == "ἀργυρίου")
    assert row["misc"]["LeidenForm"] == "ἀργυρ[ί]ου" and row["lemma"] == "ἀργύριον"
    assert [w["form"] for w in sents[1]][:1] == ["ἀποδοῦναι"]
    assert not any("[" in w["form"] for w in words)


def test_an_editors_addition_is_read_as_the_word(default_morph: spacy.Language) -> None:
    """``⟨ἂν⟩`` was lemmatised ``⟨ἄν⟩`` (the brackets kept, an unattested form)."""
    doc = default_morph("οὐκ ⟨ἂν⟩ ἐποίησε⟨ν⟩ τοῦτο.")
    tok = {t._.word: t for t in doc}
    assert tok["ἂν"].lemma_ == "ἄν" and tok["ἐποίησεν"].lemma_ == "ποιέω" and tok["ἐποίησεν"].pos_ == "VERB"
