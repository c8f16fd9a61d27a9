"""accent-eval: backbone alone / lexicon alone / both, from cached log-probabilities.

usage: evaluate_lattice.py CACHE_DIR LEXICON.npz OUT.md [--tune] [--tuned TUNED.json]
                           [--baseline LEXICON.json.gz] [--limit N]

CACHE_DIR holds ``SET.npz`` from cache_logp.py (perseus-dev, proiel-dev, perseus-test,
proiel-test).  ``--tune`` searches the lattice weights on the two **dev** sets only
(coordinate ascent on mean(dia_letter, seg_f1)): the lexicon-alone weights first, then the
backbone's weights of the joint arm from there,
and writes them to ``--tuned``; without it the weights are read from ``--tuned`` (or the
package defaults).  The test sets are then scored once with those weights.  Writes OUT.md
(table) and OUT.json (all metrics, the weights, timings).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from stoicheia_lab.accent.evaluate import load_logp_cache, markdown_table, score

from stoicheia_spacy.accent.formlex import FormLexicon
from stoicheia_spacy.accent.lattice import LatticeParams, decode_lattice
from stoicheia_spacy.accent.lexicon import LexiconAccentuator
from stoicheia_spacy.accent.predict import PlaneControl, decode_heads, model_inputs, strip_planes

DEV = ("perseus-dev", "proiel-dev")
TEST = {"UD Perseus test": "perseus-test", "UD PROIEL test": "proiel-test"}
CONTROL = PlaneControl(boundary="predict", diacritics="predict", punctuation="predict", capitals="predict")
#: coordinate-ascent grid per weight
GRID: dict[str, tuple[float, ...]] = {
    "w_lm": (0.3, 0.5, 1.0),
    "w_form": (0.5, 1.0, 2.0),
    "oov_word": (-16.0, -12.0, -8.0),
    "oov_letter": (-3.0, -2.0, -1.0),
    "w_dia": (0.1, 0.2, 0.3, 0.5, 1.0),
    "w_bnd": (0.0, 0.1, 0.25),
    "host": (-2.0, -1.0, 0.0),
    "alpha_form": (0.1, 0.5, 2.0),
}
#: the lattice with no lexicon: out-of-lexicon arcs only, no penalties (backbone scores alone)
BACKBONE_LATTICE = LatticeParams(w_bnd=1.0, w_dia=1.0, oov_word=0.0, oov_letter=0.0, seg_dia=True)
#: tuned for the lexicon alone first; the joint decoder starts there and tunes the backbone's weights
LEX_ONLY = ("w_lm", "w_form", "oov_word", "oov_letter")
JOINT = ("w_dia", "w_bnd", "host", "alpha_form")


def backbone_alone(gold, logp):  # type: ignore[no-untyped-def]
    preds = []
    for g, lp in zip(gold, logp, strict=True):
        bare = strip_planes(g)
        inputs, fixed = model_inputs(bare, CONTROL)
        preds.append(decode_heads(bare, inputs, fixed, lp, CONTROL, lexicon=None).planes)
    return preds


def lattice(gold, logp, lex, params, use_backbone=True):  # type: ignore[no-untyped-def]
    return [decode_lattice(g.letters, lp if use_backbone else None, lex, params).planes
            for g, lp in zip(gold, logp, strict=True)]


def objective(m: dict[str, float]) -> float:
    return (m["dia_letter"] + m["seg_f1"]) / 2


def tune(dev, lex, start: LatticeParams, names, use_backbone: bool, log: list,  # type: ignore[no-untyped-def]
         rounds: int = 2) -> LatticeParams:
    def run(p: LatticeParams) -> float:
        ms = [score(g, lattice(g, lp, lex, p, use_backbone)) for g, lp in dev]
        val = sum(objective(m) for m in ms) / len(ms)
        log.append({"params": p.to_dict(), "objective": val, "backbone": use_backbone})
        print(f"  {val:.4f} {p}", flush=True)
        return val

    best, best_val = start, run(start)
    for _round in range(rounds):
        improved = False
        for name in names:
            for v in GRID[name]:
                if getattr(best, name) == v:
                    continue
                cand = replace(best, **{name: v})
                val = run(cand)
                if val > best_val + 1e-5:
                    best, best_val, improved = cand, val, True
        if not improved:
            break
    return best


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("lexicon")
    ap.add_argument("out")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--tuned", default=None)
    ap.add_argument("--baseline", default=None, help="lexicon+DP baseline (build_lexicon.py output)")
    ap.add_argument("--limit", type=int, default=None, help="sentences per dev set for tuning")
    ap.add_argument("--dev", default=",".join(DEV), help="dev sets to tune on")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tune-only", action="store_true", help="stop after writing --tuned")
    ap.add_argument("--sets", default="perseus-test,proiel-test", help="cached sets to score")
    a = ap.parse_args(argv)
    cache = Path(a.cache)
    lex = FormLexicon.from_disk(a.lexicon)
    tuned_path = Path(a.tuned) if a.tuned else None
    log: list[dict] = []
    if a.tune:
        dev = []
        for name in a.dev.split(","):
            g, lp = load_logp_cache(cache / f"{name}.npz")
            dev.append((g[: a.limit], lp[: a.limit]))
        t0 = time.time()
        print("tuning the lexicon-alone decoder on dev", flush=True)
        lex_only = tune(dev, lex, LatticeParams(w_bnd=0.0, w_dia=0.0, oov_word=-12.0, oov_letter=-2.0),
                        LEX_ONLY, False, log, a.rounds)
        print("tuning the joint decoder on dev (from the lexicon-alone weights)", flush=True)
        both = tune(dev, lex, replace(lex_only, w_dia=0.3), JOINT, True, log, a.rounds)
        tuned = {"both": both.to_dict(), "lexicon": lex_only.to_dict(), "tuning_seconds": time.time() - t0,
                 "dev_sets": a.dev.split(","), "rounds": a.rounds, "dev_limit": a.limit, "log": log}
        if tuned_path:
            tuned_path.parent.mkdir(parents=True, exist_ok=True)
            tuned_path.write_text(json.dumps(tuned, indent=1), encoding="utf-8")
        if a.tune_only:
            return 0
    elif tuned_path and tuned_path.exists():
        tuned = json.loads(tuned_path.read_text(encoding="utf-8"))
    else:
        tuned = {"both": LatticeParams().to_dict(), "lexicon": LatticeParams(w_bnd=0.0, w_dia=0.0).to_dict()}
    p_both, p_lex = LatticeParams(**tuned["both"]), LatticeParams(**tuned["lexicon"])
    baseline = LexiconAccentuator.from_disk(a.baseline) if a.baseline else None
    results: dict[str, dict[str, dict[str, float]]] = {}
    timing: dict[str, dict[str, float]] = {}
    sets = {**TEST, "UD Perseus dev": "perseus-dev", "UD PROIEL dev": "proiel-dev"}
    for data, name in sets.items():
        if name not in a.sets.split(",") or not (cache / f"{name}.npz").exists():
            print(f"{data}: no cache, skipped", flush=True)
            continue
        gold, logp = load_logp_cache(cache / f"{name}.npz")
        arms: dict[str, dict[str, float]] = {}
        timing[data] = {}
        runs = [("backbone alone", None), ("backbone alone, lattice", BACKBONE_LATTICE), ("lexicon alone", p_lex),
                ("backbone + lexicon", p_both)]
        if baseline is not None:
            runs.insert(1, ("lexicon+DP baseline", None))
        for arm, params in runs:
            t = time.time()
            if arm == "backbone alone":
                preds = backbone_alone(gold, logp)
            elif arm == "lexicon+DP baseline":
                assert baseline is not None
                preds = [baseline.predict(strip_planes(g)) for g in gold]
            elif arm == "backbone alone, lattice":
                preds = lattice(gold, logp, None, params, True)
            else:
                preds = lattice(gold, logp, lex, params, arm != "lexicon alone")
            arms[arm] = score(gold, preds)
            timing[data][arm] = time.time() - t
        results[data] = arms
        print(data, json.dumps({k: [round(v["dia_letter"], 4), round(v["seg_f1"], 4)] for k, v in arms.items()}),
              flush=True)
    table = markdown_table(results)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(
        {"results": results, "params": {"both": tuned["both"], "lexicon": tuned["lexicon"]},
         "decode_seconds": timing, "lexicon": {"file": Path(a.lexicon).name, "forms": len(lex),
                                                "bare_forms": lex.n_bare, "sources": json.loads(lex.sources or "{}")}},
        indent=1, ensure_ascii=False), encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
