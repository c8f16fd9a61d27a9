"""CharPlanes helpers: slicing, concat, with_unknown, spans."""

from __future__ import annotations

import numpy as np
import pytest

from stoicheia_spacy.alphabet import BND_UNKNOWN, CAP_UNKNOWN, DIA_UNKNOWN, MASK_ID, PUNCT_UNKNOWN
from stoicheia_spacy.codec import (
    CharPlanes,
    decode_planes,
    encode_planes,
    sentence_spans,
    word_spans,
)
from stoicheia_spacy.errors import InvalidPlanesError

TEXT = "ἐν ἀρχῇ ἦν ὁ λόγος. καὶ ὁ λόγος ἦν πρὸς τὸν θεόν"


def test_slice_concat_roundtrip() -> None:
    p = encode_planes(TEXT)
    parts = [p[:5], p[5:17], p[17:]]
    assert CharPlanes.concat(parts) == p
    assert len(p[3:9]) == 6 and p[3:9].offsets.tolist() == p.offsets[3:9].tolist()
    assert CharPlanes.concat([]) == CharPlanes.empty()
    with pytest.raises(TypeError):
        p[3]  # type: ignore[index]


def test_concat_shifts_offsets() -> None:
    a, b = "ἐν ἀρχῇ", "ἦν ὁ λόγος"
    joined = CharPlanes.concat([encode_planes(a), encode_planes(b)], shifts=[0, len(a) + 1])
    assert joined.offsets.tolist() == encode_planes(a + " " + b).offsets.tolist()


def test_with_unknown_copies() -> None:
    p = encode_planes(TEXT)
    q = p.with_unknown("boundary", "diacritics", "capitals", "punctuation")
    assert set(q.boundary.tolist()) == {BND_UNKNOWN}
    assert set(q.diacritics.tolist()) == {DIA_UNKNOWN}
    assert set(q.capitals.tolist()) == {CAP_UNKNOWN}
    assert set(q.punctuation.tolist()) == {PUNCT_UNKNOWN}
    assert set(p.with_unknown("letters").letters.tolist()) == {MASK_ID}
    assert decode_planes(p) == TEXT.replace(". καὶ", ". καὶ")  # original untouched
    with pytest.raises(InvalidPlanesError):
        p.with_unknown("accents")


def test_word_and_sentence_spans() -> None:
    p = encode_planes(TEXT)
    spans = word_spans(p)
    letters = "".join("αβγδεζηθικλμνξοπρστυφχψω"[i] for i in p.letters)
    assert [letters[a:b] for a, b in spans] == "εν αρχη ην ο λογοσ και ο λογοσ ην προσ τον θεον".split()
    assert sentence_spans(p).tolist() == [[0, 14], [14, len(p)]]
    assert word_spans(CharPlanes.empty()).shape == (0, 2)
    q = p.with_unknown("boundary")
    assert word_spans(q).tolist() == [[0, len(p)]]
    assert np.array_equal(word_spans(p[:3]), np.array([[0, 2], [2, 3]]))
