"""The documentary-clean screen (``doc-clean`` step).

Documentary records (DDbDP papyri, PaDoc, PapyGreek; inscriptions when a source is added) never
enter the doc-clean corpus. A literary sentence is excised when it collides with documentary
text or a blocklist passage by: exact sentence or bag of words (sentences of >= 5 words),
any shared word 8-gram, or chunk-level MinHash-LSH near-duplication of a documentary record.
Blocklist passages shorter than 8 words match as contiguous word sequences of their own length.

Blocklist file (UTF-8, one entry per line, ``#`` comments): ``id:<record id>`` or
``work:<work key>`` drop whole records; any other line is a Greek passage to screen out.

The doc-clean corpus develops on zone ``DEV_ZONE`` (its training data are decontaminated against
it like a fold's held-out zones) and trains on the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy.errors import CorpusError
from stoicheia_spacy.textnorm import word_keys

from .flat import FlatCorpus
from .folds import collision_masks, excise, near_duplicate_mask, write_jsonl
from .readers import Record
from .works import ChunkIndex

DOC_BIT = 1 << 10
BLOCK_BIT = 1 << 11
DEV_ZONE = 0
DOC_NGRAM = 8
DOC_MIN_WORDS = 5


@dataclass
class Blocklist:
    """Parsed blocklist: whole-record ids, work keys and passages."""

    ids: set[str] = field(default_factory=set)
    works: set[str] = field(default_factory=set)
    passages: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path | str | None) -> Blocklist:
        out = cls()
        if path is None:
            return out
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CorpusError(f"cannot read blocklist {path}: {exc}") from exc
        for n, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("id:"):
                out.ids.add(line[3:].strip())
            elif line.startswith("work:"):
                out.works.add(line[5:].strip())
            elif word_keys(line):
                out.passages.append(line)
            else:
                raise CorpusError(f"blocklist line {n} has no Greek words and no id:/work: prefix: {raw!r}")
        return out

    def blocks(self, rec: Record) -> bool:
        return rec["id"] in self.ids or rec["work"] in self.works


def doc_clean(literary: Sequence[Record], record_zone: np.ndarray, documentary: Sequence[Record],
              blocklist: Blocklist, out_dir: Path, *, chunk_words: int = 200,
              doc_near_threshold: float = 0.5) -> dict[str, Any]:
    """Write ``out_dir/{train,dev}.jsonl`` of the doc-clean corpus; returns screen statistics."""
    if len(record_zone) != len(literary):
        raise CorpusError("record_zone must give one zone per literary record")
    passages = [{"id": f"blocklist:{i}", "text": p, "source": "blocklist", "work": "blocklist", "tier": "gold"}
                for i, p in enumerate(blocklist.passages)]
    records = [*literary, *documentary, *passages]
    bits = np.concatenate([np.int64(1) << record_zone.astype(np.int64),
                           np.full(len(documentary), DOC_BIT, np.int64),
                           np.full(len(passages), BLOCK_BIT, np.int64)])
    flat = FlatCorpus.build(records, bits)
    index = ChunkIndex.build(flat, chunk_words)
    screen = DOC_BIT | BLOCK_BIT
    dev_bit = 1 << DEV_ZONE
    exact_d, bag_d = flat.sentence_key_masks(DOC_MIN_WORDS)
    masks = {
        "doc_ngram": flat.ngram_sentence_mask(DOC_NGRAM) & screen,
        "doc_exact": exact_d & screen,
        "doc_bag": bag_d & screen,
        "doc_near": near_duplicate_mask(flat, index, doc_near_threshold) & DOC_BIT,
    }
    short = sorted({len(word_keys(p)) for p in blocklist.passages if len(word_keys(p)) < DOC_NGRAM})
    block_short = np.zeros(len(flat.sent_record), dtype=np.int64)
    for n in short:
        block_short |= flat.ngram_sentence_mask(n) & BLOCK_BIT
    masks["blocklist_short"] = block_short
    dev_masks = {f"dev_{k}": m & dev_bit for k, m in collision_masks(flat, index).items()}
    lit = np.arange(len(literary))
    keep_rec = np.array([not blocklist.blocks(r) for r in literary], dtype=bool)
    dev_recs = lit[keep_rec & (record_zone == DEV_ZONE)].tolist()
    train_recs = lit[keep_rec & (record_zone != DEV_ZONE)].tolist()
    dev, dev_counts = excise(flat, masks, dev_recs, -1)
    train, train_counts = excise(flat, {**masks, **dev_masks}, train_recs, -1)
    return {
        "documentary_records": len(documentary), "blocklist_passages": len(passages),
        "blocklist_records_dropped": int((~keep_rec).sum()),
        "train": {**train_counts, "records": write_jsonl(out_dir / "train.jsonl", train)},
        "dev": {**dev_counts, "records": write_jsonl(out_dir / "dev.jsonl", dev)},
    }
