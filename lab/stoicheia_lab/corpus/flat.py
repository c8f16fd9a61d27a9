"""Flat, vectorised view of a record collection for collision detection.

All words of all records are concatenated into one int64 array of vocabulary ids
(``textnorm.word_keys``), with sentence and record offsets beside it. Every record carries a
bit mask of the *groups* it belongs to (a zone 0-9, or the documentary bit); the collision
functions return, per sentence, the OR of the group bits of every *other* occurrence of the
same n-gram / sentence key, so "does this sentence collide with held-out zone k" is one AND.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from stoicheia_spacy.provenance.hashing import mix64, ngram_hashes
from stoicheia_spacy.textnorm import sentence_spans, word_keys

from .readers import Record

_U64 = np.uint64


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values by sort-and-compare (``np.unique`` of numpy 2.4 takes a hash-table
    route that is ~15x slower on millions of 64-bit hashes)."""
    s = np.sort(values)
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def valid_ngram_starts(record_word_start: np.ndarray, n: int) -> np.ndarray:
    """Global word indices where an n-gram starts without crossing a record boundary."""
    lengths = np.diff(record_word_start)
    counts = np.maximum(lengths - n + 1, 0)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    rec = np.repeat(np.arange(len(lengths)), counts)
    first = np.cumsum(counts) - counts
    return (record_word_start[:-1][rec] + np.arange(total) - first[rec]).astype(np.int64)


def group_or(keys: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """For each element, the OR of ``bits`` over all elements sharing its key (0 for key 0)."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    reduced = np.bitwise_or.reduceat(bits[order], starts)
    group = np.cumsum(np.r_[True, k[1:] != k[:-1]]) - 1
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = reduced[group]
    out[keys == 0] = 0
    return out


@dataclass
class FlatCorpus:
    """Records flattened into word, sentence and record arrays (see module docstring)."""

    records: list[Record]
    bits: np.ndarray  # (n_records,) int64 group mask per record
    word_ids: np.ndarray  # (n_words,) int64
    record_word_start: np.ndarray  # (n_records + 1,)
    sent_record: np.ndarray  # (n_sents,)
    sent_span: np.ndarray  # (n_sents, 2) character span in the record text
    sent_word_start: np.ndarray  # (n_sents + 1,)
    record_sent_start: np.ndarray  # (n_records + 1,)
    vocab: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, records: Iterable[Record], bits: Sequence[int] | np.ndarray,
              vocab: dict[str, int] | None = None, sentences: bool = True) -> FlatCorpus:
        """Tokenise ``records`` (sentences, matching keys) into flat arrays; with
        ``sentences=False`` each record is one sentence (same words, for record-level n-grams)."""
        vocab = {} if vocab is None else vocab
        recs = list(records)
        ids: list[int] = []
        sent_record: list[int] = []
        spans: list[tuple[int, int]] = []
        sent_word_start = [0]
        record_word_start = [0]
        record_sent_start = [0]
        setdefault = vocab.setdefault
        for r, rec in enumerate(recs):
            text = rec["text"]
            for a, b in sentence_spans(text) if sentences else [(0, len(text))]:
                keys = word_keys(text[a:b])
                ids.extend([setdefault(w, len(vocab)) for w in keys])
                sent_record.append(r)
                spans.append((a, b))
                sent_word_start.append(len(ids))
            record_word_start.append(len(ids))
            record_sent_start.append(len(spans))
        return cls(
            records=recs, bits=np.asarray(bits, dtype=np.int64),
            word_ids=np.asarray(ids, dtype=np.int64),
            record_word_start=np.asarray(record_word_start, dtype=np.int64),
            sent_record=np.asarray(sent_record, dtype=np.int64),
            sent_span=np.asarray(spans, dtype=np.int64).reshape(-1, 2),
            sent_word_start=np.asarray(sent_word_start, dtype=np.int64),
            record_sent_start=np.asarray(record_sent_start, dtype=np.int64),
            vocab=vocab,
        )

    @cached_property
    def word_hash(self) -> np.ndarray:
        """Per-word 64-bit hash of its vocabulary id (computed once; ``word_ids`` is fixed)."""
        return mix64(self.word_ids.astype(_U64) + _U64(1))

    def word_record(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.records)), np.diff(self.record_word_start))

    def sent_lengths(self) -> np.ndarray:
        return np.diff(self.sent_word_start)

    def _words_to_sentences(self, word_mask: np.ndarray) -> np.ndarray:
        """OR of a per-word mask over each sentence (0 for sentences without words)."""
        out = np.zeros(len(self.sent_record), dtype=np.int64)
        nonempty = np.flatnonzero(self.sent_lengths() > 0)
        if len(nonempty) and len(word_mask):
            out[nonempty] = np.bitwise_or.reduceat(word_mask, self.sent_word_start[nonempty])
        return out

    def ngram_sentence_mask(self, n: int) -> np.ndarray:
        """Per sentence: group bits of every record sharing a word n-gram that touches it.

        n-grams run across sentence boundaries inside a record (not across records), so a
        kept run of consecutive sentences contains no n-gram that was not checked.
        """
        starts = valid_ngram_starts(self.record_word_start, n)
        h = ngram_hashes(self.word_hash, starts, n)
        gram_bits = self.bits[self.word_record()[starts]] if len(starts) else np.zeros(0, np.int64)
        gram_mask = group_or(h.view(np.int64) | 1, gram_bits)  # |1 keeps 0 free as "no key"
        word_mask = np.zeros(len(self.word_ids), dtype=np.int64)
        for j in range(n):
            word_mask[starts + j] |= gram_mask
        return self._words_to_sentences(word_mask)

    def sentence_key_masks(self, min_words: int) -> tuple[np.ndarray, np.ndarray]:
        """Per sentence: group bits of sentences with the same words in the same order (exact)
        and in any order (bag of words), for sentences of at least ``min_words`` words."""
        lengths = self.sent_lengths()
        sent_of_word = np.repeat(np.arange(len(lengths)), lengths)
        pos = np.arange(len(self.word_ids)) - self.sent_word_start[:-1][sent_of_word]
        wh = self.word_hash
        exact_terms = mix64(wh ^ mix64(pos.astype(_U64) + _U64(7)))
        bag_terms = mix64(wh ^ _U64(0x5BD1E995))
        exact = np.zeros(len(lengths), dtype=_U64)
        bag = np.zeros(len(lengths), dtype=_U64)
        nonempty = np.flatnonzero(lengths > 0)
        if len(nonempty):
            with np.errstate(over="ignore"):
                exact[nonempty] = np.add.reduceat(exact_terms, self.sent_word_start[nonempty])
                bag[nonempty] = np.add.reduceat(bag_terms, self.sent_word_start[nonempty])
        with np.errstate(over="ignore"):
            exact = mix64(exact + lengths.astype(_U64)) | _U64(1)
            bag = mix64(bag ^ mix64(lengths.astype(_U64))) | _U64(1)
        short = lengths < max(min_words, 1)
        exact[short] = 0
        bag[short] = 0
        sbits = self.bits[self.sent_record]
        return group_or(exact.view(np.int64), sbits), group_or(bag.view(np.int64), sbits)

    def chunks(self, chunk_words: int) -> np.ndarray:
        """Chunk boundaries as sentence indices: consecutive sentences of one record grouped
        until they hold at least ``chunk_words`` words (a short tail joins the previous chunk).
        Returns (n_chunks, 2) half-open sentence ranges."""
        out: list[tuple[int, int]] = []
        lengths = self.sent_lengths()
        for r in range(len(self.records)):
            s0, s1 = int(self.record_sent_start[r]), int(self.record_sent_start[r + 1])
            cum = np.cumsum(lengths[s0:s1])
            start, base = s0, 0
            for i in np.flatnonzero(cum >= chunk_words):
                if cum[i] - base >= chunk_words:
                    out.append((start, s0 + int(i) + 1))
                    start, base = s0 + int(i) + 1, int(cum[i])
            if start < s1:
                if out and out[-1][1] == start and out[-1][0] >= s0 and cum[-1] - base < chunk_words // 2:
                    out[-1] = (out[-1][0], s1)
                else:
                    out.append((start, s1))
        return np.asarray(out, dtype=np.int64).reshape(-1, 2)

    def shingles(self, s0: int, s1: int, k: int = 3) -> np.ndarray:
        """Distinct word k-gram hashes of sentences [s0, s1) (single words if shorter).

        The reference for one chunk; ``chunk_shingles`` computes every chunk at once."""
        w0, w1 = int(self.sent_word_start[s0]), int(self.sent_word_start[s1])
        wh = self.word_hash[w0:w1]
        if len(wh) < k:
            return distinct(wh)
        return distinct(ngram_hashes(wh, np.arange(len(wh) - k + 1), k))

    def chunk_shingles(self, chunks: np.ndarray, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
        """Word k-gram hashes of every chunk at once (single words for chunks shorter than
        ``k``; repeats kept, which a MinHash ignores): the hashes and (n_chunks + 1,) offsets,
        chunk ``i`` owning ``hashes[offsets[i]:offsets[i + 1]]``. Same sets as ``shingles``."""
        if not len(chunks):
            return np.zeros(0, dtype=_U64), np.zeros(1, dtype=np.int64)
        w0 = self.sent_word_start[chunks[:, 0]]
        length = self.sent_word_start[chunks[:, 1]] - w0
        long = length >= k
        counts = np.where(long, length - k + 1, length)
        offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
        seg = np.repeat(np.arange(len(chunks)), counts)
        idx = w0[seg] + np.arange(int(offsets[-1])) - offsets[:-1][seg]
        out = np.empty(len(idx), dtype=_U64)
        is_long = long[seg]
        out[is_long] = ngram_hashes(self.word_hash, idx[is_long], k)
        out[~is_long] = self.word_hash[idx[~is_long]]
        return out, offsets
