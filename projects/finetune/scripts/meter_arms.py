"""Norma scores of whole fine-tuned scanner pipelines, in meter_eval.py's harness and JSON shape.

``projects/meter/scripts/meter_eval.py`` puts heads on the default (frozen) backbone; a pipeline
fine-tuned end to end carries its own backbone, so here each arm is a ``spacy.load``-able folder:

    python scripts/meter_arms.py metrics/meter.json --arm pre0=training/scanner/seed0/model-last \
        --random rnd0=training/scanner_random/seed0/model-last [...] [--quick]

Pretrained arms are paired with random-init arms in the given order and compared with the exact
sign-flip test over seeds (``stoicheia_lab.scoring.stats.sign_flip_test``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import spacy
import torch
from stoicheia_lab.scan.norma import read_norma
from stoicheia_lab.scoring.stats import sign_flip_test

from stoicheia_spacy.registrations import register_all

register_all()  # the factories and architectures, also where the entry points are not installed
METER = Path(__file__).resolve().parents[2] / "meter" / "scripts" / "meter_eval.py"


def _meter_eval():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("meter_eval", METER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--arm", action="append", default=[], help="NAME=PIPELINE (pretrained backbone)")
    ap.add_argument("--random", action="append", default=[], help="NAME=PIPELINE (random-init control)")
    ap.add_argument("--quick", action="store_true", help="first 40 lines of each Norma part")
    ap.add_argument("--theta", type=float, default=0.1)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    me = _meter_eval()
    norma = read_norma(Path(os.environ["STOICHEIA_ASSET_MIRROR"]) / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    if args.quick:
        norma.macron, norma.syllables = norma.macron[:40], norma.syllables[:40]
    results: dict = {"n_marks": norma.n_marks, "rule": me.rule_arm(norma), "arms": {}}
    for spec, random_init in [(a, False) for a in args.arm] + [(r, True) for r in args.random]:
        name, path = spec.split("=", 1)
        arm = me.model_arm(spacy.load(path), norma, args.theta)
        arm.pop("per_mark_correct", None)
        results["arms"][name] = {"random_init": random_init, "pipeline": path, **arm}
    pre = [a for a in results["arms"].values() if not a["random_init"]]
    rnd = [a for a in results["arms"].values() if a["random_init"]]
    if pre and len(pre) == len(rnd):
        diffs = np.array([a["macron"]["accuracy"] - b["macron"]["accuracy"] for a, b in zip(pre, rnd, strict=True)])
        test = sign_flip_test(diffs)
        results["pretrained_vs_random"] = {"metric": "macron/accuracy", "mean_diff": float(diffs.mean()),
                                           "sign_flip_p": float(test.pvalue), "n": int(diffs.size)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, default=str))
    for name, arm in results["arms"].items():
        print(f"{name}: macron accuracy {100 * arm['macron']['accuracy']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
