"""Write the literary, documentary-free pretraining corpus of the shipped default model.

Reads the mirrored literary sources through ``stoicheia_lab.corpus.iter_records``
(no inscriptions or papyri), drops exact duplicate records (the sources share many
editions), and writes ``{"id", "text", "tier", "source", "work"}`` jsonl that
``python -m pretrain train --data`` reads. Usage::

    python scripts/build_corpus.py --mirror $STOICHEIA_ASSET_MIRROR --out corpus/doc_clean.jsonl \
        --sources perseus,glaux,first1k [--max-letters 40000000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from stoicheia_lab.corpus import iter_records
from stoicheia_lab.corpus.sources import LITERARY
from tqdm import tqdm

from stoicheia_spacy.codec import encode_planes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sources", default="perseus,glaux,first1k")
    parser.add_argument("--max-letters", type=int, default=0, help="stop after this many letters (0 = all)")
    args = parser.parse_args()

    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    unknown = [s for s in sources if s not in LITERARY]
    if unknown:
        raise SystemExit(f"not literary sources (doc-clean excludes documentary text): {unknown}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    seen: set[bytes] = set()
    letters = kept = dropped = 0
    tmp = args.out.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out, tqdm(unit=" letters", unit_scale=True) as bar:
        for source in sources:
            for rec in iter_records(source, args.mirror):
                digest = hashlib.blake2b(" ".join(rec["text"].split()).encode(), digest_size=16).digest()
                if digest in seen:
                    dropped += 1
                    continue
                seen.add(digest)
                n = len(encode_planes(rec["text"]))
                if n < 20:
                    continue
                out.write(json.dumps({k: rec[k] for k in ("id", "text", "tier", "source", "work")}, ensure_ascii=False) + "\n")
                kept += 1
                letters += n
                bar.update(n)
                if args.max_letters and letters >= args.max_letters:
                    break
            if args.max_letters and letters >= args.max_letters:
                break
    tmp.replace(args.out)
    print(f"wrote {kept} records, {letters} letters to {args.out} ({dropped} exact duplicates dropped)")


if __name__ == "__main__":
    main()
