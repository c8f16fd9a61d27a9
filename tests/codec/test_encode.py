"""Encoding: plane ids, offsets, variants, word/sentence rules and bad input."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.alphabet import (
    ACCENT_ACUTE,
    ACCENT_CIRCUMFLEX,
    ACCENT_GRAVE,
    ALPHABET,
    BREATHING_ROUGH,
    BREATHING_SMOOTH,
    PUNCT_COLON,
    PUNCT_COMMA,
    PUNCT_HIGH_DOT,
    PUNCT_NONE,
    PUNCT_PERIOD,
    PUNCT_QUESTION,
    dia_state,
)
from stoicheia_spacy.codec import encode_detailed, encode_planes, unmodelled_offsets
from stoicheia_spacy.codec.planes import PLANE_NAMES
from stoicheia_spacy.errors import InvalidTextError

REPO_ROOT = Path(__file__).resolve().parents[2]


def ids(word: str) -> list[int]:
    return [ALPHABET.index(c) for c in word]


def same_planes(a: str, b: str) -> bool:
    pa, pb = encode_planes(a), encode_planes(b)
    return all(np.array_equal(getattr(pa, n), getattr(pb, n)) for n in PLANE_NAMES)


def test_planes_of_a_sentence() -> None:
    text = "τῷ λόγῳ, ἀλλ’ Οὐ."
    p = encode_planes(text)
    assert p.letters.tolist() == ids("τωλογωαλλου")
    assert p.boundary.tolist() == [0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 2]
    iota_circ = dia_state(ACCENT_CIRCUMFLEX, 0, 1, 0)
    assert p.diacritics.tolist() == [0, iota_circ, 0, dia_state(ACCENT_ACUTE, 0, 0, 0), 0, dia_state(0, 0, 1, 0),
                                     dia_state(0, BREATHING_SMOOTH, 0, 0), 0, 0, 0, dia_state(0, BREATHING_SMOOTH, 0, 0)]  # fmt: skip
    assert p.capitals.tolist() == [0] * 9 + [1, 0]
    assert p.punctuation.tolist() == [0, 0, 0, 0, 0, PUNCT_COMMA, 0, 0, 0, 0, PUNCT_PERIOD]
    assert p.offsets.tolist() == [0, 1, 3, 4, 5, 6, 9, 10, 11, 14, 15]
    assert all(a.dtype == np.uint8 for a in (p.letters, p.boundary, p.diacritics, p.capitals, p.punctuation))
    assert p.offsets.dtype == np.int64


def test_offsets_index_the_input_in_any_normalisation() -> None:
    nfc = "ἀνδρῶν ὑπ’ ἀρετῆς"
    nfd = unicodedata.normalize("NFD", nfc)
    assert same_planes(nfc, nfd)
    p = encode_planes(nfd)
    assert "".join(nfd[i] for i in p.offsets) == "ανδρωνυπαρετης"


@pytest.mark.parametrize(
    ("variant", "plain"),
    [
        ("ϲοφόϲ Ϲωκράτηϲ", "σοφός Σωκράτης"),  # lunate sigma
        ("ϐίϐλοϲ ϑεός ϕύσις ϰαί ϱόδον ϖᾶς", "βίβλος θεός φύσις καί ῥόδον πᾶς".replace("ῥ", "ρ")),
        ("\u1f71\u03bd\u03b8\u03c1\u03c9\u03c0\u03bf\u03c2", "\u03ac\u03bd\u03b8\u03c1\u03c9\u03c0\u03bf\u03c2"),  # oxia/tonos
        ("λόγος\u0387 καί", "λόγος\u00b7 καί"),  # ano teleia
        ("τί\u037e", "τί;"),  # Greek question mark
        ("τί?", "τί;"),
        ("φεῦ!", "φεῦ;"),
        ("κ\u03b1\u0343γώ", "κἀγώ"),  # koronis = smooth breathing
        ("ἀ\u0304γαθός καλῐ\u0306", "ἀγαθός καλι"),  # macron, breve stripped
        ("λόγ\u0323ος", "λόγος"),  # dot below stripped
        ("ἀ\u0302λλα", "ἆλλα"),  # circumflex look-alike
    ],
)
def test_variants_fold_to_the_same_planes(variant: str, plain: str) -> None:
    assert same_planes(variant, plain)


@pytest.mark.parametrize("mark", ["\u2019", "'", "\u02bc", "\u1fbf", "\u1fbd", "\u0313"])
def test_elision_variants(mark: str) -> None:
    text = f"ἀλλ{mark} οὐδὲ δ{mark} αὐτός"
    enc = encode_detailed(text)
    assert same_planes(text, "ἀλλ’ οὐδὲ δ’ αὐτός")
    assert enc.elided.tolist() == [False, False, True, False, False, False, False, True] + [False] * 5


def test_rho_with_psili_is_elision_at_word_end_and_breathing_inside() -> None:
    enc = encode_detailed("παῤ αὐτοῖς ἄῤῥητα")
    p = enc.planes
    assert enc.elided[2] and p.diacritics[2] == 0 and p.boundary[2] == 1
    rr = int(np.flatnonzero(p.letters == ALPHABET.index("ρ"))[1])
    assert p.diacritics[rr] == dia_state(0, BREATHING_SMOOTH, 0, 0)
    assert p.diacritics[rr + 1] == dia_state(0, BREATHING_ROUGH, 0, 0)
    assert p.boundary[rr] == 0


def test_elision_without_space_still_ends_the_word() -> None:
    assert same_planes("δ’αὐτόν", "δ’ αὐτόν")
    assert same_planes("δ\u0313αὐτόν", "δ’ αὐτόν")


def test_punctuation_classes_and_sentence_ends() -> None:
    p = encode_planes("ἔφη, ὦ φίλε· ἄγε: ἴδε. τί; ναί")
    ends = np.flatnonzero(p.punctuation)
    assert p.punctuation[ends].tolist() == [PUNCT_COMMA, PUNCT_HIGH_DOT, PUNCT_COLON, PUNCT_PERIOD, PUNCT_QUESTION]
    assert p.boundary[ends].tolist() == [1, 1, 1, 2, 2]
    assert p.boundary[-1] == 2  # the record's last letter
    assert p.punctuation[-1] == PUNCT_NONE


def test_punctuation_attaches_before_and_first_mark_wins() -> None:
    assert same_planes("λόγος , καί", "λόγος, καί")
    assert same_planes("λόγος,καί", "λόγος, καί")
    p = encode_planes("ἀλλὰ τί;. οὐδέν")
    assert p.punctuation.tolist().count(PUNCT_QUESTION) == 1
    assert PUNCT_PERIOD not in p.punctuation.tolist()
    assert unmodelled_offsets("ἀλλὰ τί;. οὐδέν").tolist() == [8]


def test_punctuation_is_not_attached_across_digits_or_latin() -> None:
    p = encode_planes("λόγος 12. καί")
    assert p.punctuation.tolist() == [0] * 8 and p.boundary[4] == 1
    assert unmodelled_offsets("λόγος 12. καί").tolist() == [6, 7, 8]
    # a closing bracket is transparent: the period still belongs to the word
    assert encode_planes("(λόγος). καί").punctuation[4] == PUNCT_PERIOD


def test_non_modelled_characters_stay_out_and_do_not_split_words() -> None:
    text = "λό[γο]ς ϝάναξ 3 ab"
    p = encode_planes(text)
    assert p.letters.tolist() == ids("λογοσαναξ")
    assert p.boundary.tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert [text[i] for i in unmodelled_offsets(text)] == ["[", "]", "ϝ", "3", "a", "b"]


def test_capitals_grave_rough_breathing() -> None:
    p = encode_planes("Ὁ ῥήτωρ Ἐν")
    assert p.capitals.tolist() == [1, 0, 0, 0, 0, 0, 1, 0]
    assert p.diacritics[0] == dia_state(0, BREATHING_ROUGH, 0, 0)
    assert p.diacritics[1] == dia_state(0, BREATHING_ROUGH, 0, 0)
    assert p.diacritics[2] == dia_state(ACCENT_ACUTE, 0, 0, 0)
    assert encode_planes("τὸν").diacritics[1] == dia_state(ACCENT_GRAVE, 0, 0, 0)
    assert encode_planes("προΐημι").diacritics[3] == dia_state(ACCENT_ACUTE, 0, 0, 1)


def test_conflicting_marks_resolve_by_priority() -> None:
    p = encode_planes("α\u0300\u0301\u0313\u0314")
    assert p.diacritics.tolist() == [dia_state(ACCENT_ACUTE, BREATHING_ROUGH, 0, 0)]


def test_orphan_marks_do_not_attach_across_a_space() -> None:
    text = "\u0301λόγος \u0342καί"
    p = encode_planes(text)
    assert p.letters.tolist() == ids("λογοσκαι")
    assert p.diacritics[4] == 0 and p.diacritics[5] == 0
    assert unmodelled_offsets(text).tolist() == [0, 7]
    # a mark after a Latin letter is not a Greek diacritic either
    assert len(encode_planes("e\u0301")) == 0


@pytest.mark.parametrize("text", ["", "   ", "Hello, world.", "Привет, мир.", "שלום עולם", "مرحبا بالعالم", "1234 ()"])
def test_text_without_greek_gives_empty_planes(text: str) -> None:
    p = encode_planes(text)
    assert len(p) == 0
    assert len(unmodelled_offsets(text)) == sum(1 for c in text if not c.isspace())


@pytest.mark.parametrize("bad", [b"\xce\xbb", None, 42, ["λόγος"]])
def test_non_str_input(bad: object) -> None:
    with pytest.raises(InvalidTextError, match="expected str"):
        encode_planes(bad)  # type: ignore[arg-type]


def test_nul_and_lone_surrogates_name_the_offset() -> None:
    with pytest.raises(InvalidTextError, match="offset 3"):
        encode_planes("λόγ\x00ος")
    with pytest.raises(InvalidTextError, match="offset 2"):
        encode_planes("λό\ud800γος")


def test_five_megabyte_string() -> None:
    text = "ἀλλ’ οὐδὲ πάσχοντας φαίνεσθαι· " * 110_000
    assert len(text.encode("utf-8")) > 5_000_000
    p = encode_planes(text)
    assert len(p) == 25 * 110_000
    assert p.boundary[-1] == 2 and p.offsets[-1] == len(text) - 3


def test_codec_import_does_not_import_torch() -> None:
    code = (
        "import sys; import stoicheia_spacy.codec as c; "
        "c.decode_planes(c.encode_planes('λόγος')); c.canonicalize('λόγος'); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT, env={"PYTHONPATH": str(REPO_ROOT)})
