"""Paper-shaped table and plot of the parse-eval arms over (fold, seed) pairs.

Reads ``METRICS/{arm}__fold{k}__seed{s}__{split}.json`` (written by evaluate.py) and writes
OUT.md: one row per arm with mean ± sd of UPOS, XPOS, UFeats, Lemma, UAS and LAS over
its (fold, seed) runs, then the reference arm's paired differences against every other
arm on the (fold, seed) pairs both have: exact sign-flip permutation p, paired t p and
Cohen's d_z (:mod:`stoicheia_lab.scoring.stats`). OUT.png plots every metric per arm
(mean ± sd, and each (fold, seed) run as a point).

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
#: Row order of the known arms (others follow alphabetically).
ARM_ORDER = ("pretrained", "pretrained_frozen", "random", "transformer", "cnn")

Runs = dict[str, dict[tuple[int, int], dict]]


def read_runs(metrics: Path, split: str) -> Runs:
    """arm -> (fold, seed) -> scores, for the metric files of ``split``."""
    runs: Runs = defaultdict(dict)
    for path in sorted(metrics.glob("*.json")):
        m = NAME.match(path.name)
        if m and m["split"] == split:
            runs[m["arm"]][(int(m["fold"]), int(m["seed"]))] = json.loads(path.read_text())
    return dict(runs)


def ordered_arms(runs: Runs) -> list[str]:
    known = [a for a in ARM_ORDER if a in runs]
    return known + sorted(a for a in runs if a not in ARM_ORDER)


def values(by_key: dict[tuple[int, int], dict], metric: str) -> np.ndarray:
    return np.array([by_key[k][metric] for k in sorted(by_key)], dtype=float)


def markdown(runs: Runs, split: str, reference: str) -> str:
    """The arms table and, when the reference arm is present, the paired tests."""
    from stoicheia_lab.scoring.stats import paired_t_test, sign_flip_test

    arms = ordered_arms(runs)
    lines = [f"## parse-eval ({split}): mean ± sd over (fold, seed) runs", "",
             "| arm | n | " + " | ".join(METRICS) + " |", "|---|---|" + "---|" * len(METRICS)]
    for arm in arms:
        cells = []
        for metric in METRICS:
            v = values(runs[arm], metric)
            cells.append(f"{v.mean():.2f} ± {v.std(ddof=1) if len(v) > 1 else 0.0:.2f}")
        lines.append(f"| {arm} | {len(runs[arm])} | " + " | ".join(cells) + " |")
    ref = runs.get(reference)
    if not ref:
        return "\n".join(lines + ["", f"(no {reference!r} arm: no paired tests)"]) + "\n"
    lines += ["", f"Paired differences {reference} − arm over the shared (fold, seed) pairs "
              "(sign-flip: exact two-sided permutation test; its smallest possible p is 2/2^n):", "",
              "| arm | metric | n | Δ | sign-flip p | paired t p | d_z |", "|---|---|---|---|---|---|---|"]
    for arm in arms:
        keys = sorted(set(ref) & set(runs[arm]))
        if arm == reference or not keys:
            continue
        for metric in METRICS:
            a = np.array([ref[k][metric] for k in keys], dtype=float)
            b = np.array([runs[arm][k][metric] for k in keys], dtype=float)
            sf = sign_flip_test(a, b)
            if len(keys) >= 2 and np.std(a - b) > 0:
                t = paired_t_test(a, b)
                t_p, dz = f"{t.pvalue:.3g}", f"{t.cohens_dz:.2f}"
            else:
                t_p, dz = "n/a", "n/a"
            lines.append(f"| {arm} | {metric} | {len(keys)} | {sf.mean_difference:+.2f} | {sf.pvalue:.3g} "
                         f"| {t_p} | {dz} |")
    return "\n".join(lines) + "\n"


def plot(runs: Runs, split: str, out: Path) -> Path:
    """One panel per metric: mean ± sd per arm and every (fold, seed) run as a point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = ordered_arms(runs)
    fig, axes = plt.subplots(1, len(METRICS), figsize=(2.2 * len(METRICS), 3.2), sharey=True)
    x = np.arange(len(arms))
    for ax, metric in zip(axes, METRICS, strict=True):
        for i, arm in enumerate(arms):
            v = values(runs[arm], metric)
            sd = v.std(ddof=1) if len(v) > 1 else 0.0
            ax.errorbar(i, v.mean(), yerr=sd, fmt="_", markersize=14, capsize=3, color=f"C{i}")
            jitter = np.linspace(-0.15, 0.15, len(v)) if len(v) > 1 else np.zeros(1)
            ax.scatter(i + jitter, v, s=12, color=f"C{i}", alpha=0.7, zorder=3)
        ax.set_title(metric, fontsize=9)
        ax.set_xticks(x, arms, rotation=45, ha="right", fontsize=7)
        ax.set_xlim(-0.6, len(arms) - 0.4)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(f"{split} accuracy (%)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("metrics", type=Path)
    ap.add_argument("out", type=Path, help="markdown table; the plot goes beside it as .png")
    ap.add_argument("--split", default="test")
    ap.add_argument("--reference", default="pretrained")
    args = ap.parse_args(argv)
    runs = read_runs(args.metrics, args.split)
    if not runs:
        print(f"no metrics for split {args.split!r} under {args.metrics}")
        return 1
    text = markdown(runs, args.split, args.reference)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    print(f"plot: {plot(runs, args.split, args.out.with_suffix('.png'))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
