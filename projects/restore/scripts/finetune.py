"""Fine-tune the backbone + heads for restoration on open documentary text (a small loop).

Data: ``iter_records("ddbdp", mirror)`` minus the held-out TM digits (``fold`` = test,
``fold + 1`` = dev), mixed with literary text (``perseus``) at ``--literary-ratio`` against
forgetting. Noise (span-heavy, after the paper's restoration fine-tune): per sequence one
pattern — contiguous span 0.6 (geometric length, mean 3.5, max 20, ignores word edges),
whole word 0.2, iid scattered letters 0.2 — at a rate t ~ Beta(2, 4) clipped to
[0.05, 0.95]; masked letters get boundary/diacritic/punctuation UNKNOWN; loss = mean CE
on masked letters + 0.1 × boundary CE there. ``--quick`` runs a few CPU steps.

    python scripts/finetune.py --mirror M --fold 3 --out training/fold_3 [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from pathlib import Path

import numpy as np
import torch


def records(mirror: str, fold: int, literary_ratio: float, limit: int | None, seed: int):
    from stoicheia_spacy.corpus import iter_records

    held = {fold, (fold + 1) % 10}
    rng = np.random.default_rng(seed)
    docs = (r for r in iter_records("ddbdp", mirror, limit)
            if (m := re.search(r"(\d)$", str(r.get("work", "")))) and int(m.group(1)) not in held)
    lit = iter_records("perseus", mirror, limit)
    for doc in docs:
        yield doc["text"]
        if rng.random() < literary_ratio:
            rec = next(lit, None)
            if rec is not None:
                yield rec["text"][:2000]


def corrupt(planes, rng: np.random.Generator):
    from stoicheia_spacy.alphabet import BND_UNKNOWN, DIA_UNKNOWN, MASK_ID, PUNCT_UNKNOWN

    n = len(planes)
    t = float(np.clip(rng.beta(2, 4), 0.05, 0.95))
    mask = np.zeros(n, dtype=bool)
    kind = rng.choice(3, p=[0.6, 0.2, 0.2])
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
    else:
        mask = rng.random(n) < t
    if not mask.any():
        mask[int(rng.integers(0, n))] = True
    inp = {"input_ids": planes.letters.astype(np.int64).copy(), "boundary": planes.boundary.astype(np.int64).copy(),
           "dia": planes.diacritics.astype(np.int64).copy(), "punct": planes.punctuation.astype(np.int64).copy()}
    inp["input_ids"][mask] = MASK_ID
    inp["boundary"][mask] = BND_UNKNOWN
    inp["dia"][mask] = DIA_UNKNOWN
    inp["punct"][mask] = PUNCT_UNKNOWN
    return inp, mask


def main(argv: list[str] | None = None) -> int:
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import load_backbone, save_backbone
    from stoicheia_spacy.codec import encode_planes

    p = argparse.ArgumentParser()
    p.add_argument("--mirror", required=True)
    p.add_argument("--fold", type=int, default=3)
    p.add_argument("--init", default=None, help="backbone to start from (default: the embedded model)")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--literary-ratio", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="5 steps of 4 × 128 letters on 200 records")
    args = p.parse_args(argv)
    if args.quick:
        args.steps, args.batch, args.seq = 5, 4, 128
    torch.manual_seed(args.seed)
    torch.set_num_threads(1 if args.quick else torch.get_num_threads())
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_backbone(args.init or str(default_model_dir())).to(device).float()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    rng = np.random.default_rng(args.seed)
    stream = itertools.cycle(records(args.mirror, args.fold, args.literary_ratio, 200 if args.quick else None, args.seed))
    for step in range(1, args.steps + 1):
        rows, masks = [], []
        while len(rows) < args.batch:
            planes = encode_planes(next(stream))
            if len(planes) < 16:
                continue
            s = int(rng.integers(0, max(1, len(planes) - args.seq)))
            window = planes[s : s + args.seq]
            inp, mask = corrupt(window, rng)
            rows.append((inp, window))
            masks.append(mask)
        T = max(len(m) for m in masks)
        batch = {k: torch.full((args.batch, T), fill, dtype=torch.long)
                 for k, fill in (("input_ids", 26), ("boundary", 3), ("dia", 48), ("punct", 6))}
        gold = torch.full((args.batch, T), -100, dtype=torch.long)
        gold_b = torch.full((args.batch, T), -100, dtype=torch.long)
        for r, ((inp, window), mask) in enumerate(zip(rows, masks, strict=True)):
            n = len(mask)
            for k in batch:
                batch[k][r, :n] = torch.from_numpy(inp[k])
            gold[r, :n] = torch.from_numpy(np.where(mask, window.letters.astype(np.int64), -100).astype(np.int64))
            gold_b[r, :n] = torch.from_numpy(np.where(mask, np.minimum(window.boundary.astype(np.int64), 2), -100).astype(np.int64))
        seg = (batch["input_ids"] == 26).long()
        out = model(*(batch[k].to(device) for k in ("input_ids", "boundary", "dia", "punct")), seg_id=seg.to(device))
        loss = torch.nn.functional.cross_entropy(out.char.float().flatten(0, 1), gold.to(device).flatten())
        loss = loss + 0.1 * torch.nn.functional.cross_entropy(out.boundary.float().flatten(0, 1), gold_b.to(device).flatten())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % max(1, args.steps // 20) == 0 or step == 1:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
    save_backbone(model.cpu(), Path(args.out), dtype=torch.bfloat16)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
