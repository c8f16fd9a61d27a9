"""restore-eval: frozen gap samples from held-out papyri, the arms, CER/top-1/top-20 per L,
McNemar tests, calibration, unknown-width evaluation, a markdown table and plots.

    python scripts/restore_eval.py samples --mirror M --fold 3 --per-length 300 --out samples/
    python scripts/restore_eval.py evaluate --samples samples/ --mirror M --out results/
        [--overlay training/fold_3] [--arms finetuned,pretrained,ngram] [--quick]

Arms: ``pretrained`` (the backbone, zero-shot), ``finetuned`` (the backbone with the
restoration overlay of ``--overlay``, see finetune.py), ``random_init`` (same shape, random
weights: the control) and ``ngram`` (a 6-gram LM on the training papyri, same beam). The
width experiments and the calibration use the first model arm listed (``finetuned`` when given).

Samples: documents of ``iter_records("ddbdp", mirror)`` (or of ``--corpus``, JSON lines
``{id, text}`` such as a user's inscriptions) whose identifier (TM / PHI number) ends in ``fold``
(test) or ``(fold + 1) % 10`` (dev, for temperature fitting); one gap per document, L = 1…10
in equal numbers, fixed seed; the gap is a run of L characters of Greek letters and single
spaces (spaces count). Records ``{id, L, start, gold, text}`` (the paper's format).
Predictions and gold are compared as bare lower-case letters (diacritics stripped, sigma
folded), since the restorer predicts letters and word division, not accents.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import torch

GAP_RE = re.compile(r"^[\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f]+(?: [\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f]+)*$")
ARMS = ("finetuned", "pretrained", "random_init", "ngram")


def bare(text: str) -> str:
    """Lower-case letters without diacritics, sigma folded, spaces kept."""
    nfd = unicodedata.normalize("NFD", text)
    out = "".join(ch for ch in nfd if not unicodedata.combining(ch)).lower()
    return out.replace("ς", "σ").replace("ϲ", "σ")


def make_samples(mirror: str, fold: int, per_length: int, seed: int, limit: int | None,
                 corpus: str | None = None) -> dict[str, list[dict]]:
    from finetune import documents, tm_digit

    rng = random.Random(seed)
    want = {"test": fold, "dev": (fold + 1) % 10}
    quota = {"test": per_length, "dev": max(1, per_length // 2)}
    out: dict[str, list[dict]] = {"test": [], "dev": []}
    for record in documents(mirror, limit, corpus):
        digit = tm_digit(record)
        split = next((s for s, d in want.items() if d == digit), None)
        if split is None or len(out[split]) >= quota[split] * 10:
            continue
        L = len(out[split]) % 10 + 1
        text = record["text"]
        for _ in range(20):
            if len(text) <= L + 20:
                break
            start = rng.randrange(10, len(text) - L)
            gold = text[start : start + L]
            if GAP_RE.match(gold) and len(gold) == L and not unicodedata.combining(text[start + L : start + L + 1] or " "):
                out[split].append({"id": record["id"], "L": L, "start": start, "gold": gold, "text": text})
                break
        if all(len(out[s]) >= quota[s] * 10 for s in out):
            break
    return out


class NgramScorer:
    """The n-gram baseline as a beam scorer: masked letters by ``CharNgramLM.masked_logprobs``,
    word breaks by P(SPACE | left history); BLANK is never predicted (known widths only)."""

    def __init__(self, lm: object) -> None:
        self.lm = lm
        self.forwards = 0

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        from stoicheia_spacy.alphabet import MASK_ID, N_ALPHA, PAD_ID
        from stoicheia_spacy.baselines.ngram import SPACE, UNK

        self.forwards += 1
        ids, bnd = batch["input_ids"].numpy(), batch["boundary"].numpy()
        B, T = ids.shape
        letters = np.full((B, T, 26), np.log(1 / 24), dtype=np.float32)
        letters[..., 24:] = -np.inf
        breaks = np.zeros((B, T, 2), dtype=np.float32)
        ctx = self.lm.order - 1  # type: ignore[attr-defined]
        for r in range(B):
            n = int((ids[r] != PAD_ID).sum())
            sym = np.where(ids[r, :n] == MASK_ID, UNK, ids[r, :n])
            space_after = (bnd[r, :n] == 1) | (bnd[r, :n] == 2)
            seq = np.insert(sym, np.flatnonzero(space_after) + 1, SPACE)
            pos = np.arange(n) + np.concatenate([[0], np.cumsum(space_after)[:-1]])
            masked = np.flatnonzero(ids[r, :n] == MASK_ID)
            if len(masked):
                letters[r, masked, :N_ALPHA] = self.lm.masked_logprobs(seq, pos[masked])  # type: ignore[attr-defined]
            padded = np.concatenate([np.full(ctx, SPACE), seq])
            hist = np.lib.stride_tricks.sliding_window_view(padded, ctx)[pos + 1]
            is_unk = hist == UNK
            last = np.where(is_unk.any(1), ctx - 1 - np.argmax(is_unk[:, ::-1], axis=1), -1)
            lp = self.lm.logprob(np.where(is_unk, SPACE, hist), np.full(n, SPACE), ctx - 1 - last)  # type: ignore[attr-defined]
            p = np.clip(np.exp(lp), 1e-6, 1 - 1e-6)
            breaks[r, :n, 0], breaks[r, :n, 1] = np.log1p(-p), np.log(p)
        return torch.from_numpy(letters), torch.from_numpy(breaks)


def fit_ngram(mirror: str, fold: int, limit: int) -> object:
    from finetune import tm_digit

    from stoicheia_spacy.baselines.ngram import SPACE, CharNgramLM
    from stoicheia_spacy.codec import encode_planes
    from stoicheia_spacy.corpus import iter_records

    seqs = []
    for record in iter_records("ddbdp", mirror, limit):
        if tm_digit(record) in (fold, (fold + 1) % 10):
            continue
        p = encode_planes(record["text"])
        final = p.boundary > 0
        seqs.append(np.insert(p.letters.astype(np.int64), np.flatnonzero(final) + 1, SPACE))
    return CharNgramLM(order=6).fit(seqs)


def run_arm(scorer: object, samples: list[dict], widths: str, beam: int, window: int, chunk: int = 16,
            slack: int = 2) -> list[list[tuple[str, float]]]:
    from stoicheia_spacy.restore import beam_search, build_queries, hide_spans

    out = []
    for i in range(0, len(samples), chunk):
        queries = []
        for s in samples[i : i + chunk]:
            [target] = build_queries(hide_spans(s["text"], [(s["start"], s["start"] + s["L"])]))
            L = s["L"]
            w = (L,) if widths == "known" else None if widths == "unknown" else tuple(range(max(1, L - slack), L + slack + 1))
            q = target.query
            queries.append(type(q)(q.context, q.insert_at, w, q.left_open, q.right_open))
        for cands in beam_search(scorer, queries, beam=beam, n_best=20, window=window):  # type: ignore[arg-type]
            out.append([(c.text, c.probability) for c in cands])
    return out


def score(samples: list[dict], preds: list[list[tuple[str, float]]]) -> dict:
    from stoicheia_spacy.scoring.cer import RestorationSample, score_restorations

    scores = score_restorations(
        [RestorationSample(bare(s["gold"]), [bare(t) for t, _ in p], s["L"]) for s, p in zip(samples, preds, strict=True)], k=20)
    return {"overall": scores.as_dict(), "per_L": {L: v.as_dict() for L, v in scores.per_length.items()}}


def correct_top1(samples: list[dict], preds: list[list[tuple[str, float]]]) -> np.ndarray:
    return np.array([bool(p) and bare(p[0][0]) == bare(s["gold"]) for s, p in zip(samples, preds, strict=True)])


def calibrate(dev: list[dict], dev_preds: list, test: list[dict], test_preds: list) -> dict:
    """Temperature scaling of the top candidate's probability (binary NLL of top-1 correctness)."""
    from stoicheia_spacy.scoring.calibration import (
        coverage_accuracy,
        expected_calibration_error,
        reliability_diagram,
    )

    def top_prob(preds: list, T: float) -> np.ndarray:
        out = []
        for p in preds:
            if not p:
                out.append(0.0)
                continue
            z = np.log(np.maximum([q for _, q in p], 1e-300)) / T
            z = np.exp(z - z.max())
            out.append(float(z[0] / z.sum()))
        return np.array(out)

    y_dev = correct_top1(dev, dev_preds).astype(float)
    grid = np.exp(np.linspace(np.log(0.05), np.log(20), 200))
    nll = [float(-np.mean(y_dev * np.log(np.clip(top_prob(dev_preds, T), 1e-9, 1)) +
                          (1 - y_dev) * np.log(np.clip(1 - top_prob(dev_preds, T), 1e-9, 1)))) for T in grid]
    T = float(grid[int(np.argmin(nll))])
    y = correct_top1(test, test_preds)
    raw, cal = top_prob(test_preds, 1.0), top_prob(test_preds, T)
    cov = coverage_accuracy(cal, y, (0.5, 0.8, 1.0))
    return {"temperature": T, "ece_raw": expected_calibration_error(raw, y, 10),
            "ece_calibrated": expected_calibration_error(cal, y, 10),
            "coverage": {f"{p.coverage:.0%}": p.accuracy for p in cov},
            "_diagram": reliability_diagram(cal, y, 10)}


def evaluate(args: argparse.Namespace) -> int:
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import StoicheiaEncoder, load_backbone
    from stoicheia_spacy.restore import ModelScorer
    from stoicheia_spacy.scoring.stats import mcnemar_exact

    torch.set_num_threads(args.threads)
    samples_dir = Path(args.samples)
    test = [json.loads(x) for x in (samples_dir / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    dev = [json.loads(x) for x in (samples_dir / "dev.jsonl").read_text(encoding="utf-8").splitlines()]
    if args.quick:  # CI size: few samples, narrow beam and context (the CPU cost is the forwards)
        args.beam, args.window, args.ngram_docs = min(args.beam, 5), min(args.window, args.quick_window), min(args.ngram_docs, 2000)
        args.slack = min(args.slack, 1)
        test = [s for L in range(1, 11) for s in [t for t in test if t["L"] == L][: args.quick_per_length]]
        dev = [s for L in range(1, 11) for s in [t for t in dev if t["L"] == L][:1]]
    arms = [a for a in (args.arms.split(",") if args.arms else ARMS) if a != "finetuned" or args.overlay]
    unknown = set(arms) - set(ARMS)
    if unknown or not arms:
        raise SystemExit(f"unknown arms {sorted(unknown)}; choose from {ARMS}")
    pretrained = load_backbone(args.model or str(default_model_dir()))
    scorers: dict[str, object] = {}
    for arm in arms:
        if arm == "pretrained":
            scorers[arm] = ModelScorer(pretrained)
        elif arm == "finetuned":
            from stoicheia_spacy.restore.overlay import apply_overlay, read_overlay

            scorers[arm] = ModelScorer(apply_overlay(pretrained, *read_overlay(args.overlay)))
        elif arm == "random_init":
            torch.manual_seed(0)
            scorers[arm] = ModelScorer(StoicheiaEncoder(pretrained.config))
        else:
            scorers[arm] = NgramScorer(fit_ngram(args.mirror, args.fold, args.ngram_docs))
    preds = {arm: run_arm(scorers[arm], test, "known", args.beam, args.window) for arm in arms}
    metrics: dict = {"n": len(test), "fold": args.fold, "beam": args.beam, "window": args.window, "slack": args.slack,
                     "arms": {a: score(test, p) for a, p in preds.items()}}
    correct = {a: correct_top1(test, p) for a, p in preds.items()}
    metrics["mcnemar"] = {}
    for i, a in enumerate(arms):
        for b in arms[i + 1 :]:
            r = mcnemar_exact(correct[a], correct[b])
            metrics["mcnemar"][f"{a} vs {b}"] = {"a_only": r.a_only, "b_only": r.b_only, "p": r.pvalue}
    metrics["forwards_per_gap"] = {a: scorers[a].forwards / max(1, len(test)) for a in arms}  # type: ignore[attr-defined]
    main_arm = next((a for a in arms if a in ("finetuned", "pretrained")), arms[0])
    metrics["main_arm"] = main_arm
    for mode in ("range", "unknown"):
        metrics[f"width_{mode}"] = score(test, run_arm(scorers[main_arm], test, mode, args.beam, args.window,
                                                       slack=args.slack))
    dev_preds = run_arm(scorers[main_arm], dev, "known", args.beam, args.window)
    cal = calibrate(dev, dev_preds, test, preds[main_arm])
    diagram = cal.pop("_diagram")
    metrics["calibration"] = cal
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False), encoding="utf-8")
    (out / "results.md").write_text(markdown(metrics), encoding="utf-8")
    plots(metrics, diagram, out)
    print(markdown(metrics))
    return 0


def markdown(m: dict) -> str:
    lines = [f"# Restoration, fold {m['fold']} ({m['n']} gaps, beam {m['beam']})", "",
             "| arm | CER % | top-1 % | top-20 % |", "|---|---|---|---|"]
    for arm, s in m["arms"].items():
        o = s["overall"]
        lines.append(f"| {arm} | {o['cer']:.1f} | {o['top1']:.1f} | {o['top20']:.1f} |")
    for mode in ("range", "unknown"):
        o = m[f"width_{mode}"]["overall"]
        lines.append(f"| {m.get('main_arm', 'pretrained')}, width {'L±' + str(m['slack']) if mode == 'range' else 'hidden'} | {o['cer']:.1f} | {o['top1']:.1f} | {o['top20']:.1f} |")
    lines += ["", "| L | " + " | ".join(f"{a} CER" for a in m["arms"]) + " |", "|---" * (len(m["arms"]) + 1) + "|"]
    for L in sorted(next(iter(m["arms"].values()))["per_L"]):
        lines.append(f"| {L} | " + " | ".join(f"{s['per_L'][L]['cer']:.1f}" for s in m["arms"].values()) + " |")
    lines += ["", "McNemar (exact, top-1): " + "; ".join(f"{k}: {v['a_only']}/{v['b_only']}, p = {v['p']:.3g}" for k, v in m["mcnemar"].items())]
    c = m["calibration"]
    lines += ["", f"Calibration: T = {c['temperature']:.2f}, ECE {c['ece_raw']:.3f} → {c['ece_calibrated']:.3f}; "
              "top-1 accuracy at coverage " + ", ".join(f"{k}: {v:.1%}" for k, v in c["coverage"].items())]
    return "\n".join(lines) + "\n"


def plots(m: dict, diagram: object, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for arm, s in m["arms"].items():
        Ls = sorted(s["per_L"])
        ax.plot(Ls, [s["per_L"][L]["cer"] for L in Ls], marker="o", label=arm)
    ax.set_xlabel("gap length L (characters)")
    ax.set_ylabel("CER %")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "cer_by_L.png", dpi=120)
    fig, ax = plt.subplots(figsize=(4, 4))
    used = diagram.count > 0  # type: ignore[attr-defined]
    ax.plot([0, 1], [0, 1], "k--", lw=1)
    ax.plot(diagram.confidence[used], diagram.accuracy[used], marker="o")  # type: ignore[attr-defined]
    ax.set_xlabel("confidence (top candidate, calibrated)")
    ax.set_ylabel("top-1 accuracy")
    fig.tight_layout()
    fig.savefig(out / "reliability.png", dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("samples")
    s.add_argument("--mirror", required=True)
    s.add_argument("--fold", type=int, default=3)
    s.add_argument("--per-length", type=int, default=300)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--limit", type=int, default=None, help="read at most this many records")
    s.add_argument("--corpus", default=None, help="JSON-lines documents {id, text} (e.g. inscriptions, held out by PHI digit)")
    s.add_argument("--out", required=True)
    e = sub.add_parser("evaluate")
    e.add_argument("--samples", required=True)
    e.add_argument("--mirror", required=True)
    e.add_argument("--fold", type=int, default=3)
    e.add_argument("--model", default=None)
    e.add_argument("--beam", type=int, default=20)
    e.add_argument("--window", type=int, default=512)
    e.add_argument("--ngram-docs", type=int, default=20000)
    e.add_argument("--threads", type=int, default=1)
    e.add_argument("--slack", type=int, default=2, help="range widths L±slack")
    e.add_argument("--quick", action="store_true")
    e.add_argument("--quick-per-length", type=int, default=2)
    e.add_argument("--quick-window", type=int, default=48, help="context letters per side in --quick mode")
    e.add_argument("--overlay", default=None, help="restoration overlay (finetune.py output) for the finetuned arm")
    e.add_argument("--arms", default=None, help=f"comma-separated subset of {','.join(ARMS)}")
    e.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.cmd == "samples":
        data = make_samples(args.mirror, args.fold, args.per_length, args.seed, args.limit, args.corpus)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for split, rows in data.items():
            (out / f"{split}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            print(f"{split}: {len(rows)} samples")
        return 0
    return evaluate(args)


if __name__ == "__main__":
    sys.exit(main())
