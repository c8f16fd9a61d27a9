"""Paper-shaped table and plot of the parse-eval arms over (fold, seed) pairs.

Reads ``METRICS/{arm}__fold{k}__seed{s}__{split}.json`` (written by evaluate.py), prints
and writes a markdown table (mean ± sd per metric and arm) with the pretrained arm's
paired differences against every other arm: exact sign-flip permutation p, paired t p
and Cohen's d_z over the (fold, seed) pairs (:mod:`stoicheia_spacy.scoring.stats`).

    python scripts/compare.py METRICS OUT.md [--split test] [--reference pretrained]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

METRICS = ("UPOS", "XPOS", "UFeats", "Lemma", "UAS", "LAS")
NAME = re.compile(r"(?P<arm>.+)__fold(?P<fold>\d+)__seed(?P<seed>\d+)__(?P<split>.+)\.json$")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("metrics", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--split", default="test")
    ap.add_argument("--reference", default="pretrained")
    args = ap.parse_args(argv)
    from stoicheia_spacy.scoring.stats import paired_t_test, sign_flip_test

    runs: dict[str, dict[tuple[int, int], dict]] = defaultdict(dict)
    for path in sorted(args.metrics.glob("*.json")):
        m = NAME.match(path.name)
        if m and m["split"] == args.split:
            runs[m["arm"]][(int(m["fold"]), int(m["seed"]))] = json.loads(path.read_text())
    if not runs:
        print(f"no metrics for split {args.split!r} under {args.metrics}")
        return 1
    lines = [f"## parse-eval ({args.split})", "", "| arm | n | " + " | ".join(METRICS) + " |",
             "|---|---|" + "---|" * len(METRICS)]
    for arm, by_key in sorted(runs.items()):
        cells = []
        for metric in METRICS:
            v = np.array([r[metric] for r in by_key.values()], dtype=float)
            cells.append(f"{v.mean():.2f} ± {v.std(ddof=1) if len(v) > 1 else 0.0:.2f}")
        lines.append(f"| {arm} | {len(by_key)} | " + " | ".join(cells) + " |")
    ref = runs.get(args.reference)
    if ref:
        lines += ["", f"Paired differences {args.reference} − arm over (fold, seed):", "",
                  "| arm | metric | Δ | sign-flip p (exact) | paired t p | d_z |", "|---|---|---|---|---|---|"]
        for arm, by_key in sorted(runs.items()):
            keys = sorted(set(ref) & set(by_key))
            if arm == args.reference or not keys:
                continue
            for metric in ("LAS", "UAS", "XPOS", "Lemma"):
                a = np.array([ref[k][metric] for k in keys])
                b = np.array([by_key[k][metric] for k in keys])
                sf = sign_flip_test(a, b)
                if len(keys) >= 2 and np.std(a - b) > 0:
                    t = paired_t_test(a, b)
                    t_p, dz = f"{t.pvalue:.3g}", f"{t.cohens_dz:.2f}"
                else:
                    t_p, dz = "n/a", "n/a"
                lines.append(f"| {arm} | {metric} | {sf.mean_difference:+.2f} | {sf.pvalue:.3g} | {t_p} | {dz} |")
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        arms = sorted(runs)
        fig, ax = plt.subplots(figsize=(8, 3.5))
        width = 0.8 / len(arms)
        for i, arm in enumerate(arms):
            means = [np.mean([r[m] for r in runs[arm].values()]) for m in METRICS]
            ax.bar(np.arange(len(METRICS)) + i * width, means, width, label=arm)
        ax.set_xticks(np.arange(len(METRICS)) + 0.4 - width / 2, METRICS)
        ax.set_ylabel("accuracy (%)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.out.with_suffix(".png"), dpi=120)
    except ImportError:
        print("matplotlib missing: no plot")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
