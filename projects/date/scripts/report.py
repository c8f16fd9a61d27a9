"""Merge the per-arm metrics into metrics/date_eval.json and render RESULTS.md from it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAMES = {"tfidf": "char 1-4-gram TF-IDF + ridge", "pretrained": "ridge on pooled states, shipped backbone",
         "random-init": "ridge on pooled states, random-init backbone"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arms", type=Path, nargs="*", help="Per-arm files of evaluate.py to merge into METRICS")
    args = parser.parse_args()
    if args.arms:
        parts = [json.loads(path.read_text()) for path in args.arms if path.is_file()]
        merged = {**parts[0], "arms": {arm: r for part in parts for arm, r in part["arms"].items()}}
        args.metrics.write_text(json.dumps(merged, indent=2) + "\n")
    m = json.loads(args.metrics.read_text())
    level = f"{m['level']:.0%}"
    lines = [
        "# Dating documentary papyri (PaDoC)", "",
        f"Measured by `{m['command']}` (workflow `all` of `projects/date`: `embed`, `evaluate`, `train`);",
        "every figure below is read from `metrics/date_eval.json` by `scripts/report.py`.", "",
        f"Protocol: {m['n_documents']} PaDoC papyri, {m['protocol']}; dates in years (PaDoC's quarter",
        "centuries x 100). The ridge strength is chosen inside each training part (leave-one-out), the",
        f"{level} interval is the prediction plus the 5th / 95th percentiles of 5-fold out-of-fold residuals",
        f"of the training part. Backbone arms pool the mean over letters of hidden states {m['layers']} of the",
        "first 800 characters of each text (`embed.py --max-chars`; the dater itself reads the whole Doc)",
        "(what `stoicheia_dater` reads from `doc._.stoicheia`).", "",
        f"| arm | MAE (years) | median AE | {level} coverage | mean interval width | MAE sd over repeats |",
        "|---|---|---|---|---|---|",
    ]
    for arm, r in m["arms"].items():
        lines.append(f"| {NAMES.get(arm, arm)} | {r['mae']:.1f} | {r['median_ae']:.1f} | {r['coverage']:.1%} | "
                     f"{r['width']:.0f} | {r['mae_sd_over_repeats']:.1f} |")
    missing = [NAMES[arm] for arm in NAMES if arm not in m["arms"]]
    pub = m["published"]
    lines += [f"| PaDoC published text regression ({pub['protocol']}) | {pub['padoc_text_regression_mae']:.0f} "
              "| – | – | – | – |", ""]
    if missing:
        lines += [f"Not measured in this run (out of CPU time on the shared machine): {'; '.join(missing)}.", ""]
    wild = {arm: r["in_the_wild"] for arm, r in m["arms"].items() if "in_the_wild" in r}
    if wild:
        n = next(iter(wild.values()))["n"]
        lines += [f"In-the-wild papyri (n = {n}, only an upper date limit known; each arm fitted on all of PaDoC):", "",
                  "| arm | estimate not after the limit | interval low end not after the limit | mean years before the limit |",
                  "|---|---|---|---|"]
        for arm, w in wild.items():
            lines.append(f"| {NAMES.get(arm, arm)} | {w['estimate_not_after_limit']:.1%} | "
                         f"{w['interval_low_not_after_limit']:.1%} | {w['mean_years_before_limit']:.0f} |")
        lines.append("")
    lines += ["![PaDoC out-of-fold estimates and one date distribution](metrics/date_distribution.png)", "",
              "Caveats: PaDoC's 54 years is leave-one-out with its own preprocessing, ours is repeated 5-fold",
              "(less training data per fold), so the comparison is indicative. Decontamination: the shipped",
              "backbone is doc-clean (literary Greek only, no papyri, no word 8-gram shared with any papyrus,",
              "`projects/corpus`, PaDoC and the in-the-wild set included): no test papyrus was read in pretraining.",
              "The `stoicheia_dater` weights are the pretrained arm fitted on all 389 papyri (`train`).", ""]
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
