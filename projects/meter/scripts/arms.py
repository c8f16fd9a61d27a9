"""meter-eval arms: pretrained vs random-init backbone, same recipe, same silver data, seeds.

For each backbone (``pre``: the embedded default; ``rnd``: ``StoicheiaEncoder(config)``
of the same shape built after ``torch.manual_seed(--backbone-seed)``) the frozen
per-letter states of the silver lines and of every Norma line are computed once
(float16 cache in memory); then for each seed the scanner heads are trained by
:func:`train.train_heads` (same epochs, lr, batch; the seed changes head init and
batch order) with the macron temperature fitted on the silver dev split, and scored
on Norma by :func:`meter_eval.score_annotated` (the real ``stoicheia_scanner``
annotation code). Per-seed Norma macron accuracies are compared pretrained vs random
by the exact sign-flip test, the paired t-test and Cohen's d_z
(``stoicheia_lab.scoring.stats``); a markdown table goes to ``--markdown``.

    python projects/meter/scripts/arms.py metrics/arms.json --markdown RESULTS.md \
        [--lines 1200] [--epochs 25] [--seeds 0 1 2 3 4] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

from meter_eval import PUBLISHED, rule_arm, score_annotated
from stoicheia_lab.scan.norma import position_counts, read_norma
from stoicheia_lab.scan.silver import build_silver
from train import encode, fit_temperature_on, mirror, train_heads

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.model import rule_features


def backbone_nlp(kind: str, backbone_seed: int):
    """Default pipeline; for ``rnd`` its backbone replaced by a seeded fresh ``StoicheiaEncoder``."""
    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import StoicheiaEncoder
    from stoicheia_spacy.encoder.model import set_backbone_weights, torch_backbone

    nlp = build_pipeline(str(default_model_dir()), components=False)
    if kind == "rnd":
        enc: Any = nlp.get_pipe("stoicheia_encoder")
        torch.manual_seed(backbone_seed)
        fresh = StoicheiaEncoder(torch_backbone(enc.model).config)
        set_backbone_weights(enc.model, fresh)
    return nlp


def encode_docs(nlp, texts: list[str], batch: int = 16) -> tuple[list[Any], list[np.ndarray]]:
    """Docs with ``doc._.stoicheia`` set (hidden dropped) and float16 hidden stacks, batched."""
    enc = nlp.get_pipe("stoicheia_encoder")
    docs, hidden = [], []
    for i in range(0, len(texts), batch):
        chunk = [nlp.make_doc(t) for t in texts[i : i + batch]]
        preds = enc.predict(chunk)
        enc.set_annotations(chunk, preds)
        for d in chunk:
            hidden.append(np.asarray(d._.stoicheia.hidden, dtype=np.float16))
            d._.stoicheia.hidden = None
        docs += chunk
    return docs, hidden


def head_logits(heads, docs, hidden) -> list[np.ndarray]:
    """(n, 6) logits per Doc, exactly as the pipe's heads layer computes them."""
    out = []
    with torch.no_grad():
        for d, h in zip(docs, hidden, strict=True):
            f = torch.as_tensor(rule_features(d._.stoicheia.planes))
            out.append(heads(torch.as_tensor(h).float(), f).numpy())
    return out


def run_backbone(kind: str, args: argparse.Namespace, silver, norma) -> dict[str, Any]:
    t0 = time.time()
    nlp = backbone_nlp(kind, args.backbone_seed)
    texts = [x.text for x in silver]
    hidden = encode(nlp, texts)
    feats = [rule_features(encode_planes(t), t) for t in texts]
    mac = [x.macron.astype(np.int64) for x in silver]
    scan = [x.scan.astype(np.int64) for x in silver]
    n_dev = max(1, len(silver) // 10)
    mac_docs, mac_hid = encode_docs(nlp, [x.text for x in norma.macron])
    syl_docs, syl_hid = encode_docs(nlp, [x.text for x in norma.syllables])
    t_enc = time.time() - t0
    scanner = nlp.add_pipe("stoicheia_scanner", config={"lexicon": None})  # the heads' arms: no macron lexicon
    out: dict[str, Any] = {"encode_seconds": round(t_enc, 1), "seeds": {}}
    for seed in args.seeds:
        t1 = time.time()
        heads = train_heads(hidden[n_dev:], feats[n_dev:], mac[n_dev:], scan[n_dev:], epochs=args.epochs, seed=seed)
        temperature, dev_acc = fit_temperature_on(heads, hidden[:n_dev], feats[:n_dev], mac[:n_dev])
        scanner.configure(temperature=temperature, theta=args.theta, abstain_below=0.0)
        res = score_annotated(scanner, norma, mac_docs, head_logits(heads, mac_docs, mac_hid),
                              syl_docs, head_logits(heads, syl_docs, syl_hid), args.theta)
        res.pop("per_mark_correct", None)
        res.update({"temperature": temperature, "silver_dev_macron_acc": dev_acc,
                    "seconds": round(time.time() - t1, 1)})
        out["seeds"][str(seed)] = res
        print(kind, seed, json.dumps({k: res["macron"][k] for k in ("accuracy", "balanced_accuracy")}), flush=True)
    return out


def compare(results: dict[str, Any], metric: tuple[str, str]) -> dict[str, Any]:
    from stoicheia_lab.scoring.stats import paired_t_test, sign_flip_test

    seeds = sorted(results["pre"]["seeds"])
    a = np.array([results["pre"]["seeds"][s][metric[0]][metric[1]] for s in seeds])
    b = np.array([results["rnd"]["seeds"][s][metric[0]][metric[1]] for s in seeds])
    sf = sign_flip_test(a, b)
    tt = paired_t_test(a, b)
    return {"metric": "/".join(metric), "pre": a.tolist(), "rnd": b.tolist(), "mean_diff": float((a - b).mean()),
            "sign_flip_p": sf.pvalue, "sign_flip_floor": sf.floor if hasattr(sf, "floor") else 2.0 / 2 ** len(seeds),
            "t": tt.statistic, "t_p": tt.pvalue, "d_z": tt.cohens_dz, "n": len(seeds)}


def _ms(x: list[float]) -> str:
    a = 100 * np.asarray(x)
    return f"{a.mean():.2f} ± {a.std(ddof=1) if a.size > 1 else 0.0:.2f}"


def markdown(results: dict[str, Any], command: str) -> str:
    seeds = sorted(results["pre"]["seeds"])
    rows = ["| system | Norma macron accuracy (%) | balanced acc. (%) | boundary F1 (%) | exact-line weights (%) |",
            "|---|---|---|---|---|"]
    for k, v in PUBLISHED.items():
        rows.append(f"| {k} — published, on Norma's 1,916 positions | {v:.2f} | | | |")
    r = results["rule"]
    rows.append(f"| ours: rule-only (dichrona short) | {100 * r['macron']['accuracy']:.2f} | "
                f"{100 * r['macron']['balanced_accuracy']:.2f} | {100 * r['syllables']['boundary_f1']:.2f} | "
                f"{100 * r['syllables']['exact_weights']:.2f} |")
    for kind, label in (("pre", "pretrained backbone (embedded default), frozen + heads"),
                        ("rnd", "random-init backbone (same shape), frozen + heads")):
        s = [results[kind]["seeds"][k] for k in seeds]
        rows.append(f"| ours: {label}, {len(s)} seeds | {_ms([x['macron']['accuracy'] for x in s])} | "
                    f"{_ms([x['macron']['balanced_accuracy'] for x in s])} | "
                    f"{_ms([x['syllables_viterbi']['boundary_f1'] for x in s])} | "
                    f"{_ms([x['syllables_viterbi']['exact_weights'] for x in s])} |")
    c = results["comparison"]
    lines = [
        "# meter-eval: Norma Syllabarum Graecarum",
        "",
        f"Norma macron marks scored: **{results['n_marks']}** (every `^`/`_` in `norma_macronize/`), "
        "abstentions wrong, stoplist words included; prose sentences as lines. This is not the published "
        "protocol (1,916 positions): that one, and the published rows on it, are in [RESULTS.md](RESULTS.md) "
        "(`meter-eval`).",
        "",
        *rows,
        "",
        f"Pretrained − random, macron accuracy over {c['n']} seeds: mean difference "
        f"{100 * c['mean_diff']:+.2f} points; exact sign-flip p = {c['sign_flip_p']:.4f} "
        f"(floor {c['sign_flip_floor']:.4f} at n = {c['n']}); paired t = {c['t']:.2f}, p = {c['t_p']:.2g}; "
        f"d_z = {c['d_z']:.2f}.",
        "",
        "Per seed (macron accuracy %): pretrained "
        + ", ".join(f"{100 * x:.2f}" for x in c["pre"]) + "; random " + ", ".join(f"{100 * x:.2f}" for x in c["rnd"]) + ".",
        "",
        "## Position set",
        "",
        "The published rows are on 1,916 ambiguous positions. Norma's README does not define that count "
        "(it says every open-syllable dichronon is marked, closed ones only sporadically) and `dev.txt` "
        "is a separate set (764 lines, none in the benchmark). What we can count "
        "(`stoicheia_lab.scan.norma.position_counts`):",
        "",
        *[f"- `{k}`: {v}" for k, v in results["positions"].items()],
        "",
        "None of these is 1,916: the published set also leaves out two works and reads openness from the "
        "gold syllabification (see RESULTS.md). Here we score all marks (`marks`).",
        "",
        f"Silver data: {results['silver']}.",
        "",
        "Command (CPU, frozen backbones, cached features):",
        "",
        "```",
        command,
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--lines", type=int, default=1200)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--backbone-seed", type=int, default=0, help="torch seed of the random-init control backbone")
    ap.add_argument("--theta", type=float, default=0.1)
    ap.add_argument("--quick", action="store_true", help="60 silver lines, 2 epochs, 40 Norma lines per part")
    args = ap.parse_args(argv)
    if args.quick:
        args.lines, args.epochs = 60, 2
    torch.set_num_threads(max(1, int(os.environ.get("STOICHEIA_THREADS", "1"))))
    t0 = time.time()
    data = mirror()
    norma = read_norma(data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    silver, counts = build_silver(data, norma, max_lines=args.lines, seed=0)
    positions = position_counts(norma)
    if args.quick:
        norma.macron, norma.syllables = norma.macron[:40], norma.syllables[:40]
    results: dict[str, Any] = {"n_marks": norma.n_marks, "silver": counts, "epochs": args.epochs,
                               "seeds": args.seeds, "backbone_seed": args.backbone_seed, "positions": positions,
                               "rule": rule_arm(norma)}
    for kind in ("pre", "rnd"):
        results[kind] = run_backbone(kind, args, silver, norma)
    results["comparison"] = compare(results, ("macron", "accuracy"))
    results["comparison_exact_weights"] = compare(results, ("syllables_viterbi", "exact_weights"))
    results["seconds"] = round(time.time() - t0, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, default=str))
    if args.markdown:
        cmd = "cd projects/meter && STOICHEIA_ASSET_MIRROR=<mirror> python scripts/arms.py " + " ".join(
            argv if argv is not None else sys.argv[1:])
        args.markdown.write_text(markdown(results, cmd))
    print(json.dumps(results["comparison"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
