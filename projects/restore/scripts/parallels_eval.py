"""Does evidence help the ranking? Parallel counts as a reranking feature of the n-gram arm (issue 40).

    python scripts/parallels_eval.py --index training/parallels --kn training/kn_lm8.npz \\
        --samples samples/fold_3 --out parallels_eval.json

For every frozen gap (known width) the default restorer's n-gram arm (the Kneser-Ney 8-gram,
``kn_restore``, beam 20) proposes its 20 candidates; each candidate's attestation is the number of
documents of the parallels index holding it with ``--context`` letters of the gap's text each side,
exactly and not on an editor's supplement, the gap's own document and its duplicates left out
(``stoicheia_spacy.parallels.search``). The rerank orders candidates by ``score + w * log(1 + count)``;
``w`` is fitted on the dev gaps (best top-1, then CER) and the figures are reported on the test gaps
with and without it: CER / top-1 / top-20, McNemar on top-1, the share of gaps whose gold reading is
attested outside its own document, the share of top-1 candidates that are, and CPU seconds per gap.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from restore_eval import bare, correct_top1, load_split, query, score
from stoicheia_lab.scoring import mcnemar_exact

from stoicheia_spacy.parallels.index import ParallelIndex, letters_of
from stoicheia_spacy.parallels.search import attest, leave_out
from stoicheia_spacy.restore import width_bucket
from stoicheia_spacy.restore.combine import combine
from stoicheia_spacy.restore.kn_beam import kn_restore
from stoicheia_spacy.restore.kneser_ney import load_kn

_LOST = re.compile(r"[-?]")
class _Cand:
    def __init__(self, text: str, score: float) -> None:
        self.text, self.score = text, score


WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def lost_letters(text: str) -> np.ndarray:
    """A sample's letters, its lost (``-``) and hidden (``?``) characters as separators."""
    return letters_of(_LOST.sub("\x00", text))


def kn_weights(config: Path) -> dict[str, list[float]]:
    """The default pipeline's per-bucket combination weights [backbone, fwd, rev, length]."""
    from thinc.api import Config

    cfg = Config().from_disk(config, interpolate=False)
    return {str(k): [float(x) for x in v]
            for k, v in dict(cfg["components"]["stoicheia_restorer"]["settings"]["kn_weights"]).items()}


def features(index: ParallelIndex, lm, records: list[dict], context: int, weights: dict) -> dict:
    """The default restorer's 20 candidates (the 8-gram's two-sided beam, combined with the
    pipeline's bucket weights; known widths), their scores, and the attestation counts of each
    candidate and of the gold, per gap."""
    t = time.process_time()
    queries = [query(r, "known", 2) for r in records]
    beams = kn_restore(lm, queries, beam=20, far=10)
    cands = [[_Cand(text, score) for text, score, _ in
              combine(lm, q, (), b, weights.get(width_bucket((r["L"],)), weights["default"]), far=10)[:20]]
             for q, r, b in zip(queries, records, beams, strict=True)]
    decode_s = time.process_time() - t
    rows, excluded = [], {}
    t = time.process_time()
    for r, cs in zip(records, cands, strict=True):
        s, L = r["start"], r["L"]
        if r["id"] not in excluded:
            # a sample is its whole document, however short: its duplicates are always left out
            excluded[r["id"]] = leave_out(index, lost_letters(r["text"]), r["id"], min_letters=0)
        ex = excluded[r["id"]]
        left, right = lost_letters(r["text"][:s]), lost_letters(r["text"][s + L:])
        counts = [attest(index, left, letters_of(c.text), right, context=context, n=1, exclude=ex).attested
                  for c in cs]
        gold = attest(index, left, letters_of(bare(r["gold"])), right, context=context, n=1, exclude=ex).attested
        rows.append({"texts": [c.text for c in cs], "scores": [float(c.score) for c in cs], "counts": counts,
                     "gold_count": gold, "left_out": len(ex)})
    return {"rows": rows, "decode_cpu_s_per_gap": decode_s / len(records),
            "parallels_cpu_s_per_gap": (time.process_time() - t) / len(records)}


def reranked(rows: list[dict], w: float) -> list[list[str]]:
    out = []
    for row in rows:
        key = [s + w * math.log1p(k) for s, k in zip(row["scores"], row["counts"], strict=True)]
        order = sorted(range(len(key)), key=lambda i: -key[i])
        out.append([row["texts"][i] for i in order])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="parallels_eval.py")
    ap.add_argument("--index", required=True)
    ap.add_argument("--kn", required=True)
    ap.add_argument("--samples", default="samples/fold_3")
    ap.add_argument("--config", default="../../assets/models/grc_stoicheia_doc_clean/config.cfg",
                    help="the default pipeline's config (its restorer's kn_weights)")
    ap.add_argument("--contexts", type=int, nargs="+", default=[4, 5, 6, 8],
                    help="context letters a side to fit on dev (with the weight)")
    ap.add_argument("--dev-limit", type=int, default=None)
    ap.add_argument("--test-limit", type=int, default=None)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0 = time.process_time()
    index, lm, weights = ParallelIndex(a.index), load_kn(a.kn), kn_weights(Path(a.config))
    dev = load_split(Path(a.samples), "dev", None)[: a.dev_limit]
    test = load_split(Path(a.samples), "test", None)[: a.test_limit]
    grid = []
    for context in a.contexts:
        fd = features(index, lm, dev, context, weights)
        for w in WEIGHTS:
            o = score(dev, reranked(fd["rows"], w))["overall"]
            grid.append({"context": context, "w": w, "top1": o["top1"], "cer": o["cer"], "top20": o["top20"],
                         "gold_attested_share": 100 * float(np.mean([r["gold_count"] > 0 for r in fd["rows"]]))})
    best = max(grid, key=lambda g: (round(g["top1"], 6), -g["cer"], -g["w"]))
    ship = bool(best["w"] > 0 and best["top1"] > grid[0]["top1"])
    context = best["context"]
    ft = features(index, lm, test, context, weights)
    base_tops, rr_tops = reranked(ft["rows"], 0.0), reranked(ft["rows"], best["w"])
    base, rr = score(test, base_tops), score(test, rr_tops)
    ok0, ok1 = correct_top1(test, base_tops), correct_top1(test, rr_tops)
    mc = mcnemar_exact(ok1, ok0)
    rows = ft["rows"]

    def top1_attested(tops: list[list[str]]) -> float:
        hits = []
        for row, t in zip(rows, tops, strict=True):
            hits.append(bool(t) and row["counts"][row["texts"].index(t[0])] > 0)
        return 100 * float(np.mean(hits))

    out = {
        "command": "python scripts/parallels_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "index": index.info, "index_bytes": sum(f.stat().st_size for f in Path(a.index).iterdir()),
        "context": context, "arm": "the default restorer's n-gram decoder (kn_lm8 two-sided beam 20, kn_weights of the default config, known widths)",
        "kn_weights": weights,
        "dev": {"gaps": len(dev), "grid": grid, "best_w": best["w"], "best_context": best["context"], "rerank_improves_dev": bool(ship)},
        "test": {"gaps": len(test),
                 "gold_attested_share": 100 * float(np.mean([r["gold_count"] > 0 for r in rows])),
                 "top1_attested_share": top1_attested(base_tops),
                 "top1_attested_share_reranked": top1_attested(rr_tops),
                 "without_rerank": base["overall"], "with_rerank": rr["overall"],
                 "mcnemar_top1": {"rerank_only": mc.a_only, "baseline_only": mc.b_only, "p": mc.pvalue},
                 "decode_cpu_s_per_gap": ft["decode_cpu_s_per_gap"],
                 "parallels_cpu_s_per_gap_20_candidates": ft["parallels_cpu_s_per_gap"]},
        "cpu_s": time.process_time() - cpu0,
    }
    Path(a.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if k != "index"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
