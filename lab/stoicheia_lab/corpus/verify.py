"""Independent verification of the written folds and doc-clean corpus.

Recomputes word n-grams from the output files themselves (``textnorm.word_keys``, n-grams inside
each output record) and proves, per fold, that no word 5-gram of ``train.jsonl`` occurs in
``test.jsonl`` or ``dev.jsonl``, and for doc-clean that no word 8-gram of its training or dev text
occurs in documentary text or a blocklist passage. Writes per-fold manifests.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy.errors import ContaminationError, CorpusError
from stoicheia_spacy.provenance.hashing import ngram_hashes

from .fetch import sha256_of
from .flat import FlatCorpus, distinct, valid_ngram_starts
from .readers import Record


def read_jsonl(path: Path) -> Iterator[Record]:
    """Records of a JSONL file; raises CorpusError when missing or malformed."""
    if not path.is_file():
        raise CorpusError(f"missing corpus file {path}")
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{path}:{n}: not JSON ({exc})") from exc


class NgramSet:
    """Word n-gram hashes of a record collection, with a shared vocabulary for lookups."""

    def __init__(self, records: Iterable[Record], n: int, vocab: dict[str, int]) -> None:
        self.flat = FlatCorpus.build(records, np.zeros(0, np.int64), vocab=vocab, sentences=False)
        self.n = n
        self.starts = valid_ngram_starts(self.flat.record_word_start, n)
        self.hashes = ngram_hashes(self.flat.word_hash, self.starts, n)

    def unique(self) -> np.ndarray:
        return distinct(self.hashes)

    def leaks(self, other: np.ndarray, limit: int = 5) -> tuple[int, list[str]]:
        """How many distinct n-grams are shared with ``other`` and a few of them as text."""
        shared = np.intersect1d(self.unique(), other, assume_unique=True)
        if not len(shared):
            return 0, []
        words = {i: w for w, i in self.flat.vocab.items()}
        pos = self.starts[np.isin(self.hashes, shared[:limit])][:limit]
        ids = self.flat.word_ids
        return len(shared), [" ".join(words[int(ids[p + j])] for j in range(self.n)) for p in pos]


def split_counts(path: Path) -> dict[str, Any]:
    recs = list(read_jsonl(path))
    return {"records": len(recs), "chars": sum(len(r["text"]) for r in recs),
            "works": sorted({r["work"] for r in recs}), "sha256": sha256_of(path)}


def verify_fold(fold_dir: Path, n: int = 5) -> dict[str, Any]:
    """Manifest of one fold plus its leak check (``leaked_ngrams`` must be 0)."""
    vocab: dict[str, int] = {}
    held = distinct(np.concatenate([
        NgramSet(read_jsonl(fold_dir / "test.jsonl"), n, vocab).unique(),
        NgramSet(read_jsonl(fold_dir / "dev.jsonl"), n, vocab).unique()]))
    train = NgramSet(read_jsonl(fold_dir / "train.jsonl"), n, vocab)
    leaked, examples = train.leaks(held)
    splits = {s: split_counts(fold_dir / f"{s}.jsonl") for s in ("train", "dev", "test")}
    return {"fold": fold_dir.name, "n": n, "leaked_ngrams": leaked, "leak_examples": examples,
            "test_works": splits["test"].pop("works"), "dev_works": splits["dev"].pop("works"),
            "train_works": len(splits["train"].pop("works")), "splits": splits}


def verify_doc_clean(dc_dir: Path, documentary: Iterable[Record], passages: Sequence[str],
                     n: int = 8) -> dict[str, Any]:
    """Doc-clean manifest plus 8-gram check against documentary text and blocklist passages, and
    5-gram check of its training data against its dev set."""
    vocab: dict[str, int] = {}
    doc = list(documentary) + [{"text": p} for p in passages]
    doc_grams = NgramSet(doc, n, vocab).unique()
    leaked, examples = 0, list[str]()
    for split in ("train", "dev"):
        k, ex = NgramSet(read_jsonl(dc_dir / f"{split}.jsonl"), n, vocab).leaks(doc_grams)
        leaked, examples = leaked + k, examples + ex
    dev5 = NgramSet(read_jsonl(dc_dir / "dev.jsonl"), 5, vocab).unique()
    dev_leaked, dev_examples = NgramSet(read_jsonl(dc_dir / "train.jsonl"), 5, vocab).leaks(dev5)
    splits = {s: split_counts(dc_dir / f"{s}.jsonl") for s in ("train", "dev")}
    for s in splits.values():
        s["works"] = len(s["works"])
    return {"fold": dc_dir.name, "n": n, "documentary_records": len(doc) - len(passages),
            "leaked_ngrams": leaked, "leak_examples": examples,
            "dev_leaked_5grams": dev_leaked, "dev_leak_examples": dev_examples, "splits": splits}


def verify_all(corpus_dir: Path, documentary: Iterable[Record], passages: Sequence[str],
               manifest_dir: Path) -> dict[str, Any]:
    """Verify every ``fold_*`` and ``doc_clean`` under ``corpus_dir``; writes one manifest per
    fold; raises ContaminationError (after writing) when any check fails."""
    manifest_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    fold_dirs = sorted(corpus_dir.glob("fold_*"), key=lambda p: int(p.name.split("_")[1]))
    if not fold_dirs:
        raise CorpusError(f"no fold_* directories under {corpus_dir}")
    for d in fold_dirs:
        results[d.name] = verify_fold(d)
    if (corpus_dir / "doc_clean").is_dir():
        results["doc_clean"] = verify_doc_clean(corpus_dir / "doc_clean", documentary, passages)
    for name, res in results.items():
        (manifest_dir / f"{name}.json").write_text(json.dumps(res, ensure_ascii=False, indent=1), encoding="utf-8")
    failed = [name for name, r in results.items() if r["leaked_ngrams"] or r.get("dev_leaked_5grams")]
    summary = {"passed": not failed, "failed": failed,
               "leaks": {k: r["leaked_ngrams"] for k, r in results.items()}}
    (manifest_dir / "verify.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    if failed:
        examples = {k: results[k]["leak_examples"][:2] or results[k].get("dev_leak_examples", [])[:2] for k in failed}
        raise ContaminationError(f"contamination found in {', '.join(failed)}: {examples}")
    return summary
