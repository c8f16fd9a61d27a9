"""``python -m stoicheia_lab.bench quality``: masked bits-per-character on held-out text.

Prints, on the same held-out letters and the same fixed masks, the masked bpc of

* the shipped backbone (``--source``, default: the embedded ``grc_stoicheia_doc_clean``),
* a random-init backbone of the same shape (the control arm), and
* an interpolated Kneser-Ney character n-gram LM trained on the pretraining text,

plus each one's ratio to the n-gram baseline. Protocol: 15 % of the letters are masked
iid with a fixed seed; at a masked letter its diacritics, boundary and punctuation
inputs are hidden too (as in pretraining); probabilities are renormalised over the 24
letters. The n-gram model scores each candidate letter by all n-grams that contain it
(a bidirectional conditional under a left-to-right model); it sees word boundaries
around masked letters, a small advantage over the backbone.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.codec import CharPlanes, encode_planes
from stoicheia_spacy.restore.char_ngram import SPACE, UNK, CharNgramLM

LN2 = math.log(2.0)


def _records(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_planes(path: Path, max_letters: int, skip_ids: set[str] | None = None) -> list[CharPlanes]:
    """Encode records of a jsonl file (``{"id", "text"}``) until ``max_letters``."""
    out: list[CharPlanes] = []
    total = 0
    for rec in _records(path):
        if skip_ids and rec.get("id") in skip_ids:
            continue
        planes = encode_planes(rec["text"])
        if len(planes) == 0:
            continue
        planes = planes[: max_letters - total]
        out.append(planes)
        total += len(planes)
        if total >= max_letters:
            break
    return out


def symbols(planes: CharPlanes, masked: np.ndarray | None = None) -> np.ndarray:
    """Letter ids with ``SPACE`` after every word-final letter (``UNK`` where masked)."""
    letters = planes.letters.astype(np.int64)
    if masked is not None:
        letters = np.where(masked, UNK, letters)
    ends = planes.boundary.astype(np.int64) >= A.BND_WORD_END
    ends &= planes.boundary != A.BND_UNKNOWN
    seq = np.empty(len(letters) + int(ends.sum()), dtype=np.int64)
    pos = np.arange(len(letters)) + np.concatenate([[0], np.cumsum(ends)[:-1]])
    seq[:] = SPACE
    seq[pos] = letters
    return seq, pos  # type: ignore[return-value]


def ngram_bpc(lm: CharNgramLM, dev: list[CharPlanes], masks: list[np.ndarray]) -> float:
    """Masked bpc of the n-gram model."""
    nll, n = 0.0, 0
    for planes, masked in zip(dev, masks, strict=True):
        seq, pos = symbols(planes, masked)
        where = pos[masked]
        if len(where) == 0:
            continue
        logp = lm.masked_logprobs(seq, where)
        nll -= float(logp[np.arange(len(where)), planes.letters[masked].astype(np.int64)].sum())
        n += len(where)
    return nll / n / LN2


def model_bpc(model: object, dev: list[CharPlanes], masks: list[np.ndarray], chunk: int = 2048) -> float:
    """Masked bpc of a backbone (chunks of ``chunk`` letters, one batch per document)."""
    import torch

    from stoicheia_spacy.backbone import planes_to_tensors

    nll, n = 0.0, 0
    for planes, masked in zip(dev, masks, strict=True):
        hidden = planes.copy()
        hidden.letters[masked] = A.MASK_ID
        hidden.diacritics[masked] = A.DIA_UNKNOWN
        hidden.boundary[masked] = A.BND_UNKNOWN
        hidden.punctuation[masked] = A.PUNCT_UNKNOWN
        pieces = [hidden[i : i + chunk] for i in range(0, len(hidden), chunk)]
        batch = planes_to_tensors(pieces)
        with torch.inference_mode():
            out = model(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])  # type: ignore[operator]
        logits = out.char[..., : A.N_ALPHA].float()
        logp = torch.log_softmax(logits, dim=-1)
        rows = [logp[i, : len(p)] for i, p in enumerate(pieces)]
        flat = torch.cat(rows).numpy()
        nll -= float(flat[np.flatnonzero(masked), planes.letters[masked].astype(np.int64)].sum())
        n += int(masked.sum())
    return nll / n / LN2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench quality", description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=None, help="backbone checkpoint directory (default: the embedded model)")
    parser.add_argument("--dev", type=Path, default=None, help="held-out jsonl (default: the model's dev_sample.jsonl)")
    parser.add_argument("--train", type=Path, default=Path("projects/pretrain/corpus/doc_clean.jsonl"),
                        help="pretraining text for the n-gram baseline (built by projects/pretrain)")
    parser.add_argument("--dev-letters", type=int, default=30_000)
    parser.add_argument("--train-letters", type=int, default=0, help="cap on n-gram training letters (0 = all)")
    parser.add_argument("--order", type=int, default=6)
    parser.add_argument("--mask-rate", type=float, default=0.15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)

    import torch

    from stoicheia_spacy.backbone import StoicheiaEncoder, load_backbone

    if args.threads:
        torch.set_num_threads(args.threads)
    model_dir = args.source or default_model_dir()
    dev_path = args.dev or model_dir / "dev_sample.jsonl"
    dev = load_planes(dev_path, args.dev_letters)
    dev_ids = {rec["id"] for rec in _records(dev_path)}
    rng = np.random.default_rng(args.seed)
    masks = [rng.random(len(p)) < args.mask_rate for p in dev]
    n_masked = int(sum(int(m.sum()) for m in masks))
    print(f"held-out: {sum(len(p) for p in dev):,} letters from {dev_path}, {n_masked:,} masked")

    rows: list[tuple[str, float, float]] = []
    model = load_backbone(model_dir).eval()
    t0 = time.perf_counter()
    rows.append(("shipped backbone", model_bpc(model, dev, masks), time.perf_counter() - t0))
    torch.manual_seed(args.seed)
    control = StoicheiaEncoder(model.config).eval()
    t0 = time.perf_counter()
    rows.append(("random-init control", model_bpc(control, dev, masks), time.perf_counter() - t0))
    if args.train.is_file():
        t0 = time.perf_counter()
        train = load_planes(args.train, args.train_letters or 10**12, skip_ids=dev_ids)
        lm = CharNgramLM(order=args.order).fit(symbols(p)[0] for p in train)
        bpc = ngram_bpc(lm, dev, masks)
        rows.append((f"{args.order}-gram KN ({sum(len(p) for p in train) / 1e6:.1f}M letters)", bpc, time.perf_counter() - t0))
    else:
        print(f"n-gram baseline skipped: no training text at {args.train} (run projects/pretrain corpus)")
    ref = rows[-1][1]
    print(f"{'model':<36} {'masked bpc':>10} {'÷ last row':>10} {'seconds':>8}")
    for name, bpc, secs in rows:
        print(f"{name:<36} {bpc:>10.4f} {bpc / ref:>10.3f} {secs:>8.1f}")
    print(f"(uniform over 24 letters = {math.log2(A.N_ALPHA):.4f} bpc)")
    if args.json is not None:
        report = {
            "source": str(model_dir),
            "dev": str(dev_path),
            "held_out_letters": sum(len(p) for p in dev),
            "masked": n_masked,
            "mask_rate": args.mask_rate,
            "seed": args.seed,
            "rows": [{"model": name, "bpc": round(bpc, 4), "seconds": round(secs, 1)} for name, bpc, secs in rows],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0
