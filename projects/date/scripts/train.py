"""Fit the shipped ``stoicheia_dater`` weights on all of PaDoC and plot them.

The word n-gram kernel (``kernel.fit_text_model``: the best arm of ``evaluate.py``, fitted the
same way, its settings chosen by leave-one-out over all 389 papyri), with the leave-one-out
residuals as the dater's interval and histogram. With ``--states`` (``embed.py``'s cache of the
shared forward's pooled states) it is offered those too (the ``kernel-states`` arm); if the fit
reads them, the dater's fit gets ``max_chars`` (the span ``embed.py`` pooled) so the pipe pools
the same letters of ``doc._.stoicheia``. Writes the component folder (``to_disk``:
``model``, a compressed npz, and ``data.json``, the layers and span it was fitted on) and a PNG: the leave-one-out estimates against the true
dates, and one papyrus's date distribution.
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
from evaluate import LEVEL, features, split_pairs, years
from kernel import fit_text_model

from stoicheia_spacy.date.dater import StoicheiaDater
from stoicheia_spacy.date.dating import BIN_YEARS, DEFAULT_LAYERS, residual_estimate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("padoc", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--plot", type=Path, required=True)
    parser.add_argument("--ship", type=Path, help="Also write model + data.json here (the shipped weights beside the default model)")
    parser.add_argument("--states", type=Path, help="Pooled states of the PaDoC papyri (embed.py), offered to the kernel")
    parser.add_argument("--max-chars", type=int, default=800, help="The span embed.py pooled (--max-chars there)")
    args = parser.parse_args()
    frame = pd.read_csv(args.padoc)
    y = years(frame)
    texts, states = split_pairs(features("kernel-states", frame, args.states) if args.states  # type: ignore[arg-type]
                                else features("text-kernel", frame, None))
    model, chosen = fit_text_model(texts, y, states)
    oof = y - model.residuals  # leave-one-out estimates, PaDoC row order
    dater = StoicheiaDater(layers=DEFAULT_LAYERS, level=LEVEL, model=model,
                           max_chars=args.max_chars if model.uses_states else None)
    dater.to_disk(args.out)
    if args.ship is not None:
        dater.to_disk(args.ship)
    (args.out / "training.json").write_text(json.dumps(
        {"command": "spacy project run date-eval (train)", "n_documents": int(len(y)),
         "model": "kernel-states" if args.states else "text-kernel", "reads_states": model.uses_states,
         **chosen}, indent=2) + "\n")

    tail = (1 - LEVEL) / 2
    r_low, r_high = np.quantile(y - oof, [tail, 1 - tail])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.errorbar(y, oof, yerr=[oof - (oof + r_low), (oof + r_high) - oof], fmt=".", alpha=0.4,
                  elinewidth=0.5, label=f"estimate, {LEVEL:.0%} interval")
    left.plot([y.min(), y.max()], [y.min(), y.max()], "k--", lw=1)
    left.set(xlabel="PaDoC date (year)", ylabel="leave-one-out estimate (year)",
             title="PaDoC, leave-one-out (kernel dater)")
    left.legend(loc="upper left", fontsize=8)
    estimate = residual_estimate(float(oof[0]), model.residuals, LEVEL)  # the first papyrus, dated from the other 388
    starts, probs = zip(*estimate.histogram, strict=True)
    right.bar(starts, probs, width=BIN_YEARS, align="edge", alpha=0.7)
    right.axvline(estimate.mean, color="k", label=f"estimate {estimate.mean:.0f}")
    right.axvspan(estimate.low, estimate.high, color="orange", alpha=0.2, label=f"{LEVEL:.0%} interval")
    right.axvline(y[0], color="r", ls="--", label=f"true {y[0]:.0f}")
    right.set(xlabel="year", ylabel="probability", title=f"doc._.date of TM {int(frame['tm'][0])} (left out)")
    right.legend(fontsize=8)
    fig.tight_layout()
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=80)
    size = (args.out / "model").stat().st_size
    print(f"wrote {args.out} ({size} bytes) and {args.plot} ({chosen}, leave-one-out MAE {np.mean(np.abs(y - oof)):.1f})")


if __name__ == "__main__":
    main()
