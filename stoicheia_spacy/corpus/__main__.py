"""``python -m stoicheia_spacy.corpus STEP ...``: fetch, normalize, tiers, folds, doc-clean,
verify, report (see ``pipeline`` for the folder layout)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import StoicheiaError


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stoicheia_spacy.corpus", description=__doc__)
    sub = p.add_subparsers(dest="step", required=True)
    f = sub.add_parser("fetch", help="copy (from $STOICHEIA_ASSET_MIRROR) or download the assets")
    f.add_argument("--dest", type=Path, required=True)
    f.add_argument("--mirror", type=Path, default=None)
    f.add_argument("--sources", nargs="*", default=None)
    n = sub.add_parser("normalize", help="read sources, write normalized records and statistics")
    n.add_argument("--assets", type=Path, required=True)
    n.add_argument("--corpus", type=Path, required=True)
    n.add_argument("--limit", type=int, default=0, help="records per source (0 = all)")
    t = sub.add_parser("tiers", help="cleanliness score -> pristine (gold) / repaired (silver)")
    t.add_argument("--corpus", type=Path, required=True)
    t.add_argument("--lexicon", type=Path, default=None)
    t.add_argument("--threshold", type=float, default=None)
    fo = sub.add_parser("folds", help="works clustering, zones, ten decontaminated folds")
    fo.add_argument("--corpus", type=Path, required=True)
    for name in ("doc-clean", "verify"):
        s = sub.add_parser(name)
        s.add_argument("--corpus", type=Path, required=True)
        s.add_argument("--blocklist", type=Path, default=None)
    r = sub.add_parser("report", help="markdown report + zone-size plot")
    r.add_argument("--corpus", type=Path, required=True)
    r.add_argument("--out", type=Path, default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from . import pipeline
    from .fetch import fetch_all
    from .report import write_report
    from .tiers import PRISTINE_THRESHOLD

    try:
        if args.step == "fetch":
            result: object = [str(p) for p in fetch_all(args.dest, args.sources, args.mirror)]
        elif args.step == "normalize":
            result = pipeline.step_normalize(args.assets, args.corpus, args.limit or None)
        elif args.step == "tiers":
            result = pipeline.step_tiers(args.corpus, args.lexicon,
                                         PRISTINE_THRESHOLD if args.threshold is None else args.threshold)
        elif args.step == "folds":
            result = pipeline.step_folds(args.corpus)
        elif args.step == "doc-clean":
            result = pipeline.step_doc_clean(args.corpus, args.blocklist)
        elif args.step == "verify":
            result = pipeline.step_verify(args.corpus, args.blocklist)
        else:
            result = str(write_report(args.corpus, args.out or args.corpus / "report"))
    except StoicheiaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, ensure_ascii=False, indent=1)[:4000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
