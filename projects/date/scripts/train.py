"""Fit the shipped ``stoicheia_dater`` weights on all of PaDoC and plot them.

Ridge over the pooled pretrained states (strength by leave-one-out, ``RidgeCV``), the
residual sample from 5-fold out-of-fold predictions (the dater's interval and histogram).
Writes the component folder (``to_disk``: ``cfg`` + ``model``, a small npz) and a PNG: the
out-of-fold estimates against the true dates, and one papyrus's date distribution.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from evaluate import ALPHAS, LEVEL, features, make_model, years
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.preprocessing import StandardScaler

from stoicheia_spacy.dating import BIN_YEARS, DEFAULT_LAYERS, DateModel
from stoicheia_spacy.pipeline.dater import StoicheiaDater


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("padoc", type=Path)
    parser.add_argument("cache", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--plot", type=Path, required=True)
    parser.add_argument("--ship", type=Path, help="Also write cfg + model here (the shipped weights beside the default model)")
    args = parser.parse_args()
    frame = pd.read_csv(args.padoc)
    x, y = np.asarray(features("pretrained", frame, args.cache)), years(frame)
    alpha = float(RidgeCV(alphas=ALPHAS).fit(StandardScaler().fit_transform(x), y).alpha_)
    oof = cross_val_predict(make_model("pretrained"), x, y, cv=KFold(5, shuffle=True, random_state=0))
    model = DateModel.fit(x, y, alpha, y - oof)
    dater = StoicheiaDater(layers=DEFAULT_LAYERS, level=LEVEL, model=model)
    dater.to_disk(args.out)
    if args.ship is not None:
        dater.to_disk(args.ship)
    (args.out / "training.json").write_text(json.dumps(
        {"command": "spacy project run date-eval (train)", "alpha": alpha, "n_documents": int(len(y)),
         "oof_mae": float(np.mean(np.abs(y - oof)))}, indent=2) + "\n")

    tail = (1 - LEVEL) / 2
    r_low, r_high = np.quantile(y - oof, [tail, 1 - tail])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.errorbar(y, oof, yerr=[oof - (oof + r_low), (oof + r_high) - oof], fmt=".", alpha=0.4,
                  elinewidth=0.5, label=f"estimate, {LEVEL:.0%} interval")
    left.plot([y.min(), y.max()], [y.min(), y.max()], "k--", lw=1)
    left.set(xlabel="PaDoC date (year)", ylabel="out-of-fold estimate (year)",
             title="PaDoC, 5-fold out-of-fold (pretrained states)")
    left.legend(loc="upper left", fontsize=8)
    estimate = model.estimate(x[0], LEVEL)
    starts, probs = zip(*estimate.histogram, strict=True)
    right.bar(starts, probs, width=BIN_YEARS, align="edge", alpha=0.7)
    right.axvline(estimate.mean, color="k", label=f"mean {estimate.mean:.0f}")
    right.axvspan(estimate.low, estimate.high, color="orange", alpha=0.2, label=f"{LEVEL:.0%} interval")
    right.axvline(y[0], color="r", ls="--", label=f"true {y[0]:.0f}")
    right.set(xlabel="year", ylabel="probability", title=f"doc._.date of TM {int(frame['tm'][0])}")
    right.legend(fontsize=8)
    fig.tight_layout()
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=80)
    print(f"wrote {args.out} and {args.plot} (alpha {alpha:g}, out-of-fold MAE {np.mean(np.abs(y - oof)):.1f})")


if __name__ == "__main__":
    main()
