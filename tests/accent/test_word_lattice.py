"""Lexicon-aware joint decoding of word division and diacritics (formlex + lattice)."""

from __future__ import annotations

import numpy as np
import pytest

from stoicheia_spacy.accent.formlex import FormLexicon
from stoicheia_spacy.accent.lattice import ARC_HOST, LatticeParams, decode_lattice
from stoicheia_spacy.alphabet import (
    ACCENT_ACUTE,
    ACCENT_GRAVE,
    BND_INTERNAL,
    BND_SENT_END,
    BND_WORD_END,
    CAP_UPPER,
    N_DIA_STATES,
    dia_state,
)
from stoicheia_spacy.codec import decode_planes, encode_planes

JOHN = "ἐν ἀρχῇ ἦν ὁ λόγος καὶ ὁ λόγος ἦν πρὸς τὸν θεόν"
FORMS = [("ἐν", 50), ("ἀρχῇ", 5), ("ἀρχή", 3), ("ἦν", 20), ("ὁ", 100), ("λόγος", 10), ("καί", 200),
         ("πρός", 20), ("τόν", 50), ("θεόν", 5), ("ἀλλ’", 5), ("ἀλλά", 5), ("ἐγώ", 5), ("κἀγώ", 3),
         ("λέγω", 5), ("ἄνθρωπος", 5), ("τις", 5), ("τι", 5), ("ἦλθεν", 3), ("σῶμα", 2), ("Σωκράτης", 5),
         ("ἔφη", 5), ("δ’", 4), ("δέ", 40), ("οὗτος", 0), ("ἐνάρχη", 0)]
FORMS = [(form, 1000 * count) for form, count in FORMS]  # corpus-sized counts
LEX_ONLY = LatticeParams(w_bnd=0.0, w_dia=0.0, oov_word=-12.0, oov_letter=-2.0)


@pytest.fixture(scope="module")
def lexicon() -> FormLexicon:
    return FormLexicon.from_forms(FORMS)


def _bare(text: str) -> np.ndarray:
    return encode_planes(text).letters


def _lex_alone(text: str, lexicon: FormLexicon) -> str:
    return decode_planes(decode_lattice(_bare(text), None, lexicon, LEX_ONLY).planes)


def test_lexicon_index_and_normalisation(lexicon: FormLexicon, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a final-syllable grave is stored as acute; counts of one spelling add up
    assert FormLexicon.from_forms([("καὶ", 3), ("καί", 2)]).forms_of("και") == [("καί", 5)]
    # a form with two accents (an enclitic host) is not stored: the decoder derives it
    assert FormLexicon.from_forms([("ἄνθρωπός", 1)]).n_bare == 0
    assert sorted(lexicon.forms_of("αρχη")) == [("ἀρχή", 3000), ("ἀρχῇ", 5000)]
    assert lexicon.forms_of("δ") == [("δ’", 4000)]
    start, length, _ = lexicon.match(_bare("ολογοσ"))
    assert (1, 5) in set(zip(start.tolist(), length.tolist(), strict=True))
    path = tmp_path / "lex.npz"
    lexicon.to_disk(path)
    again = FormLexicon.from_disk(path)
    assert len(again) == len(lexicon) and again.forms_of("λογοσ") == [("λόγος", 10000)]


def test_match_looks_up_only_the_allowed_spans(lexicon: FormLexicon) -> None:
    # a divided text's word ends allow few spans: the lookup keeps exactly those of the full match
    letters = _bare(JOHN.replace(" ", ""))
    rng = np.random.default_rng(0)
    allowed = rng.random((len(letters), lexicon.max_len)) < 0.4
    start, length, key = lexicon.match(letters, lexicon.max_len)
    keep = allowed[start, length - 1]
    got = lexicon.match(letters, lexicon.max_len, allowed)
    assert keep.any() and not keep.all()
    for a, b in zip((start[keep], length[keep], key[keep]), got, strict=True):
        assert np.array_equal(a, b)


def test_scriptio_continua_divided_and_accented_by_the_lexicon(lexicon: FormLexicon) -> None:
    # mid-sentence oxytones take a grave, the last word keeps its acute
    assert _lex_alone("εναρχηηνολογοσκαιολογοσηνπροστονθεον", lexicon) == JOHN
    assert _lex_alone("ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ", lexicon) == "ἐν ἀρχῇ ἦν ὁ λόγος"


def test_elision_crasis_enclitic_host_and_proper_name(lexicon: FormLexicon) -> None:
    assert _lex_alone("αλλεγω", lexicon) == "ἀλλ’ ἐγώ"
    assert _lex_alone("καγωλεγω", lexicon) == "κἀγὼ λέγω"
    # a proparoxytone before an enclitic takes a second accent; not before another word
    assert _lex_alone("ανθρωποστισηλθεν", lexicon) == "ἄνθρωπός τις ἦλθεν"
    assert _lex_alone("ανθρωποσηλθεν", lexicon) == "ἄνθρωπος ἦλθεν"
    assert _lex_alone("σωματι", lexicon) == "σῶμά τι"
    res = decode_lattice(_bare("σωκρατησεφη"), None, lexicon, LEX_ONLY)
    assert decode_planes(res.planes) == "Σωκράτης ἔφη"
    assert res.planes.capitals[0] == CAP_UPPER and not res.planes.capitals[1:].any()
    host = decode_lattice(_bare("ανθρωποστισηλθεν"), None, lexicon, LEX_ONLY)
    assert host.words[:, 2].tolist()[0] == ARC_HOST


def _logp(n: int) -> dict[str, np.ndarray]:
    """Flat backbone scores: no preference anywhere."""
    return {"boundary": np.full((n, 3), np.log(1 / 3)), "dia": np.full((n, N_DIA_STATES), np.log(1 / 48)),
            "cap": np.full((n, 2), np.log(0.5)), "punct": np.full((n, 6), np.log(1 / 6))}


def test_backbone_scores_choose_between_forms_and_accents(lexicon: FormLexicon) -> None:
    letters = _bare("αρχη")
    lp = _logp(len(letters))
    lp["dia"][3, dia_state(ACCENT_ACUTE, 0, 0, 0)] = 0.0  # the backbone wants ἀρχή here
    out = decode_lattice(letters, lp, lexicon, LatticeParams(w_dia=1.0)).planes
    assert decode_planes(out) == "ἀρχή"
    assert decode_planes(decode_lattice(letters, lp, lexicon, LatticeParams(w_dia=0.0)).planes) == "ἀρχῇ"
    # an oxytone: grave when the backbone prefers it on that letter
    letters = _bare("θεονκαι")
    lp = _logp(len(letters))
    lp["dia"][2, dia_state(ACCENT_GRAVE, 0, 0, 0)] = 0.0
    lp["boundary"][3, BND_WORD_END] = 0.0
    assert decode_planes(decode_lattice(letters, lp, lexicon, LatticeParams()).planes) == "θεὸν καί"
    # by default an oxytone is grave inside the text; with grave_rule=False the backbone decides
    lp["dia"][2, dia_state(ACCENT_GRAVE, 0, 0, 0)] = np.log(1 / 48)
    lp["dia"][2, dia_state(ACCENT_ACUTE, 0, 0, 0)] = 0.0
    assert decode_planes(decode_lattice(letters, lp, lexicon, LatticeParams()).planes) == "θεὸν καί"
    assert decode_planes(decode_lattice(letters, lp, lexicon, LatticeParams(grave_rule=False)).planes) == "θεόν καί"


def test_without_lexicon_and_with_forced_division() -> None:
    letters = _bare("λογοσκαι")
    lp = _logp(len(letters))
    lp["boundary"][:, BND_INTERNAL] = 0.0
    lp["dia"][1, dia_state(ACCENT_ACUTE, 0, 0, 0)] = 0.0
    must = np.zeros(len(letters), bool)
    must[4] = True
    res = decode_lattice(letters, lp, None, LatticeParams(oov_word=0.0, oov_letter=0.0, w_bnd=1.0, w_dia=1.0),
                         must_end=must)
    assert res.planes.boundary.tolist() == [0, 0, 0, 0, BND_WORD_END, 0, 0, BND_SENT_END]
    # out of lexicon: at most one accent per word, a breathing on the initial vowel only
    assert decode_planes(res.planes).startswith("λόγος ")
    one = decode_lattice(_bare("αι"), _logp(2), None, LatticeParams())
    assert decode_planes(one.planes) in {"αἰ", "αἱ"}


def test_lattice_on_real_text_is_linear_and_consistent(lexicon: FormLexicon) -> None:
    text = (JOHN + " ") * 30
    letters = _bare(text)
    res = decode_lattice(letters, None, lexicon, LEX_ONLY)
    assert len(res.planes) == len(letters)
    words = decode_planes(res.planes).split()
    assert words == [w.replace("θεόν", "θεὸν") for w in text.split()[:-1]] + ["θεόν"]
    assert res.planes.boundary[-1] == BND_SENT_END
