"""Works clustering: editions of one work end up in one cluster.

Records are nodes of a graph. Edges join (1) records with the same canonical work key
(TLG/CTS identifier, Tesserae ``author.work``), (2) records whose author/title slug matches a
Tesserae file name (``aeschylus.agamemnon``), and (3) records sharing near-duplicate content:
every record is cut into chunks of ~``chunk_words`` words, each chunk gets a MinHash of its word
3-gram shingles, and chunk pairs above the LSH Jaccard threshold (``datasketch.MinHashLSH``) link
their records once ``min_shared`` chunk pairs agree (or every chunk of the smaller record does).
Clusters are the connected components (``scipy.sparse.csgraph``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from datasketch import MinHash, MinHashLSH
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .flat import FlatCorpus

NUM_PERM = 64


def _slug(text: str) -> str:
    text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


_FMIX = (np.uint64(33), np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))


def minhash(shingles: np.ndarray, num_perm: int = NUM_PERM) -> MinHash:
    """A datasketch MinHash of precomputed 64-bit shingle hashes (the one-chunk reference of
    ``minhash_batch``)."""
    m = MinHash(num_perm=num_perm, seed=1, hashfunc=int, scheme="affine64")
    if len(shingles):
        m.update_batch(shingles.tolist())
    return m


def _fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3 64-bit finaliser, the pre-mix of datasketch's ``affine64`` scheme."""
    shift, m1, m2 = _FMIX
    with np.errstate(over="ignore"):
        h = (h ^ (h >> shift)) * m1
        h = (h ^ (h >> shift)) * m2
        return h ^ (h >> shift)


def minhash_batch(hashes: np.ndarray, offsets: np.ndarray, num_perm: int = NUM_PERM,
                  block: int = 1 << 18) -> list[MinHash]:
    """``minhash(hashes[offsets[i]:offsets[i + 1]])`` for every segment ``i``, vectorised:
    the permutations of datasketch's ``affine64`` scheme (taken from a template MinHash) are
    applied to blocks of about ``block`` shingles and min-reduced per segment in numpy, instead
    of one Python-level MinHash update per chunk."""
    template = MinHash(num_perm=num_perm, seed=1, hashfunc=int, scheme="affine64")
    a, b = template.permutations
    n = len(offsets) - 1
    values = np.tile(template.hashvalues, (n, 1))
    first = 0
    while first < n:  # segments [first, last) hold about `block` shingles
        last = max(int(np.searchsorted(offsets, offsets[first] + block, side="right")) - 1, first + 1)
        lo, hi = int(offsets[first]), int(offsets[last])
        if hi > lo:
            with np.errstate(over="ignore"):
                phv = _fmix64(hashes[lo:hi].astype(np.uint64))[:, None] * a + b
            seg = np.arange(first, last)
            nonempty = seg[offsets[first:last] < offsets[first + 1:last + 1]]
            values[nonempty] = np.minimum.reduceat(phv, offsets[nonempty] - lo, axis=0)
        first = last
    return [MinHash(num_perm=num_perm, seed=1, hashfunc=int, scheme="affine64", hashvalues=v,
                    permutations=template.permutations) for v in values]


@dataclass
class ChunkIndex:
    """Chunks of a flat corpus with their MinHashes and an LSH index over them."""

    chunks: np.ndarray  # (n, 2) sentence ranges
    chunk_record: np.ndarray  # (n,)
    hashes: list[MinHash]

    GROUP: ClassVar[int] = 4096  # chunks whose shingles are hashed together

    @classmethod
    def build(cls, flat: FlatCorpus, chunk_words: int = 200) -> ChunkIndex:
        chunks = flat.chunks(chunk_words)
        rec = flat.sent_record[chunks[:, 0]] if len(chunks) else np.zeros(0, np.int64)
        hashes: list[MinHash] = []
        for first in range(0, len(chunks), cls.GROUP):  # bounded temporaries on a large corpus
            hashes += minhash_batch(*flat.chunk_shingles(chunks[first:first + cls.GROUP]))
        return cls(chunks, rec, hashes)

    def pairs(self, threshold: float) -> np.ndarray:
        """(m, 2) chunk index pairs (i < j, different records) whose estimated Jaccard of word
        3-gram shingles is at least ``threshold``."""
        lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
        with lsh.insertion_session() as session:
            for i, m in enumerate(self.hashes):
                session.insert(i, m, check_duplication=False)
        out: list[tuple[int, int]] = []
        for i, m in enumerate(self.hashes):
            for j in lsh.query(m):
                if j > i and self.chunk_record[j] != self.chunk_record[i] and m.jaccard(self.hashes[j]) >= threshold:
                    out.append((i, j))
        return np.asarray(out, dtype=np.int64).reshape(-1, 2)


def alias_keys(record: dict) -> list[str]:
    """Name-based keys that let records of different sources meet (``name:author.title``)."""
    keys = []
    work = record.get("work", "")
    if work.startswith("tess:"):
        keys.append("name:" + work[5:])
    meta = record.get("meta") or {}
    if meta.get("author") and meta.get("title"):
        keys.append(f"name:{_slug(meta['author'])}.{_slug(meta['title'])}")
    return keys


def cluster_works(flat: FlatCorpus, index: ChunkIndex, *, threshold: float = 0.5,
                  min_shared: int = 2) -> np.ndarray:
    """Cluster id per record of ``flat`` (see module docstring); ids are 0..k-1."""
    n = len(flat.records)
    rows: list[int] = []
    cols: list[int] = []
    first: dict[str, int] = {}
    for r, rec in enumerate(flat.records):
        for key in [rec["work"], *alias_keys(rec)]:
            if key in first:
                rows.append(first[key])
                cols.append(r)
            else:
                first[key] = r
    pairs = index.pairs(threshold)
    if len(pairs):
        ra, rb = index.chunk_record[pairs[:, 0]], index.chunk_record[pairs[:, 1]]
        lo, hi = np.minimum(ra, rb), np.maximum(ra, rb)
        n_chunks = np.bincount(index.chunk_record, minlength=n)
        for (a, b), count in Counter(zip(lo.tolist(), hi.tolist(), strict=True)).items():
            if count >= min(min_shared, int(n_chunks[a]), int(n_chunks[b])):
                rows.append(a)
                cols.append(b)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)
