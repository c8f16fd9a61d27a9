"""The source's elision marks travel with the planes (``CharPlanes.elided``)."""

from __future__ import annotations

import numpy as np

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.codec import CharPlanes, decode_planes, encode_planes

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
