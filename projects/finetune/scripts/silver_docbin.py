"""Scansion silver lines -> spaCy DocBins whose Docs carry ``doc._.scan_gold`` (the scanner's gold).

Input: the training bundle's ``scansion/silver.jsonl.xz`` (``{"text", "scan", "macron", "meter"}``
per line, labels per codec letter, as ``stoicheia_lab.scan.silver.build_silver`` writes them).
Output: ``OUT/train.spacy`` and ``OUT/dev.spacy`` (every ``--dev-every``-th line to dev),
with user data stored so ``spacy.Corpus.v1`` gives the scanner its labels.

    python scripts/silver_docbin.py .bundle/scansion/silver.jsonl.xz corpus/scansion [--limit N]
"""

from __future__ import annotations

import argparse
import json
import lzma
from collections.abc import Iterable, Sequence
from pathlib import Path

import spacy
from spacy.tokens import DocBin

import stoicheia_spacy.scan.scanner  # noqa: F401  (registers doc._.scan_gold)


def read_rows(path: Path, limit: int | None = None) -> list[dict]:
    opener = lzma.open if path.suffix == ".xz" else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
                if limit is not None and len(rows) >= limit:
                    break
    return rows


def write_docbins(rows: Iterable[dict], out: Path, dev_every: int = 20) -> dict[str, int]:
    """Write ``out/{train,dev}.spacy``; returns the line counts."""
    nlp = spacy.blank("grc")
    bins = {"train": DocBin(store_user_data=True), "dev": DocBin(store_user_data=True)}
    for i, row in enumerate(rows):
        doc = nlp.make_doc(row["text"])
        doc._.scan_gold = {"macron": [int(x) for x in row["macron"]], "scan": [int(x) for x in row["scan"]]}
        bins["dev" if dev_every and i % dev_every == dev_every - 1 else "train"].add(doc)
    out.mkdir(parents=True, exist_ok=True)
    for split, db in bins.items():
        db.to_disk(out / f"{split}.spacy")
    return {split: len(db) for split, db in bins.items()}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("silver", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--dev-every", type=int, default=20)
    args = p.parse_args(argv)
    print(json.dumps(write_docbins(read_rows(args.silver, args.limit), args.out, args.dev_every)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
