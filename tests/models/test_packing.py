"""Packing of several Docs (and windows of long Docs) into the rows of one forward."""

from __future__ import annotations

import numpy as np
import pytest

from stoicheia_spacy.alphabet import PAD_ID
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.models.packing import pack_planes, windows

ILIAD = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε"
ODYSSEY = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"


def test_windows_cover_every_letter_once_away_from_cuts() -> None:
    starts, ends, owner = windows(100, max_length=32, overlap=8)
    assert starts[0] == 0 and ends[-1] == 100
    pos = np.arange(100)
    assert np.all(starts[owner] <= pos) and np.all(pos < ends[owner])
    # away from the cut edges whenever a neighbouring window exists
    inner = (owner > 0)
    assert np.all(pos[inner] - starts[owner[inner]] >= 4)
    has_next = owner < len(starts) - 1
    assert np.all(ends[owner[has_next]] - pos[has_next] > 4)


def test_short_text_is_one_window() -> None:
    starts, ends, owner = windows(10, max_length=32, overlap=8)
    assert starts.tolist() == [0] and ends.tolist() == [10] and owner.tolist() == [0] * 10


@pytest.mark.parametrize("overlap", [-1, 32, 40])
def test_bad_overlap_is_a_config_error(overlap: int) -> None:
    with pytest.raises(ConfigError):
        windows(100, max_length=32, overlap=overlap)


def test_docs_share_a_row_in_separate_segments() -> None:
    a, b = encode_planes(ODYSSEY), encode_planes("θεὰ")
    batch = pack_planes([a, b], max_length=64, overlap=8)
    assert batch.n_rows == 1 and batch.row_length == len(a) + len(b)
    assert np.array_equal(batch.input_ids.ravel()[batch.doc_index[0]], a.letters)
    assert np.array_equal(batch.input_ids.ravel()[batch.doc_index[1]], b.letters)
    seg = batch.seg_id[0]
    assert len(set(seg[: len(a)].tolist())) == 1 and seg[0] != seg[len(a)]
    assert batch.positions[0, len(a)] == 0  # positions restart in every segment


def test_long_doc_is_windowed_and_rows_are_padded() -> None:
    long, short = encode_planes(ILIAD), encode_planes(ODYSSEY)
    batch = pack_planes([short, long], max_length=32, overlap=8)
    assert batch.row_length <= 32 and batch.n_rows >= 3
    for planes, idx in zip([short, long], batch.doc_index, strict=True):
        assert np.array_equal(batch.input_ids.ravel()[idx], planes.letters)
        assert np.array_equal(batch.dia.ravel()[idx], planes.diacritics)
        assert len(np.unique(idx)) == len(idx)
    pad = batch.input_ids == PAD_ID
    real = ~pad
    # PAD positions never share a segment id with real letters
    assert not set(batch.seg_id[pad].tolist()) & set(batch.seg_id[real].tolist())


def test_docs_without_letters_take_no_rows() -> None:
    batch = pack_planes([encode_planes("123 abc"), encode_planes("")], max_length=32, overlap=8)
    assert batch.n_rows == 0 and [i.size for i in batch.doc_index] == [0, 0]
