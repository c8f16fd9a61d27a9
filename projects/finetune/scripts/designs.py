"""Which design won: one backbone fine-tuned jointly (A) vs per-task deltas on one frozen base (B).

Reads the metrics JSONs the evaluation commands wrote under METRICS (see projects/finetune/
README.md) and writes METRICS/designs.json + designs.md: per task, the headline metric of each
design (mean over the seeds found), A - B, the target of issue #15 and, where both designs have
paired seeds, the exact sign-flip test (``stoicheia_lab.scoring.stats``). Missing files are
reported as missing, never filled in.

    python scripts/designs.py metrics
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from stoicheia_lab.scoring.stats import sign_flip_test

#: task -> (metric, higher is better, target, {design: (glob under METRICS, key path)})
TASKS: dict[str, tuple[str, bool, float, dict[str, tuple[str, tuple[str, ...]]]]] = {
    "parse LAS, shared AGDT test": ("LAS", True, 75.0, {
        "A": ("parse/joint__fold0__seed*__test.json", ("LAS",)),
        "B": ("parse/frozen__fold0__seed*__test.json", ("LAS",))}),
    "parse UPOS, shared AGDT test": ("UPOS", True, 94.0, {
        "A": ("parse/joint__fold0__seed*__test.json", ("UPOS",)),
        "B": ("parse/frozen__fold0__seed*__test.json", ("UPOS",))}),
    "parse Lemma, shared AGDT test": ("Lemma", True, 90.0, {
        "A": ("parse/joint__fold0__seed*__test.json", ("Lemma",)),
        "B": ("parse/frozen__fold0__seed*__test.json", ("Lemma",))}),
    "parse LAS, UD Perseus test (AGDT annotation)": ("LAS", True, 75.0, {
        "A": ("parse/joint__fold0__seed*__ud_test_agdt.json", ("LAS",)),
        "B": ("parse/frozen__fold0__seed*__ud_test_agdt.json", ("LAS",))}),
    "restoration CER, frozen papyrus gaps": ("CER %", False, float("nan"), {
        "A": ("restore/joint/metrics.json", ("arms", "pretrained", "overall", "cer")),
        "B": ("restore/deltas/metrics.json", ("arms", "finetuned", "overall", "cer"))}),
    "restoration top-20, frozen papyrus gaps": ("top-20 %", True, float("nan"), {
        "A": ("restore/joint/metrics.json", ("arms", "pretrained", "overall", "top20")),
        "B": ("restore/deltas/metrics.json", ("arms", "finetuned", "overall", "top20"))}),
    "accentuation, UD Perseus (diacritics/letter)": ("%", True, 93.0, {
        "A": ("accent/joint.json", ("UD Perseus test", "pretrained", "dia_letter")),
        "B": ("accent/base.json", ("UD Perseus test", "pretrained", "dia_letter"))}),
    "macrons, Norma (published protocol, scanner + metre)": ("accuracy %", True, 88.0, {
        "A": ("meter/macron_scanner_joint_s*.json", ("arms", "backbone", "accuracy")),
        "B": ("meter/macron_scanner_frozen_s*.json", ("arms", "backbone", "accuracy"))}),
    "macrons, Norma (meter_eval.py marks)": ("accuracy %", True, float("nan"), {
        "A": ("meter/joint.json", ("arms", "*", "macron", "accuracy")),
        "B": ("meter/frozen.json", ("arms", "*", "macron", "accuracy"))}),
}


def _get(data: Any, keys: tuple[str, ...]) -> list[float]:
    if not keys:
        return [float(data)]
    head, rest = keys[0], keys[1:]
    if head == "*":
        return [v for item in data.values() if not item.get("random_init") for v in _get(item, rest)]
    return _get(data[head], rest) if isinstance(data, dict) and head in data else []


def _values(metrics: Path, pattern: str, keys: tuple[str, ...]) -> list[float]:
    values: list[float] = []
    for path in sorted(metrics.glob(pattern)):
        values += _get(json.loads(path.read_text()), keys)
    return values


def _scale(task: str, values: list[float]) -> list[float]:
    # accent evaluate.py and meter_eval.py JSONs hold fractions; the others percentages
    return [100 * v for v in values] if task.startswith("accentuation") or "meter_eval" in task else values


def compare(metrics: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for task, (metric, higher, target, designs) in TASKS.items():
        row: dict[str, Any] = {"metric": metric, "higher_is_better": higher,
                               "target": None if np.isnan(target) else target}
        vals = {d: _scale(task, _values(metrics, *spec)) for d, spec in designs.items()}
        for d, v in vals.items():
            row[d] = {"mean": float(np.mean(v)) if v else None, "n": len(v), "source": designs[d][0]}
        if vals["A"] and vals["B"]:
            diff = float(np.mean(vals["A"]) - np.mean(vals["B"]))
            row["A_minus_B"] = diff
            row["winner"] = "A" if (diff > 0) == higher and diff != 0 else ("B" if diff != 0 else "tie")
            if len(vals["A"]) == len(vals["B"]) > 1:
                test = sign_flip_test(np.array(vals["A"]) - np.array(vals["B"]))
                row["sign_flip_p"] = float(test.pvalue)
        out[task] = row
    return out


def markdown(rows: dict[str, Any]) -> str:
    lines = ["| task | metric | A: one backbone | B: per-task deltas | A - B | target | winner |",
             "|---|---|---|---|---|---|---|"]
    for task, r in rows.items():
        def f(x: Any) -> str:
            return "missing" if x is None else f"{x:.2f}"
        lines.append(f"| {task} | {r['metric']} | {f(r['A']['mean'])} (n={r['A']['n']}) | {f(r['B']['mean'])} "
                     f"(n={r['B']['n']}) | {f(r.get('A_minus_B'))} | {r['target'] if r['target'] is not None else '-'} "
                     f"| {r.get('winner', '-')} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("metrics", type=Path)
    args = ap.parse_args(argv)
    rows = compare(args.metrics)
    (args.metrics / "designs.json").write_text(json.dumps(rows, indent=1))
    (args.metrics / "designs.md").write_text(markdown(rows))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
