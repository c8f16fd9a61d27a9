"""Build the membership indexes: the shipped model's training 5-grams, and our folds' zones.

* model index: one Bloom filter over the distinct word 5-grams of the text a model was
  trained on (records of a JSON-lines corpus, optionally minus the trainer's dev slice);
* zone index: one Bloom filter over (zone, 5-gram) keys, zone ``k`` being the test set of
  fold ``k`` of a ``projects/corpus`` run (``corpus/fold_<k>/test.jsonl``). ``verify`` proved
  that fold ``k`` trained on no 5-gram of zones ``k`` (test) and ``k + 1`` (dev).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorpusError
from .bloom import BloomFilter, optimal_shape
from .hashing import mix64
from .ngrams import CorpusNgrams, N

N_ZONES = 10


def zone_keys(keys: np.ndarray, zone: int) -> np.ndarray:
    """Keys of n-grams tagged with a zone (distinct per zone, stable)."""
    with np.errstate(over="ignore"):
        return mix64(np.asarray(keys, np.uint64) ^ mix64(np.full(len(keys), zone + 1, np.uint64)))


def is_trainer_dev(record_id: str, fraction: float) -> bool:
    """Whether the pretraining trainer held this record out as dev: the same rule as
    ``pretrain.data.is_dev`` (blake2b-64 of the id below ``fraction``), restated here because
    the package never imports ``pretrain``; a test checks that the two agree."""
    digest = hashlib.blake2b(record_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return fraction > 0.0 and int.from_bytes(digest, "big") / 2.0**64 < fraction


def iter_texts(path: Path, dev_fraction: float = 0.0) -> Iterator[str]:
    """Texts of a JSON-lines corpus; with ``dev_fraction``, minus the records the pretraining
    trainer held out as dev (:func:`is_trainer_dev` on the record id)."""
    try:
        with path.open(encoding="utf-8") as handle:
            for n, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorpusError(f"{path}:{n}: not JSON ({exc})") from exc
                if dev_fraction and is_trainer_dev(str(rec.get("id", "")), dev_fraction):
                    continue
                yield rec["text"]
    except OSError as exc:
        raise CorpusError(f"cannot read corpus {path}: {exc}") from exc


def _sized(n_items: int, fp_rate: float | None, max_bytes: int | None) -> tuple[int, int]:
    if max_bytes is not None and fp_rate is not None:
        m, k = optimal_shape(n_items, fp_rate=fp_rate)
        return (m, k) if m <= max_bytes * 8 else optimal_shape(n_items, max_bytes=max_bytes)
    return optimal_shape(n_items, fp_rate=fp_rate, max_bytes=max_bytes)


def build_model_index(corpora: list[Path], out: Path, *, name: str, dev_fraction: float = 0.0,
                      fp_rate: float | None = 0.01, max_bytes: int | None = None, n: int = N) -> dict[str, Any]:
    """Write the model index of the texts in ``corpora``; returns its metadata."""
    grams = CorpusNgrams(n)
    for path in corpora:
        grams.add_texts(iter_texts(path, dev_fraction))
    keys = grams.distinct()
    m, k = _sized(len(keys), fp_rate, max_bytes)
    bloom = BloomFilter(m, k, meta={"kind": "model", "model": name, "n": n, "items": int(len(keys)),
                                    "records": grams.texts, "words": grams.words, "dev_fraction": dev_fraction,
                                    "corpora": [p.name for p in corpora]})
    bloom.add(keys)
    out.parent.mkdir(parents=True, exist_ok=True)
    bloom.save(out)
    return {**bloom.meta, "m_bits": m, "k": k, "fp_rate": bloom.fp_rate, "bytes": out.stat().st_size}


def build_zone_index(corpus_dir: Path, out: Path, *, fp_rate: float | None = 0.01,
                     max_bytes: int | None = None, n: int = N) -> dict[str, Any]:
    """Write the zone index of a ``projects/corpus`` output folder (``fold_<k>/test.jsonl``)."""
    per_zone: list[np.ndarray] = []
    records = words = 0
    for zone in range(N_ZONES):
        path = corpus_dir / f"fold_{zone}" / "test.jsonl"
        if not path.is_file():
            raise CorpusError(f"missing {path}: run the corpus workflow (folds) first")
        grams = CorpusNgrams(n)
        grams.add_texts(iter_texts(path))
        per_zone.append(zone_keys(grams.distinct(), zone))
        records, words = records + grams.texts, words + grams.words
    total = int(sum(len(z) for z in per_zone))
    m, k = _sized(total, fp_rate, max_bytes)
    bloom = BloomFilter(m, k, meta={"kind": "zones", "n": n, "zones": N_ZONES, "items": total,
                                    "records": records, "words": words,
                                    "zone_items": [int(len(z)) for z in per_zone]})
    for keys in per_zone:
        bloom.add(keys)
    out.parent.mkdir(parents=True, exist_ok=True)
    bloom.save(out)
    return {**bloom.meta, "m_bits": m, "k": k, "fp_rate": bloom.fp_rate, "bytes": out.stat().st_size}
