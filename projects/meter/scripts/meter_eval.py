"""meter-eval: Norma by its own protocol; rule-only baseline vs scanner heads.

Arms: ``rule`` (rule weights, dichrona defaulting to short), and for each trained heads
folder given with ``--heads NAME=DIR`` the ``stoicheia_scanner`` on the default backbone
(``--random-backbone`` arms re-initialise it with the folder's seed). Reported: macron
accuracy / balanced accuracy at Norma's marks (all, and without stoplist words),
coverage/accuracy of the calibrated macron probability, syllable-boundary F1, weight
accuracy and exact-line accuracy with and without Viterbi; pretrained vs random arms
compared per seed with the exact sign-flip test. Published rows are printed beside ours.

    python projects/meter/scripts/meter_eval.py OUT.json --heads pre0=DIR ... [--random rnd0=DIR ...] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch
from stoicheia_lab.scan.norma import (
    mark_letters,
    read_norma,
    score_macrons,
    score_syllables,
    syllable_ends,
)

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.syllabify import HEAVY, LIGHT, UNKNOWN, syllabify

PUBLISHED = {"rule-based (Norma paper)": 89.46, "character transformer (Norma paper)": 90.66,
             "Stoicheia (paper)": 93.37}


def rule_arm(norma) -> dict:
    gold, pred = [], []
    for line in norma.macron:
        idx = mark_letters(line)
        gold += [g for _, g in line.marks]
        pred += [0] * len(idx)  # undetermined dichrona default to short (majority)
    sg, sp = [], []
    for line in norma.syllables:
        p = encode_planes(line.text)
        s = syllabify(p, text=line.text)
        w = np.where(s.weights == UNKNOWN, LIGHT, s.weights)
        d = syllabify(p, text=line.text, weights=w)
        sg.append(syllable_ends(line))
        sp.append((d.ends, w == HEAVY))
    return {"macron": score_macrons(gold, pred), "syllables": score_syllables(sg, sp)}


def full_weights(doc) -> tuple[np.ndarray, np.ndarray]:
    """Per rule syllable weights of a scanned Doc and the indices merged into their successor."""
    from stoicheia_spacy.scan.lattice import expand_weights

    weights, drop, base = [], [], 0
    for v in doc._.verses:
        reduced = np.array([HEAVY if c == "–" else LIGHT for c in v._.scansion.pattern], dtype=np.int64)
        merged = tuple(v._.scansion.synizesis)
        full = expand_weights(reduced, merged, len(reduced) + len(merged))
        weights.append(full)
        drop += [base + k for k in merged]
        base += len(full)
    w = np.concatenate(weights) if weights else np.zeros(0, dtype=np.int64)
    return w, np.asarray(drop, dtype=np.int64)


def score_annotated(scanner, norma, mac_docs, mac_logits, syl_docs, syl_logits, theta: float) -> dict:
    """Score the scanner pipe's annotations (from given logits) on Norma's two parts.

    ``mac_docs``/``syl_docs`` are Docs of Norma's macron/syllable lines with
    ``doc._.stoicheia`` set; the logits are the heads' ``(n, 6)`` outputs per Doc. The
    syllable part is scored with the metre Viterbi (``theta``) and without (no meters).
    """
    scanner.set_annotations(mac_docs, mac_logits)
    gold, pred, probs = [], [], []
    for line, doc in zip(norma.macron, mac_docs, strict=True):
        idx = mark_letters(line)
        by_off = {m.offset: m for m in doc._.macrons}
        offs = np.asarray(doc._.stoicheia.planes.offsets)
        for (_, g), i in zip(line.marks, idx.tolist(), strict=True):
            m = by_off.get(int(offs[i])) if i >= 0 else None
            gold.append(g)
            pred.append(-1 if m is None or m.length is None else m.length)
            probs.append(0.5 if m is None else m.p_long)
    out: dict = {"macron": score_macrons(gold, pred)}
    from stoicheia_lab.scoring.calibration import coverage_accuracy, expected_calibration_error

    p = np.asarray(probs)
    conf = np.maximum(p, 1 - p)
    correct = (p > 0.5) == np.asarray(gold)
    out["calibration"] = {"ece": float(expected_calibration_error(conf, correct)),
                          "coverage": [dict(vars(c)) for c in coverage_accuracy(conf, correct, (0.5, 0.8, 0.9, 1.0))]}
    out["per_mark_correct"] = [int(a == int(b)) for a, b in zip(pred, gold, strict=True)]
    meters = scanner.meters
    for label, th in (("viterbi", theta), ("no_viterbi", -1.0)):
        scanner.configure(theta=max(th, 0.0))
        scanner._meters = {} if th < 0 else meters
        scanner.set_annotations(syl_docs, syl_logits)
        sg, sp = [], []
        for line, doc in zip(norma.syllables, syl_docs, strict=True):
            weights, drop = full_weights(doc)
            p_ = encode_planes(line.text)
            d = syllabify(p_, text=line.text, weights=weights)
            sg.append(syllable_ends(line))
            if len(weights) == len(d.ends):
                keep = np.ones(len(weights), dtype=bool)
                keep[drop] = False  # a synizesis ends where its second half ends
                sp.append((d.ends[keep], weights[keep] == HEAVY))
            else:
                sp.append((d.ends, d.weights == HEAVY))
        out[f"syllables_{label}"] = score_syllables(sg, sp)
    scanner._meters = meters
    scanner.configure(theta=theta)
    return out


def model_arm(nlp, norma, theta: float) -> dict:
    """Run the whole pipeline (encoder + scanner) over Norma and score it."""
    scanner = nlp.get_pipe("stoicheia_scanner")
    enc = nlp.get_pipe("stoicheia_encoder")
    docs = {}
    for part in ("macron", "syllables"):
        docs[part] = list(enc.pipe(nlp.make_doc(x.text) for x in getattr(norma, part)))
    logits = {k: scanner.predict(v) for k, v in docs.items()}
    return score_annotated(scanner, norma, docs["macron"], logits["macron"], docs["syllables"], logits["syllables"], theta)


def load_arm(heads_dir: Path, random_init: bool, seed: int):
    sys.path.insert(0, str(Path(__file__).parent))
    from train import build_nlp


    nlp = build_nlp(random_init, seed)
    pipe = nlp.add_pipe("stoicheia_scanner", config={"lexicon": None})  # scansion arms: no macron lexicon
    pipe.from_disk(heads_dir)
    return nlp


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--heads", action="append", default=[], help="NAME=DIR (pretrained backbone)")
    ap.add_argument("--random", action="append", default=[], help="NAME=DIR (random backbone, seed from its report)")
    ap.add_argument("--pipeline", action="append", default=[],
                    help="NAME=MODEL: a whole pipeline as `stoicheia scan` loads it (e.g. default=grc_stoicheia_doc_clean)")
    ap.add_argument("--quick", action="store_true", help="first 40 lines of each part only")
    ap.add_argument("--theta", type=float, default=0.1)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    norma = read_norma(Path(os.environ["STOICHEIA_ASSET_MIRROR"]) / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    if args.quick:
        norma.macron, norma.syllables = norma.macron[:40], norma.syllables[:40]
    results: dict = {"n_marks": norma.n_marks, "rule": rule_arm(norma), "arms": {}}
    for spec, random_init in [(h, False) for h in args.heads] + [(r, True) for r in args.random]:
        name, path = spec.split("=", 1)
        seed = json.loads((Path(path) / "train_report.json").read_text()).get("seed", 0) if (Path(path) / "train_report.json").exists() else 0
        results["arms"][name] = {"random_init": random_init, **model_arm(load_arm(Path(path), random_init, seed), norma, args.theta)}
    for spec in args.pipeline:
        from stoicheia_spacy.cli.loading import load_for

        name, model = spec.split("=", 1)
        results["arms"][name] = {"random_init": False, "pipeline": model, **model_arm(load_for("scan", model), norma, args.theta)}
    pre = [a for a in results["arms"].values() if not a["random_init"] and "pipeline" not in a]
    rnd = [a for a in results["arms"].values() if a["random_init"]]
    if pre and rnd and len(pre) == len(rnd):
        from stoicheia_lab.scoring.stats import sign_flip_test

        diffs = np.array([a["macron"]["accuracy"] - b["macron"]["accuracy"] for a, b in zip(pre, rnd, strict=True)])
        results["pretrained_vs_random"] = {"mean_diff": float(diffs.mean()), "sign_flip": str(sign_flip_test(diffs))}
    for arm in results["arms"].values():
        arm.pop("per_mark_correct", None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, default=str))
    print(f"Norma macron accuracy at {results['n_marks']} marks (published rows use Norma's 1,916 positions):")
    for k, v in PUBLISHED.items():
        print(f"  {k:40s} {v:6.2f}  (published)")
    print(f"  {'ours: rule-only':40s} {100 * results['rule']['macron']['accuracy']:6.2f}")
    for name, arm in results["arms"].items():
        m, s1, s0 = arm["macron"], arm["syllables_viterbi"], arm["syllables_no_viterbi"]
        print(f"  ours: {name:34s} {100 * m['accuracy']:6.2f}  bal {100 * m['balanced_accuracy']:.2f}  "
              f"bF1 {100 * s1['boundary_f1']:.2f}  exact {100 * s1['exact_weights']:.2f} (no Viterbi {100 * s0['exact_weights']:.2f})")
    r = results["rule"]["syllables"]
    print(f"  rule syllables: bF1 {100 * r['boundary_f1']:.2f} weight acc {100 * r['weight_accuracy']:.2f} exact {100 * r['exact_weights']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
