"""restore-eval-quick: the backbone, the character n-gram LM and their fusion on a dev fit set and
a held-out subsample of the frozen gaps (known widths), plus the abstention threshold.

    python scripts/fusion_eval.py lm --mirror M --fold 3 --docs 20000 --out training/ngram_lm.npz
    python scripts/fusion_eval.py evaluate --samples samples/fold_3 --lm training/ngram_lm.npz \\
        --dev-per-length 10 --per-length 20 --weights 0.5,1.0 --out results/quick/metrics.json

``lm``: an order-6 Kneser-Ney character LM over the DDbDP papyri of the mirror (the open documentary
text of the doc-clean backbone) whose TM number does NOT end in ``fold`` (test) or ``fold + 1`` (dev):
every frozen gap's document is left out (checked: no sample id is in the training ids), top-order
n-grams seen once pruned; writes the ``.npz`` and a ``.json`` beside it (sha256, size, documents,
letters, the ids left out).

``evaluate``: decodes the dev gaps (``--dev-per-length`` per L) with the backbone (the shipped
overlay), the n-gram and the fused beam at every ``--weights`` value; picks the in-beam weight, the
union weight and the length bonus with the lowest dev CER; fits the abstention threshold (lowest
calibrated top probability with 90 % dev precision); then decodes the first ``--per-length`` test
gaps per L with the three systems at the fitted settings and writes CER, top-1, top-20, seconds per
gap, McNemar (exact, top-1) between each pair, ECE, the threshold and its test precision/coverage.
Decoder: the project's (bf16, beam 20, 24 letters a side, ``--unmask 2 --no-final-forward``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from restore_eval import bare, load_split, ours_cer, query, score


def train_lm(args: argparse.Namespace) -> int:
    from finetune import tm_digit
    from stoicheia_lab.corpus import iter_records

    from stoicheia_spacy.codec import encode_planes
    from stoicheia_spacy.restore.char_ngram import SPACE, CharNgramLM
    from stoicheia_spacy.restore.ngram_lm import prune, save_lm

    held = {args.fold, (args.fold + 1) % 10}
    sample_ids: set[str] = set()
    if args.samples:
        for split in ("test", "dev"):
            sample_ids |= {json.loads(x)["id"] for x in (Path(args.samples) / f"{split}.jsonl").read_text(
                encoding="utf-8").splitlines() if x}
    seqs, ids, skipped, t0 = [], [], 0, time.perf_counter()
    for record in iter_records("ddbdp", args.mirror, args.docs):
        if tm_digit(record) in held or record["id"] in sample_ids:
            skipped += 1
            continue
        p = encode_planes(record["text"])
        seqs.append(np.insert(p.letters.astype(np.int64), np.flatnonzero(p.boundary > 0) + 1, SPACE))
        ids.append(record["id"])
    lm = prune(CharNgramLM(order=args.order).fit(seqs), args.min_count)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_lm(lm, out)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    info = {"command": "python scripts/fusion_eval.py " + " ".join(sys.argv[1:]), "order": args.order,
            "min_count": args.min_count, "documents": len(seqs), "symbols": int(sum(len(s) for s in seqs)),
            "left_out_documents": skipped, "left_out_rule": f"TM digit in {sorted(held)} or id in the samples",
            "sample_ids_in_training": len(sample_ids & set(ids)), "bytes": out.stat().st_size, "sha256": digest,
            "seconds": time.perf_counter() - t0}
    out.with_suffix(".json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    print(json.dumps(info, indent=1))
    return 0


def decode(scorer, records, args, label: str) -> tuple[list[list[tuple[str, float, int]]], float]:
    from stoicheia_spacy.restore import beam_search

    out: list = []
    cpu = time.process_time()
    for i in range(0, len(records), args.chunk):
        qs = [dataclasses.replace(query(r, "known", 2)) for r in records[i : i + args.chunk]]
        res = beam_search(scorer, qs, beam=args.beam, n_best=200, context=args.window,
                          unmask=args.unmask, final_forward=not args.no_final_forward)
        out.extend([[(c.text, c.logprob, c.width) for c in cands] for cands in res])
        print(f"{label}: {len(out)}/{len(records)} gaps, {(time.process_time() - cpu) / len(out):.2f} CPU-s/gap",
              file=sys.stderr, flush=True)
    return out, (time.process_time() - cpu) / max(len(records), 1)


def ranked(cands, prior) -> list[str]:
    from stoicheia_spacy.restore.calibration import rerank

    return [c[0] for c in rerank(cands, prior)]


def evaluate(args: argparse.Namespace) -> int:
    from stoicheia_lab.scoring.calibration import expected_calibration_error
    from stoicheia_lab.scoring.stats import mcnemar_from_counts

    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import load_backbone
    from stoicheia_spacy.backbone.overlay import apply_overlay, read_overlay
    from stoicheia_spacy.restore import ModelScorer, WidthPrior
    from stoicheia_spacy.restore.calibration import (
        fit_temperatures,
        fit_threshold,
        rerank,
        top_probability,
    )
    from stoicheia_spacy.restore.fusion import FusedScorer, union_rescore
    from stoicheia_spacy.restore.ngram_lm import NgramScorer, load_lm

    torch.set_num_threads(1)
    samples = Path(args.samples)
    dev = load_split(samples, "dev", args.dev_per_length)
    test = load_split(samples, "test", args.per_length)
    lm = load_lm(args.lm)
    model = apply_overlay(load_backbone(str(default_model_dir())), *read_overlay(default_model_dir() / "restorer"))
    model = model.to(torch.bfloat16).eval()
    weights = [float(w) for w in args.weights.split(",")]
    lm_sha = hashlib.sha256(Path(args.lm).read_bytes()).hexdigest()[:10]
    decoder_tag = f"b{args.beam}_w{args.window}_u{args.unmask}{'_nf' if args.no_final_forward else ''}"
    # one cache file per decoded run (split, system, weight), named by the LM, the decoder and the
    # sample sizes: an interrupted evaluation resumes, and --decode workers fill it in parallel
    cache = Path(args.out).parent / f"cache_{lm_sha}_{decoder_tag}_dev{len(dev)}_test{len(test)}"
    cache.mkdir(parents=True, exist_ok=True)
    old = cache.with_suffix(".json")  # the single-file cache of earlier runs of this script
    runs: dict = json.loads(old.read_text(encoding="utf-8")) if old.is_file() else {}

    def run(split: str, system: str, weight: float = 0.0):
        key = f"{split}:{system}:{float(weight)}"
        file = cache / (key.replace(":", "_") + ".json")
        if key not in runs and file.is_file():
            runs[key] = json.loads(file.read_text(encoding="utf-8"))
        if key not in runs:
            records = dev if split == "dev" else test
            sc = (NgramScorer(lm) if system == "ngram" else
                  FusedScorer(ModelScorer(model), NgramScorer(lm), weight))
            cands, secs = decode(sc, records, args, key)
            runs[key] = {"cands": cands, "cpu_s_per_gap": secs}
            file.write_text(json.dumps(runs[key], ensure_ascii=False), encoding="utf-8")
        return runs[key]

    if args.decode:  # a worker: decode these runs into the cache, then stop
        for item in args.decode.split(","):
            split, system, weight = item.split(":")
            run(split, system, float(weight))
        return 0

    gold_dev = [r["gold"] for r in dev]
    bonuses = np.round(np.arange(-0.5, 1.51, 0.1), 2)

    def dev_cer(lists, bonus):
        prior = WidthPrior("total", float(bonus))
        return float(np.mean([ours_cer(rerank(c, prior)[0][0] if c else "", g) for c, g in zip(lists, gold_dev, strict=True)]))

    # 1. in-beam weight (0 = the backbone alone) and length bonus, by dev CER (known widths: the
    # bonus matters only for the union lists, whose texts may differ in width under the same L)
    ng_dev = run("dev", "ngram")["cands"]
    fit_rows = []
    for w in [0.0] + weights:
        lists = run("dev", "fused", w)["cands"]
        for u in args.union_weights:
            merged = [union_rescore(f, g, union_weight=u) for f, g in zip(lists, ng_dev, strict=True)] if u >= 0 else lists
            for b in bonuses:
                fit_rows.append((dev_cer(merged, b), w, u, float(b)))
    best = min(fit_rows, key=lambda r: (r[0], r[1]))
    _, weight, union_w, bonus = best
    prior = WidthPrior("total", bonus)

    def system_lists(split: str, name: str):
        ng = run(split, "ngram")["cands"]
        if name == "ngram":
            return ng
        if name == "backbone":
            return run(split, "fused", 0.0)["cands"]
        fused = run(split, "fused", weight)["cands"]
        return [union_rescore(f, g, union_weight=union_w) for f, g in zip(fused, ng, strict=True)] if union_w >= 0 else fused

    # 2. calibration (one temperature for the known widths pooled) and the abstention threshold, on dev
    def tops_and_probs(lists, temps):
        tops, probs = [], []
        for c in lists:
            r = rerank(c, prior)[:20]
            tops.append([x[0] for x in r])
            probs.append(top_probability(np.array([x[3] for x in r]), temps) if r else 0.0)
        return tops, np.array(probs)

    def correct(records, tops):
        return np.array([bool(t) and bare(t[0]) == bare(r["gold"]) for r, t in zip(records, tops, strict=True)])

    fused_dev = system_lists("dev", "fused")
    dev_keys = [np.array([x[3] for x in rerank(c, prior)[:20]]) for c in fused_dev]
    dev_tops = [[x[0] for x in rerank(c, prior)[:20]] for c in fused_dev]
    dev_ok = correct(dev, dev_tops)
    temp = fit_temperatures(dev_keys, dev_ok, ["all"] * len(dev))["default"]
    _, dev_p = tops_and_probs(fused_dev, temp)
    threshold = fit_threshold(dev_p, dev_ok, precision=0.9)

    # 3. the held-out subsample
    results, tops_by = {}, {}
    for name in ("backbone", "ngram", "fused"):
        lists = system_lists("test", name)
        tops = [ranked(c, prior)[:20] for c in lists]
        tops_by[name] = tops
        secs = (run("test", "ngram")["cpu_s_per_gap"] if name == "ngram" else
                run("test", "fused", 0.0 if name == "backbone" else weight)["cpu_s_per_gap"]
                + (run("test", "ngram")["cpu_s_per_gap"] if name == "fused" and union_w >= 0 else 0.0))
        results[name] = {**score(test, tops), "cpu_s_per_gap": secs}
    mcnemar = {}
    for a, b in (("backbone", "ngram"), ("backbone", "fused"), ("ngram", "fused")):
        ca, cb = correct(test, tops_by[a]), correct(test, tops_by[b])
        only_a, only_b = int((ca & ~cb).sum()), int((cb & ~ca).sum())
        mcnemar[f"{a}_vs_{b}"] = {f"only_{a}": only_a, f"only_{b}": only_b, "p": mcnemar_from_counts(only_a, only_b).pvalue}
    test_tops, test_p = tops_and_probs(system_lists("test", "fused"), temp)
    test_ok = correct(test, test_tops)
    conf = test_p >= threshold
    # 4. the shipped restorer's own probabilities (backbone alone, its config.cfg settings' prior and per-bucket
    # temperatures): the threshold the default pipeline uses (``confident_above``)
    from spacy.util import load_config

    from stoicheia_spacy.restore import bucket_temperature, width_bucket

    shipped = dict(load_config(default_model_dir() / "config.cfg")["components"]["stoicheia_restorer"]["settings"])
    s_prior = WidthPrior(shipped.get("rank", "total"), float(shipped.get("length_bonus", 0.0)),
                         tuple(shipped.get("width_log_prior") or ()))
    s_temps = {"default": float(shipped.get("temperature", 1.0)), **(shipped.get("temperatures") or {})}

    def shipped_probs(records, lists):
        probs, ok = [], []
        for r, c in zip(records, lists, strict=True):
            ranked_c = rerank(c, s_prior)[:20]
            t = bucket_temperature(s_temps, width_bucket((r["L"],)))
            probs.append(top_probability(np.array([x[3] for x in ranked_c]), t) if ranked_c else 0.0)
            ok.append(bool(ranked_c) and bare(ranked_c[0][0]) == bare(r["gold"]))
        return np.array(probs), np.array(ok)

    sd_p, sd_ok = shipped_probs(dev, system_lists("dev", "backbone"))
    st_p, st_ok = shipped_probs(test, system_lists("test", "backbone"))
    s_threshold = fit_threshold(sd_p, sd_ok, precision=0.9)

    def cover(p, ok, t):
        sel = p >= t
        return {"coverage": float(sel.mean()), "precision": float(ok[sel].mean()) if sel.any() else None}

    out = {
        "abstention_shipped": {
            "rule": "backbone alone, the shipped restorer config.cfg's prior and per-bucket temperatures: confident "
                    "when the top candidate's probability >= confident_above", "target_precision": 0.9,
            "confident_above": s_threshold, "dev": {**cover(sd_p, sd_ok, s_threshold), "ece": expected_calibration_error(sd_p, sd_ok),
                                                   "max_top_probability": float(sd_p.max())},
            "test": {**cover(st_p, st_ok, s_threshold), "ece": expected_calibration_error(st_p, st_ok)},
            "accuracy_coverage_test": [{"threshold": float(t), **cover(st_p, st_ok, float(t))}
                                       for t in (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)]},
        "command": "python scripts/fusion_eval.py " + " ".join(sys.argv[1:]),
        "decoder": {"beam": args.beam, "window": args.window, "unmask": args.unmask,
                    "final_forward": not args.no_final_forward, "dtype": "bfloat16", "widths": "known"},
        "lm": json.loads(Path(args.lm).with_suffix(".json").read_text(encoding="utf-8"))
        if Path(args.lm).with_suffix(".json").is_file() else {"path": str(args.lm)},
        "dev": {"n": len(dev), "per_length": args.dev_per_length,
                "fit": {"lm_weight": weight, "union_weight": union_w, "length_bonus": bonus, "dev_cer": best[0]},
                "grid": [{"cer": r[0], "lm_weight": r[1], "union_weight": r[2], "length_bonus": r[3]} for r in fit_rows],
                "systems": {n: score(dev, [ranked(c, prior)[:20] for c in system_lists("dev", n)])["overall"]
                            for n in ("backbone", "ngram", "fused")},
                "temperature": temp, "ece": expected_calibration_error(dev_p, dev_ok)},
        "test": {"n": len(test), "per_length": args.per_length, "systems": results, "mcnemar_top1": mcnemar,
                 "ece": expected_calibration_error(test_p, test_ok)},
        "abstention": {"rule": "confident when the fused top candidate's calibrated probability >= threshold",
                       "target_precision": 0.9, "threshold": threshold,
                       "dev": {"coverage": float((dev_p >= threshold).mean()),
                               "precision": float(dev_ok[dev_p >= threshold].mean()) if (dev_p >= threshold).any() else None},
                       "test": {"coverage": float(conf.mean()),
                                "precision": float(test_ok[conf].mean()) if conf.any() else None}},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    for name, r in results.items():
        o = r["overall"]
        print(f"{name:>8}: CER {o['cer']:.1f}  top-1 {o['top1']:.1f}  top-20 {o['top20']:.1f}  "
              f"{r['cpu_s_per_gap']:.2f} CPU-s/gap")
    print(json.dumps({"fit": out["dev"]["fit"], "mcnemar": mcnemar, "abstention": out["abstention"],
                      "abstention_shipped": out["abstention_shipped"]}, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fusion_eval.py")
    sub = parser.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("lm")
    t.add_argument("--mirror", required=True)
    t.add_argument("--fold", type=int, default=3)
    t.add_argument("--docs", type=int, default=20000)
    t.add_argument("--order", type=int, default=6)
    t.add_argument("--min-count", type=int, default=2)
    t.add_argument("--samples", default=None, help="frozen samples folder: its ids are left out too")
    t.add_argument("--out", required=True)
    e = sub.add_parser("evaluate")
    e.add_argument("--samples", required=True)
    e.add_argument("--lm", required=True)
    e.add_argument("--dev-per-length", type=int, default=10)
    e.add_argument("--per-length", type=int, default=20)
    e.add_argument("--weights", default="0.5,1.0")
    e.add_argument("--union-weights", type=lambda s: [float(x) for x in s.split(",")], default=[-1.0, 0.5, 1.0],
                   help="union rescoring weights (-1: no union, the fused list alone)")
    e.add_argument("--beam", type=int, default=20)
    e.add_argument("--window", type=int, default=24)
    e.add_argument("--unmask", type=int, default=2)
    e.add_argument("--no-final-forward", action="store_true")
    e.add_argument("--chunk", type=int, default=10)
    e.add_argument("--out", required=True)
    e.add_argument("--decode", default="", help="worker: decode only SPLIT:SYSTEM:WEIGHT,... into the cache")
    args = parser.parse_args(argv)
    return train_lm(args) if args.cmd == "lm" else evaluate(args)


if __name__ == "__main__":
    raise SystemExit(main())
