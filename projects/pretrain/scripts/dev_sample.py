"""Write the held-out sample that ``python -m stoicheia_lab.bench quality`` scores.

Takes records of the pretraining corpus that the trainer held out as dev (the same
blake2b hash of the record id, ``pretrain.data.is_dev``), up to ``--max-letters``.
Usage: python scripts/dev_sample.py --corpus corpus/doc_clean.jsonl --out DIR/dev_sample.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pretrain.data import is_dev
from stoicheia_spacy.codec import encode_planes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--fraction", type=float, default=0.005, help="data.dev_fraction of the run")
    parser.add_argument("--max-letters", type=int, default=60_000)
    args = parser.parse_args()
    letters = 0
    with args.corpus.open(encoding="utf-8") as src, args.out.open("w", encoding="utf-8") as out:
        for line in src:
            rec = json.loads(line)
            if not is_dev(rec["id"], args.fraction):
                continue
            # keep a prefix of each held-out record so several works are represented
            text = rec["text"][:20_000]
            n = len(encode_planes(text))
            out.write(json.dumps({"id": rec["id"], "text": text, "source": rec.get("source")}, ensure_ascii=False) + "\n")
            letters += n
            if letters >= args.max_letters:
                break
    print(f"wrote {letters} held-out letters to {args.out}")


if __name__ == "__main__":
    main()
