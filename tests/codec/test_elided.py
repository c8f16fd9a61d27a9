"""The source's elision marks travel with the planes (``CharPlanes.elided``)."""

from __future__ import annotations

import numpy as np

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.codec import CharPlanes, decode_planes, encode_planes, unmodelled_offsets

TEXT = "ἔχουσ’ ἀλλ’ οὐ λόγους"  # ἔχουσ’ is invisible to the rule: σ may end a word


def test_recorded_elision_decodes_exactly() -> None:
    planes = encode_planes(TEXT)
    assert planes.elided is not None and planes.elided.sum() == 2
    assert decode_planes(planes) == TEXT


def test_without_the_record_the_rule_decides() -> None:
    planes = encode_planes(TEXT)
    planes.elided = None
    assert decode_planes(planes) == "ἔχους ἀλλ’ οὐ λόγους"


def test_elided_survives_slicing_copy_and_concat() -> None:
    planes = encode_planes(TEXT)
    head, tail = planes[:5], planes[5:]
    assert head.elided is not None and head.elided[-1]
    joined = CharPlanes.concat([head, tail])
    assert joined.elided is not None and np.array_equal(joined.elided, planes.elided)
    assert decode_planes(joined) == TEXT and decode_planes(planes.copy()) == TEXT
    assert decode_planes(CharPlanes.concat([head, encode_planes("λόγος")[:0]])) == "ἔχουσ’"


def test_elision_only_renders_at_a_word_end() -> None:
    planes = encode_planes(TEXT)
    planes.boundary[4] = A.BND_INTERNAL  # a model joined ἔχουσ’ to the next word
    assert decode_planes(planes).startswith("ἔχουσἀλλ’ ")


def test_accent_then_comma_above_on_a_final_vowel_is_elision() -> None:
    """UD Perseus writes δύ̓, Δί̓, θηρί̓: U+0313 after the accent, not a breathing (δὔ)."""
    text = "οὐ δύ\u0313 ἀποπνίξασ\u0313 ἑταίρους, μὰ Δί\u0313 ἀλλ\u0313 ἑταίρων"
    planes = encode_planes(text)
    assert planes.elided is not None
    words = decode_planes(planes).split(" ")
    assert [w for w in words if w.endswith("’")] == ["δύ’", "ἀποπνίξασ’", "Δί’", "ἀλλ’"]
    assert planes.letters[3] == A.ALPHABET.index("υ")  # ο υ δ [υ]
    assert planes.diacritics[3] == A.dia_state(A.ACCENT_ACUTE, A.BREATHING_NONE, 0, 0)
    planes.elided = None  # the rule knows δύ’ and Δί’ too
    assert decode_planes(planes).split(" ")[1] == "δύ’"


def test_prodelision_keeps_its_mark() -> None:
    text = "ἀλλ\u0313 ἡ θύρα \u0313στ\u0313 ἀνεῳγμένη. μὴ ’ξαπατηθῇς"
    planes = encode_planes(text)
    assert planes.prodelided is not None and planes.prodelided.sum() == 2
    assert decode_planes(planes) == "ἀλλ’ ἡ θύρα ’στ’ ἀνεῳγμένη. μὴ ’ξαπατηθῇς"
    assert len(unmodelled_offsets(text)) == 0
    sliced = planes[8:]  # the record travels with slices and concatenation
    assert decode_planes(sliced).startswith("’στ’")
    assert decode_planes(CharPlanes.concat([planes[:8], sliced])) == decode_planes(planes)
    planes.prodelided = None  # planes from a model carry no record: no mark
    assert decode_planes(planes) == "ἀλλ’ ἡ θύρα στ’ ἀνεῳγμένη. μὴ ξαπατηθῇς"
