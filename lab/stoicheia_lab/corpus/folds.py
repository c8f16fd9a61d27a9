"""Zones, the 10-fold rotation and sentence-level excision.

Clusters (``works.cluster_works``) go to ten zones: clusters are taken largest first and each
goes to its preferred zone (blake2b hash of its smallest work key, mod 10) unless that zone is
already above its fair share, in which case it goes to the lightest zone: deterministic and
balanced by size. Fold k tests on zone k and develops on zone k+1 (mod 10); its training data are
the other eight zones minus every sentence that collides with a held-out zone (``collision_masks``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .flat import FlatCorpus
from .readers import Record
from .works import ChunkIndex

N_ZONES = 10
OUTPUT_KEYS = ("id", "text", "tier", "source", "work")


def stable_hash(key: str) -> int:
    """A process-independent 64-bit hash of a string."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def assign_zones(cluster_keys: Sequence[str], sizes: Sequence[int], n_zones: int = N_ZONES,
                 slack: float = 0.02) -> np.ndarray:
    """Zone per cluster: hash-preferred, largest clusters first, balanced by ``sizes``."""
    sizes_arr = np.asarray(sizes, dtype=np.float64)
    fair = sizes_arr.sum() / n_zones * (1 + slack)
    load = np.zeros(n_zones)
    zones = np.zeros(len(cluster_keys), dtype=np.int64)
    hashes = [stable_hash(k) for k in cluster_keys]
    for c in sorted(range(len(cluster_keys)), key=lambda c: (-sizes_arr[c], hashes[c])):
        z = hashes[c] % n_zones
        if load[z] + sizes_arr[c] > fair:
            z = int(np.argmin(load))
        zones[c] = z
        load[z] += sizes_arr[c]
    return zones


def fold_zones(k: int, n_zones: int = N_ZONES) -> tuple[int, int]:
    """(test zone, dev zone) of fold ``k``."""
    return k % n_zones, (k + 1) % n_zones


def near_duplicate_mask(flat: FlatCorpus, index: ChunkIndex, threshold: float) -> np.ndarray:
    """Per sentence: group bits of records holding a near-duplicate (LSH) of its chunk."""
    chunk_mask = np.zeros(len(index.chunks), dtype=np.int64)
    pairs = index.pairs(threshold)
    if len(pairs):
        rec_bits = flat.bits[index.chunk_record]
        np.bitwise_or.at(chunk_mask, pairs[:, 0], rec_bits[pairs[:, 1]])
        np.bitwise_or.at(chunk_mask, pairs[:, 1], rec_bits[pairs[:, 0]])
    out = np.zeros(len(flat.sent_record), dtype=np.int64)
    for (a, b), m in zip(index.chunks.tolist(), chunk_mask.tolist(), strict=True):
        if m:
            out[a:b] |= m
    return out


def collision_masks(flat: FlatCorpus, index: ChunkIndex, *, n: int = 5, min_words: int = 3,
                    near_threshold: float = 0.3) -> dict[str, np.ndarray]:
    """Per-sentence group masks by reason: ``ngram`` (word n-grams), ``exact`` and ``bag``
    (whole sentences of at least ``min_words`` words, in order / in any order), ``near``
    (chunk-level MinHash-LSH near-duplicates at ``near_threshold``)."""
    exact, bag = flat.sentence_key_masks(min_words)
    return {"ngram": flat.ngram_sentence_mask(n), "exact": exact, "bag": bag,
            "near": near_duplicate_mask(flat, index, near_threshold)}


def kept_runs(flat: FlatCorpus, r: int, keep: np.ndarray) -> Iterator[Record]:
    """Output records of record ``r`` from its kept sentences: each maximal run of consecutive
    kept sentences becomes one record (id suffixed ``#k`` unless the record is kept whole), so
    no new word sequence is created by joining text around an excised sentence."""
    rec = flat.records[r]
    s0, s1 = int(flat.record_sent_start[r]), int(flat.record_sent_start[r + 1])
    k = keep[s0:s1]
    base = {key: rec[key] for key in OUTPUT_KEYS if key not in ("id", "text")}
    if k.all():
        yield {"id": rec["id"], "text": rec["text"], **base}
        return
    edges = np.flatnonzero(np.diff(np.r_[0, k.astype(np.int8), 0]))
    for j, (a, b) in enumerate(zip(edges[::2], edges[1::2], strict=True)):
        text = rec["text"][flat.sent_span[s0 + a, 0]:flat.sent_span[s0 + b - 1, 1]].strip()
        if text:
            yield {"id": f"{rec['id']}#{j}", "text": text, **base}


def write_jsonl(path: Path, records: Iterable[Record]) -> int:
    """Write records (only the output keys) one JSON object per line; returns the count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps({k: rec[k] for k in OUTPUT_KEYS}, ensure_ascii=False) + "\n")
            n += 1
    return n


def excise(flat: FlatCorpus, masks: dict[str, np.ndarray], records: Iterable[int],
           held_bits: int) -> tuple[list[Record], dict[str, int]]:
    """Kept runs of ``records`` after dropping sentences whose masks hit ``held_bits``;
    also returns the number of excised sentences per reason (a sentence counts once per reason)."""
    hit = {name: (m & held_bits) != 0 for name, m in masks.items()}
    drop = np.zeros(len(flat.sent_record), dtype=bool)
    for h in hit.values():
        drop |= h
    keep = ~drop
    rec_list = list(records)
    counts: dict[str, int] = {}
    if rec_list:
        sel = np.isin(flat.sent_record, rec_list)
        counts = {name: int((h & sel).sum()) for name, h in hit.items()}
        counts["sentences_excised"] = int((drop & sel).sum())
        counts["sentences_total"] = int(sel.sum())
    out = [run for r in rec_list for run in kept_runs(flat, r, keep)]
    return out, counts


def build_folds(flat: FlatCorpus, index: ChunkIndex, record_zone: np.ndarray, out_dir: Path,
                folds: Sequence[int] = range(N_ZONES), **mask_kwargs: Any) -> dict[str, Any]:
    """Write ``fold_k/{train,dev,test}.jsonl`` for each fold; returns per-fold excision stats."""
    flat.bits = (np.int64(1) << record_zone.astype(np.int64)).astype(np.int64)
    masks = collision_masks(flat, index, **mask_kwargs)
    summary: dict[str, Any] = {}
    for k in folds:
        test_z, dev_z = fold_zones(k)
        held = (1 << test_z) | (1 << dev_z)
        train_recs = np.flatnonzero((record_zone != test_z) & (record_zone != dev_z)).tolist()
        train, counts = excise(flat, masks, train_recs, held)
        d = out_dir / f"fold_{k}"
        counts["train_records"] = write_jsonl(d / "train.jsonl", train)
        counts["test_records"] = write_jsonl(d / "test.jsonl", (flat.records[r] for r in np.flatnonzero(record_zone == test_z)))
        counts["dev_records"] = write_jsonl(d / "dev.jsonl", (flat.records[r] for r in np.flatnonzero(record_zone == dev_z)))
        counts["test_zone"], counts["dev_zone"] = test_z, dev_z
        summary[f"fold_{k}"] = counts
    return summary
