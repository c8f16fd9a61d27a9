"""Decoding: rendering rules, UNKNOWN ids, MASK/BLANK, the elision rule, bad planes."""

from __future__ import annotations

import numpy as np
import pytest

from stoicheia_spacy.alphabet import BLANK_ID, MASK_ID
from stoicheia_spacy.codec import CharPlanes, decode_planes, elision_mask, encode_planes
from stoicheia_spacy.errors import InvalidPlanesError


def rt(text: str) -> str:
    return decode_planes(encode_planes(text))


def test_renders_nfc_polytonic_with_final_sigma_and_single_spaces() -> None:
    assert rt("  Σωκράτης   λέγει,\n\tὦ  ἄνδρες Ἀθηναῖοι ,τί   ποιεῖτε ;  ") == (
        "Σωκράτης λέγει, ὦ ἄνδρες Ἀθηναῖοι, τί ποιεῖτε;"
    )
    assert rt("ΣΟΦΟΣ ἐστι") == "ΣΟΦΟΣ ἐστι"
    assert rt("ϲοφόϲ\u0387") == "σοφός\u00b7"
    out = rt("ᾠδῇ προΐημι")
    assert out == "ᾠδῇ προΐημι" and out == __import__("unicodedata").normalize("NFC", out)


def test_unknown_planes_render_what_is_known() -> None:
    p = encode_planes("Ὅσοι λόγοι, τόσοι.")
    assert decode_planes(p.with_unknown("diacritics")) == "Οσοι λογοι, τοσοι."
    assert decode_planes(p.with_unknown("boundary")) == "Ὅσοιλόγοι,τόσοι."
    assert decode_planes(p.with_unknown("punctuation")) == "Ὅσοι λόγοι τόσοι"
    assert decode_planes(p.with_unknown("capitals")) == "ὅσοι λόγοι, τόσοι."
    assert decode_planes(encode_planes("λόγος καλός").with_unknown("boundary")) == "λόγοσκαλόσ"


def test_mask_and_blank() -> None:
    p = encode_planes("λόγος")
    p.letters[1] = MASK_ID
    assert decode_planes(p) == "λ◌́γος"
    assert decode_planes(p, mask_char="_") == "λ_́γος"
    q = encode_planes("ἦν λόγος")
    q.letters[1] = BLANK_ID  # ν -> nothing; its boundary still separates the words
    assert decode_planes(q) == "ἦ λόγος"
    r = encode_planes("ἦν λόγος")
    r.letters[2:5] = BLANK_ID
    assert decode_planes(r) == "ἦν ος"


@pytest.mark.parametrize(
    ("text", "elided_words"),
    [
        ("ἀλλ’ ἐκ τοῦ οὐκ ἔστ’ οὐχ ὁρᾷς", ["ἀλλ", "ἔστ"]),
        ("παρ’ αὐτοῦ γὰρ ὅσπερ περ ὕδωρ", ["παρ"]),
        ("σφόδρ’ ἔχων ἐλπίδ’ ἔχει", ["σφόδρ", "ἐλπίδ"]),
        ("Ἀβραὰμ ἐγέννησεν Ἰσαάκ Ἰακὼβ δὲ", []),
        ("δι’ αὐτοῦ ἵν’ ἴδῃς τιν’ ἐκεῖν’ ἆρ’ οὖν", ["δι", "ἵν", "τιν", "ἐκεῖν", "ἆρ"]),
        ("θάλασσ’ ἐστί", ["θάλασσ"]),
        ("ὥστ’ οὐδέν", ["ὥστ"]),
    ],
)
def test_elision_rule(text: str, elided_words: list[str]) -> None:
    p = encode_planes(text)
    mask = elision_mask(p)
    words = rt(text).split()
    got = [w.rstrip("’") for w in words if w.endswith("’")]
    assert got == elided_words
    assert int(mask.sum()) == len(elided_words)


def test_elision_rule_ignores_unknown_letters() -> None:
    p = encode_planes("ἀλλ’ οὐ")
    p.letters[2] = MASK_ID
    assert not elision_mask(p).any()


def test_empty_and_invalid_planes() -> None:
    assert decode_planes(CharPlanes.empty()) == ""
    p = encode_planes("λόγος")
    p.diacritics[0] = 49
    with pytest.raises(InvalidPlanesError, match="diacritics"):
        decode_planes(p)
    with pytest.raises(InvalidPlanesError):
        decode_planes("λόγος")  # type: ignore[arg-type]
    with pytest.raises(InvalidPlanesError, match="equal lengths"):
        CharPlanes(np.zeros(2), np.zeros(3), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))
