"""Fine-tune the backbone + heads for restoration on open documentary text (a small loop).

Data: ``iter_records("ddbdp", mirror)`` (or ``--corpus`` JSON lines ``{id, text}``, e.g. a
user's inscriptions held out by PHI number) minus the held-out identifier digits (``fold`` = test,
``fold + 1`` = dev), mixed with literary text (``perseus``) at ``--literary-ratio`` against
forgetting. Noise (span-heavy, after the paper's restoration fine-tune): per sequence one
pattern — contiguous span 0.5 (geometric length, mean 3.5, max 20, ignores word edges),
whole word 0.15, iid scattered letters 0.15 at a rate t ~ Beta(2, 4) clipped to [0.05, 0.95],
or elastic spans 0.2 (L letters behind M >= L slots, targets letters then BLANK); masked letters get boundary/diacritic/punctuation UNKNOWN; loss = mean CE
on masked letters + 0.1 × boundary CE there. ``--quick`` runs a few CPU steps.

Only the top ``--top-layers`` blocks, the output norm and the heads are trained (the rest
is frozen, so a CPU step costs about 1.7 forwards); the result is written as a restoration
overlay (:mod:`stoicheia_spacy.backbone.overlay`): OUT/overlay.safetensors holds the best
weights by masked-letter accuracy on fixed dev windows (TM digit ``fold + 1``), and
OUT/train_report.json the curve. ``--top-layers 0`` with ``--full`` trains everything and
also writes a whole backbone (config.json + model.safetensors).

    python scripts/finetune.py --mirror M --fold 3 --out training/fold_3 [--minutes 45] [--quick]
    python scripts/finetune.py --config ../../assets/configs/finetune/restore.cfg --mirror M --out DIR

``--config`` reads a config of record (its ``[finetune]`` section gives the option values,
e.g. ``assets/configs/finetune/restore.cfg``); options given on the command line win.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import torch


def tm_digit(record: dict) -> int | None:
    """Last digit of the document identifier (``work``: the TM number of a papyrus; else
    ``id``: e.g. the PHI number of an inscription in a user's corpus), or None."""
    m = re.search(r"(\d)\W*$", str(record.get("work") or record.get("id") or ""))
    return int(m.group(1)) if m else None


def documents(mirror: str, limit: int | None, corpus: str | None = None):
    """Documentary records: the DDbDP papyri of the mirror, or a user's JSON-lines corpus
    (``{"id": "PHI 12345", "text": "..."}`` per line, e.g. inscriptions) when ``corpus`` is given."""
    if corpus is None:
        from stoicheia_lab.corpus import iter_records

        yield from iter_records("ddbdp", mirror, limit)
        return
    with open(corpus, encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if limit is not None and n >= limit:
                return
            if line.strip():
                record = json.loads(line)
                if not isinstance(record.get("text"), str) or "id" not in record:
                    raise SystemExit(f"{corpus}:{n + 1}: each line needs 'id' and 'text'")
                yield record


def records(mirror: str, fold: int, literary_ratio: float, limit: int | None, seed: int, corpus: str | None = None):
    from stoicheia_lab.corpus import iter_records

    held = {fold, (fold + 1) % 10}
    rng = np.random.default_rng(seed)
    docs = (r for r in documents(mirror, limit, corpus) if (d := tm_digit(r)) is not None and d not in held)
    lit = iter_records("perseus", mirror, limit)
    for doc in docs:
        yield doc["text"]
        if rng.random() < literary_ratio:
            rec = next(lit, None)
            if rec is not None:
                yield rec["text"][:2000]


def corrupt(planes, rng: np.random.Generator, elastic_slots: int = 12):
    """Corrupt one window: model inputs and gold letters / boundaries (-100 = unscored).

    Patterns: span 0.5, whole word 0.15, scattered letters 0.15, elastic 0.2 (one to three
    spans of L = 1..10 letters each replaced by M = L..``elastic_slots`` MASK slots whose
    targets are the letters then BLANK, as in pretraining: this teaches unknown widths)."""
    from stoicheia_spacy.alphabet import BLANK_ID, BND_UNKNOWN, DIA_UNKNOWN, MASK_ID, PUNCT_UNKNOWN

    n = len(planes)
    t = float(np.clip(rng.beta(2, 4), 0.05, 0.95))
    mask = np.zeros(n, dtype=bool)
    extra = np.zeros(n, dtype=np.int64)  # BLANK slots inserted after position i
    kind = rng.choice(4, p=[0.5, 0.15, 0.15, 0.2])
    if kind == 0:
        while mask.mean() < t:
            length = min(20, int(rng.geometric(1 / 3.5)))
            s = int(rng.integers(0, max(1, n - length)))
            mask[s : s + length] = True
    elif kind == 1:
        ends = np.flatnonzero(planes.boundary > 0)
        starts = np.concatenate([[0], ends[:-1] + 1])
        for s, e in zip(starts, ends, strict=True):
            if rng.random() < t:
                mask[s : e + 1] = True
    elif kind == 2:
        mask = rng.random(n) < t
    else:
        for _ in range(int(rng.integers(1, 4))):
            length = int(rng.integers(1, 11))
            s = int(rng.integers(0, max(1, n - length)))
            if mask[max(0, s - 1) : s + length + 1].any():
                continue
            mask[s : s + length] = True
            end = min(n, s + length) - 1
            extra[end] = int(rng.integers(0, max(1, elastic_slots - (end - s + 1)) + 1))
    if not mask.any():
        mask[int(rng.integers(0, n))] = True
    inp = {"input_ids": planes.letters.astype(np.int64).copy(), "boundary": planes.boundary.astype(np.int64).copy(),
           "dia": planes.diacritics.astype(np.int64).copy(), "punct": planes.punctuation.astype(np.int64).copy()}
    inp["input_ids"][mask] = MASK_ID
    inp["boundary"][mask] = BND_UNKNOWN
    inp["dia"][mask] = DIA_UNKNOWN
    inp["punct"][mask] = PUNCT_UNKNOWN
    gold = np.where(mask, planes.letters.astype(np.int64), -100)
    gold_b = np.where(mask, np.minimum(planes.boundary.astype(np.int64), 2), -100)
    if extra.any():  # insert the BLANK slots (vectorised: repeat each position 1 + extra times)
        reps = 1 + extra
        idx = np.repeat(np.arange(n), reps)
        first = np.concatenate([[True], idx[1:] != idx[:-1]])
        inp = {k: v[idx] for k, v in inp.items()}
        inp["input_ids"][~first] = MASK_ID
        inp["boundary"][~first] = BND_UNKNOWN
        inp["dia"][~first] = DIA_UNKNOWN
        inp["punct"][~first] = PUNCT_UNKNOWN
        gold = np.where(first, gold[idx], BLANK_ID)
        gold_b = np.where(first, gold_b[idx], -100)
        # the word break after a span's last letter now belongs to that letter's copy only
    return inp, gold, gold_b


def make_batch(windows: list, rng: np.random.Generator) -> tuple[dict, torch.Tensor, torch.Tensor]:
    """Corrupt each window; padded model inputs, gold letters and gold boundaries (-100 = unscored)."""
    from stoicheia_spacy.alphabet import BND_UNKNOWN, DIA_UNKNOWN, PAD_ID, PUNCT_UNKNOWN

    n_rows = len(windows)
    pads = (("input_ids", PAD_ID), ("boundary", BND_UNKNOWN), ("dia", DIA_UNKNOWN), ("punct", PUNCT_UNKNOWN))
    rows = [corrupt(window, rng) for window in windows]
    T = max(len(g) for _, g, _ in rows)
    batch = {k: torch.full((n_rows, T), fill, dtype=torch.long) for k, fill in pads}
    gold = torch.full((n_rows, T), -100, dtype=torch.long)
    gold_b = torch.full((n_rows, T), -100, dtype=torch.long)
    for r, (inp, g, gb) in enumerate(rows):
        n = len(g)
        for k in batch:
            batch[k][r, :n] = torch.from_numpy(inp[k])
        gold[r, :n] = torch.from_numpy(g)
        gold_b[r, :n] = torch.from_numpy(gb)
    batch["seg_id"] = (batch["input_ids"] == PAD_ID).long()
    return batch, gold, gold_b


def run(model: torch.nn.Module, batch: dict, device: str):
    return model(*(batch[k].to(device) for k in ("input_ids", "boundary", "dia", "punct")),
                 seg_id=batch["seg_id"].to(device))


def windows_of(texts, seq: int, rng: np.random.Generator):
    """Endless random windows of ``seq`` letters from the texts (short texts skipped)."""
    from stoicheia_spacy.codec import encode_planes

    for text in texts:
        planes = encode_planes(text)
        if len(planes) < 16:
            continue
        s = int(rng.integers(0, max(1, len(planes) - seq)))
        yield planes[s : s + seq]


def dev_batches(mirror: str, fold: int, n: int, seq: int, batch: int, seed: int, limit: int | None = None,
                corpus: str | None = None) -> list:
    """Fixed corrupted dev batches from documents whose identifier digit is ``fold + 1``."""
    rng = np.random.default_rng(seed + 1)
    texts = (r["text"] for r in documents(mirror, limit, corpus) if tm_digit(r) == (fold + 1) % 10)
    wins = list(itertools.islice(windows_of(texts, seq, rng), n))
    return [make_batch(wins[i : i + batch], rng) for i in range(0, len(wins), batch)]


@torch.no_grad()
def evaluate(model: torch.nn.Module, batches: list, device: str) -> dict[str, float]:
    """Masked-letter accuracy and cross-entropy (nats) on the fixed dev batches."""
    model.eval()
    right = total = 0
    loss = 0.0
    for batch, gold, _ in batches:
        logits = run(model, batch, device).char.float().cpu()
        scored = gold != -100
        right += int((logits.argmax(-1)[scored] == gold[scored]).sum())
        total += int(scored.sum())
        loss += float(torch.nn.functional.cross_entropy(logits[scored], gold[scored], reduction="sum"))
    model.train()
    return {"acc": right / max(total, 1), "ce": loss / max(total, 1), "letters": total}


def config_defaults(parser: argparse.ArgumentParser, path: str) -> dict:
    """The ``[finetune]`` section of a spaCy-style config file, checked against the options."""
    from thinc.api import Config

    section = dict(Config().from_disk(path, interpolate=False).get("finetune", {}))
    known = {a.dest for a in parser._actions}
    unknown = sorted(set(section) - known - {"config"})
    if unknown:
        raise SystemExit(f"{path}: unknown [finetune] options {unknown}; known: {sorted(known)}")
    for action in parser._actions:
        if action.dest in section:
            action.required = False
    return section


def main(argv: list[str] | None = None) -> int:
    from tqdm import tqdm

    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import load_backbone, save_backbone
    from stoicheia_spacy.backbone.overlay import fingerprint, save_overlay, trainable_names

    p = argparse.ArgumentParser()
    p.add_argument("--mirror", required=True)
    p.add_argument("--fold", type=int, default=3)
    p.add_argument("--init", default=None, help="backbone to start from (default: the embedded model)")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--minutes", type=float, default=0.0, help="stop after this many minutes (0: no limit)")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--top-layers", type=int, default=4, help="blocks trained (counted from the top)")
    p.add_argument("--full", action="store_true", help="train every tensor; also write a whole backbone")
    p.add_argument("--corpus", default=None, help="JSON-lines documents {id, text} instead of the DDbDP papyri")
    p.add_argument("--literary-ratio", type=float, default=0.3)
    p.add_argument("--dev-windows", type=int, default=96)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="5 steps of 4 × 128 letters on 200 records")
    p.add_argument("--config", default=None,
                   help="a config of record: its [finetune] section sets the defaults (option names with _); "
                        "command-line options still override it")
    pre, _ = p.parse_known_args(argv)
    if pre.config:
        p.set_defaults(**config_defaults(p, pre.config))
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.batch, args.seq, args.dev_windows, args.eval_every = 5, 4, 128, 8, 5
    torch.manual_seed(args.seed)
    torch.set_num_threads(1 if args.quick else (args.threads or torch.get_num_threads()))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_backbone(args.init or str(default_model_dir())).to(device).float()
    names = [n for n, _ in model.named_parameters()] if args.full else trainable_names(model, args.top_layers)
    for name, param in model.named_parameters():
        param.requires_grad_(name in names)
    params = [prm for _, prm in model.named_parameters() if prm.requires_grad]
    print(f"training {sum(prm.numel() for prm in params):,} of {sum(prm.numel() for prm in model.parameters()):,} "
          f"parameters ({'all' if args.full else f'top {args.top_layers} blocks + norm + heads'})", flush=True)
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / args.warmup))
    rng = np.random.default_rng(args.seed)
    limit = 200 if args.quick else None
    dev = dev_batches(args.mirror, args.fold, args.dev_windows, args.seq, args.batch, args.seed, limit, args.corpus)
    texts = itertools.cycle(records(args.mirror, args.fold, args.literary_ratio, limit, args.seed, args.corpus))
    stream = windows_of(texts, args.seq, rng)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    curve = [{"step": 0, **evaluate(model, dev, device)}]
    best = curve[0]["acc"]
    print(f"dev before fine-tuning: acc {best:.4f} ce {curve[0]['ce']:.3f} on {curve[0]['letters']} letters", flush=True)
    base_fp = fingerprint(model, names)  # the frozen part never changes: hash it once
    save_overlay(model, names, out, extra={"top_layers": str(args.top_layers), "step": "0"}, base_fingerprint=base_fp)
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else float("inf")
    model.train()
    bar = tqdm(range(1, args.steps + 1), desc="restoration fine-tune", unit="step")
    step = 0
    for step in bar:
        batch, gold, gold_b = make_batch([next(stream) for _ in range(args.batch)], rng)
        result = run(model, batch, device)
        loss = torch.nn.functional.cross_entropy(result.char.float().flatten(0, 1), gold.to(device).flatten())
        loss = loss + 0.1 * torch.nn.functional.cross_entropy(result.boundary.float().flatten(0, 1), gold_b.to(device).flatten())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        bar.set_postfix(loss=f"{loss.item():.3f}", best=f"{best:.4f}")
        done = step == args.steps or time.monotonic() >= deadline
        if step % args.eval_every == 0 or done:
            point = {"step": step, **evaluate(model, dev, device)}
            curve.append(point)
            tqdm.write(f"step {step}: dev acc {point['acc']:.4f} ce {point['ce']:.3f}")
            if point["acc"] > best:
                best = point["acc"]
                save_overlay(model, names, out, extra={"top_layers": str(args.top_layers), "step": str(step)},
                             base_fingerprint=base_fp)
        if done:
            break
    if args.full:
        save_backbone(model.cpu(), out, dtype=torch.bfloat16)
    report = {"fold": args.fold, "held_out_digits": [args.fold, (args.fold + 1) % 10], "steps": step,
              "minutes": args.minutes, "batch": args.batch, "seq": args.seq, "lr": args.lr,
              "top_layers": None if args.full else args.top_layers, "best_dev_acc": best, "curve": curve}
    (out / "train_report.json").write_text(json.dumps(report, indent=1))
    print(f"best dev masked-letter accuracy {best:.4f} (before: {curve[0]['acc']:.4f}); overlay in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
