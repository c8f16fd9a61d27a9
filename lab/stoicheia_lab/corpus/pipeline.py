"""The corpus workflow steps, one function each (run by ``python -m stoicheia_lab.corpus``).

Layout under the corpus folder ``C``: ``normalized/<source>.jsonl`` and ``stats/normalize.json``
(normalize), ``tiered/literary.jsonl`` and ``stats/tiers.json`` (tiers), ``works/records.json``,
``stats/works.json``, ``fold_<k>/{train,dev,test}.jsonl`` and ``stats/folds.json`` (folds),
``doc_clean/{train,dev}.jsonl`` and ``stats/doc_clean.json`` (doc-clean), ``manifests/*.json``
(verify), ``report/report.md`` + ``report/zone_sizes.png`` (report).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy.errors import CorpusError

from .docclean import Blocklist, doc_clean
from .flat import FlatCorpus
from .folds import N_ZONES, assign_zones, build_folds
from .readers import iter_records
from .sources import DOCUMENTARY, LITERARY, SOURCES
from .stats import source_stats
from .tiers import PRISTINE_THRESHOLD, assign_tier, load_lexicon
from .verify import read_jsonl, verify_all
from .works import ChunkIndex, cluster_works


def _dump(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")


def step_normalize(assets: Path, corpus: Path, limit: int | None = None,
                   sources: Sequence[str] = LITERARY + DOCUMENTARY) -> dict[str, Any]:
    """Read every source (``limit`` records each) into ``normalized/`` and count statistics."""
    stats: dict[str, Any] = {}
    for name in sources:
        recs = list(iter_records(name, assets, limit, with_meta=True))
        path = corpus / "normalized" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
        stats[name] = {**source_stats(recs), "license": SOURCES[name].license, "kind": SOURCES[name].kind}
    _dump(corpus / "stats" / "normalize.json", stats)
    return stats


def step_tiers(corpus: Path, lexicon: Path | None = None, threshold: float = PRISTINE_THRESHOLD) -> dict[str, Any]:
    """Score literary records into tiers; writes ``tiered/literary.jsonl``."""
    lex = load_lexicon(lexicon) if lexicon is not None else None
    counts: dict[str, Counter[str]] = {}
    out = corpus / "tiered" / "literary.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for name in LITERARY:
            for rec in read_jsonl(corpus / "normalized" / f"{name}.jsonl"):
                rec = assign_tier(rec, lex, threshold)
                counts.setdefault(name, Counter())[rec["quality"]] += 1
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    stats = {"threshold": threshold, "lexicon": str(lexicon) if lexicon else None,
             "counts": {k: dict(v) for k, v in counts.items()}}
    _dump(corpus / "stats" / "tiers.json", stats)
    return stats


def step_folds(corpus: Path, *, chunk_words: int = 200, cluster_threshold: float = 0.5,
               near_threshold: float = 0.3) -> dict[str, Any]:
    """Cluster works, assign zones and write the ten folds."""
    records = list(read_jsonl(corpus / "tiered" / "literary.jsonl"))
    if not records:
        raise CorpusError("no literary records: run normalize and tiers first")
    flat = FlatCorpus.build(records, np.zeros(len(records), np.int64))
    index = ChunkIndex.build(flat, chunk_words)
    labels = cluster_works(flat, index, threshold=cluster_threshold)
    n_clusters = int(labels.max()) + 1
    words = np.diff(flat.record_word_start)
    cluster_words = np.bincount(labels, weights=words, minlength=n_clusters).astype(np.int64)
    keys = [""] * n_clusters
    for rec, c in zip(records, labels.tolist(), strict=True):
        keys[c] = min(keys[c], rec["work"]) if keys[c] else rec["work"]
    zone_of_cluster = assign_zones(keys, cluster_words.tolist())
    record_zone = zone_of_cluster[labels]
    _dump(corpus / "works" / "records.json",
          [{"id": r["id"], "work": r["work"], "cluster": int(c), "cluster_key": keys[c], "zone": int(z)}
           for r, c, z in zip(records, labels.tolist(), record_zone.tolist(), strict=True)])
    zone_words = np.bincount(record_zone, weights=words, minlength=N_ZONES).astype(int).tolist()
    zone_clusters = np.bincount(zone_of_cluster, minlength=N_ZONES).tolist()
    _dump(corpus / "stats" / "works.json", {"records": len(records), "clusters": n_clusters,
                                            "zone_words": zone_words, "zone_clusters": zone_clusters})
    summary = build_folds(flat, index, record_zone, corpus, near_threshold=near_threshold)
    _dump(corpus / "stats" / "folds.json", summary)
    return summary


def _documentary(corpus: Path) -> list[dict]:
    return [r for name in DOCUMENTARY if (corpus / "normalized" / f"{name}.jsonl").is_file()
            for r in read_jsonl(corpus / "normalized" / f"{name}.jsonl")]


def step_doc_clean(corpus: Path, blocklist: Path | None = None, *, chunk_words: int = 200) -> dict[str, Any]:
    """Write the documentary-clean corpus ``doc_clean/``."""
    records = list(read_jsonl(corpus / "tiered" / "literary.jsonl"))
    zones = {r["id"]: r["zone"] for r in json.loads((corpus / "works" / "records.json").read_text(encoding="utf-8"))}
    try:
        record_zone = np.array([zones[r["id"]] for r in records], dtype=np.int64)
    except KeyError as exc:
        raise CorpusError(f"record {exc} has no zone: rerun folds") from None
    stats = doc_clean(records, record_zone, _documentary(corpus), Blocklist.read(blocklist),
                      corpus / "doc_clean", chunk_words=chunk_words)
    _dump(corpus / "stats" / "doc_clean.json", stats)
    return stats


def step_verify(corpus: Path, blocklist: Path | None = None) -> dict[str, Any]:
    """Prove zero leakage of the written corpora; writes ``manifests/``."""
    return verify_all(corpus, _documentary(corpus), Blocklist.read(blocklist).passages, corpus / "manifests")
