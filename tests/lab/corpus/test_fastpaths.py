"""The vectorised paths of the corpus steps give exactly what the per-item reference gives,
on real Greek records of every mirrored source (and on the bundled samples without the mirror)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from stoicheia_lab.corpus import DOCUMENTARY, LITERARY, iter_records
from stoicheia_lab.corpus.flat import FlatCorpus, distinct
from stoicheia_lab.corpus.readers import Record
from stoicheia_lab.corpus.works import ChunkIndex, minhash, minhash_batch

from stoicheia_spacy.textnorm import sentence_spans, strip_marks, word_keys

from .greek_samples import HDT, ILIAD, PLATO, THUC, rec

_KEY_WORD = re.compile("[α-ω]+")


def _reference_word_keys(text: str) -> list[str]:
    """``word_keys`` as it was: regex over the folded text."""
    return _KEY_WORD.findall(strip_marks(text))


@pytest.fixture(scope="module")
def real_records(shared_data: Path) -> list[Record]:
    return [r for name in LITERARY + DOCUMENTARY for r in iter_records(name, shared_data, limit=2)]


def _assert_minhashes_match(records: list[Record], chunk_words: int, block: int) -> None:
    flat = FlatCorpus.build(records, np.zeros(len(records), np.int64))
    chunks = flat.chunks(chunk_words)
    hashes, offsets = flat.chunk_shingles(chunks)
    fast = minhash_batch(hashes, offsets, block=block)
    assert len(fast) == len(chunks) > 0
    for i, (a, b) in enumerate(chunks.tolist()):
        ref = flat.shingles(a, b)
        assert (distinct(hashes[offsets[i]:offsets[i + 1]]) == ref).all()
        assert (fast[i].hashvalues == minhash(ref).hashvalues).all()
    index = ChunkIndex.build(flat, chunk_words)
    assert all((m.hashvalues == f.hashvalues).all() for m, f in zip(index.hashes, fast, strict=True))


def test_word_keys_equal_reference_on_real_records(real_records: list[Record]) -> None:
    assert len(real_records) == 2 * len(LITERARY + DOCUMENTARY)
    for r in real_records:
        text = r["text"]
        assert word_keys(text) == _reference_word_keys(text)
        for a, b in sentence_spans(text)[:50]:
            assert word_keys(text[a:b]) == _reference_word_keys(text[a:b])


def test_word_keys_edge_characters() -> None:
    odd = ("ΣΟΦΟΣ σοφὸς ϲοφόϲ ἀΐδιος \u0313Ασσυρίων ᾅδης Ϲ ϐϑϕ ά\u1dc0β λό\u0301γος "
           "İstanbul ﬀ abc1δ 𝔄α \ud800x ΜΗΝΙΝ")
    assert word_keys(odd) == _reference_word_keys(odd)
    assert word_keys("μῆνιν ἄειδε θεὰ") == ["μηνιν", "αειδε", "θεα"]
    assert word_keys("") == [] and word_keys("123 abc") == []


def test_minhash_batch_equals_per_chunk_on_real_records(real_records: list[Record]) -> None:
    _assert_minhashes_match(real_records, chunk_words=200, block=5000)
    _assert_minhashes_match(real_records[:6], chunk_words=1, block=7)  # chunks shorter than a shingle


def test_minhash_batch_equals_per_chunk_on_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChunkIndex, "GROUP", 3)  # ChunkIndex.build hashes chunks in groups of 3
    records = [rec("plato", PLATO, "tlg0059.tlg002"), rec("hdt", HDT, "tlg0016.tlg001"),
               rec("iliad", ILIAD, "tlg0012.tlg001"), rec("thuc", THUC, "tlg0003.tlg001"),
               rec("empty", "123.", "x")]
    _assert_minhashes_match(records, chunk_words=20, block=50)
    _assert_minhashes_match(records, chunk_words=2, block=1 << 18)


def test_distinct_and_cached_word_hash() -> None:
    values = np.random.default_rng(0).integers(0, 1 << 20, 10_000).astype(np.uint64)
    assert (distinct(values) == np.unique(values)).all()
    assert len(distinct(np.zeros(0, np.uint64))) == 0
    flat = FlatCorpus.build([rec("plato", PLATO, "tlg0059.tlg002")], [1])
    assert flat.word_hash is flat.word_hash
