"""``python -m stoicheia_spacy.provenance build|zones|publish``: build the membership indexes.

    build --corpus JSONL [--corpus JSONL ...] --out FILE [--name MODEL] [--dev-fraction F] [--fp-rate P] [--max-mb MB]
    zones --corpus-dir projects/corpus/corpus --out FILE [--fp-rate P] [--max-mb MB]
    publish --manifests projects/corpus/corpus/manifests --out DIR   (our manifests as per-fold TSV.gz)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..assets import DEFAULT_MODEL
from .index import build_model_index, build_zone_index
from .manifests import write_published


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_spacy.provenance", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="model index: word 5-grams of a training corpus")
    build.add_argument("--corpus", type=Path, action="append", required=True)
    build.add_argument("--out", type=Path, required=True)
    build.add_argument("--name", default=DEFAULT_MODEL)
    build.add_argument("--dev-fraction", type=float, default=0.0, help="leave out the trainer's dev records (the trainer's dev rule, as pretrain.data.is_dev)")
    zones = sub.add_parser("zones", help="zone index of a projects/corpus output folder")
    zones.add_argument("--corpus-dir", type=Path, required=True)
    zones.add_argument("--out", type=Path, required=True)
    for p in (build, zones):
        p.add_argument("--fp-rate", type=float, default=0.01)
        p.add_argument("--max-mb", type=float, default=None, help="cap the index size (the rate rises instead)")
    publish = sub.add_parser("publish", help="our JSON manifests as per-fold gzipped TSVs of test works")
    publish.add_argument("--manifests", type=Path, required=True)
    publish.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "publish":
        print(json.dumps([str(p) for p in write_published(args.manifests, args.out)]))
        return 0
    max_bytes = int(args.max_mb * 1e6) if args.max_mb else None
    if args.command == "build":
        meta = build_model_index(args.corpus, args.out, name=args.name, dev_fraction=args.dev_fraction,
                                 fp_rate=args.fp_rate, max_bytes=max_bytes)
    else:
        meta = build_zone_index(args.corpus_dir, args.out, fp_rate=args.fp_rate, max_bytes=max_bytes)
    print(json.dumps(meta, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
