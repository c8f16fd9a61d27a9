"""Letters/s of the backbone at the released shape per ``precision``, against float32 in the same run.

``stoicheia bench released-shape [--depths 8,32] [--lengths 2048,8192]
[--precisions float32,int8,bfloat16] [--threads 2] [--rounds 3] [--out JSON]``

The released width (d 1024, 16 heads, window 256) at each depth, random weights of that
shape (seeded; timing does not depend on the values), one document of ``length`` random
letters per forward, ``--threads`` torch threads. The float32 arm is the forward every
released checkpoint runs today (:class:`~stoicheia_spacy.backbone.StoicheiaEncoder`, float32
weights); each other arm is :func:`~stoicheia_spacy.backbone.precision.precision_view` of the
same module. Arms alternate inside every round (after one warm-up forward each), so machine
load hits them alike; reported: the median seconds per forward, letters/s, the ratio to
float32 and the largest absolute difference of the letter logits from float32 plus the share
of letters whose top letter changes (the decisions themselves on real fixtures are checked by
``tests/release`` under each precision).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
from stoicheia_spacy.backbone.precision import PRECISIONS, precision_view

RELEASED: dict[str, Any] = {"d_model": 1024, "n_heads": 16, "char_window": 256}


def _inputs(length: int, seed: int) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 26, (1, length), generator=generator)
    zeros = torch.zeros_like(ids)
    return ids, zeros, zeros, zeros


def _forward(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> tuple[float, torch.Tensor]:
    with torch.inference_mode():
        start = time.perf_counter()
        out = module(*inputs)
        return time.perf_counter() - start, out.char


def measure(depth: int, lengths: list[int], precisions: list[str], rounds: int, seed: int = 0) -> list[dict[str, Any]]:
    """One row per (length, precision) at ``depth`` (module doc)."""
    torch.manual_seed(seed)
    model = StoicheiaEncoder(StoicheiaConfig(depth=depth, **RELEASED)).eval()
    arms = {name: precision_view(model, name) for name in precisions}
    rows = []
    for length in lengths:
        inputs = _inputs(length, seed)
        times: dict[str, list[float]] = {name: [] for name in arms}
        logits: dict[str, torch.Tensor] = {}
        for name, module in arms.items():  # warm-up (and the logits compared)
            logits[name] = _forward(module, inputs)[1]
        for _ in range(rounds):
            for name, module in arms.items():
                times[name].append(_forward(module, inputs)[0])
        ref = logits.get("float32")
        base = statistics.median(times["float32"]) if "float32" in times else None
        for name in arms:
            seconds = statistics.median(times[name])
            row: dict[str, Any] = {"depth": depth, "letters": length, "precision": name,
                                   "seconds": round(seconds, 4), "seconds_all": [round(t, 4) for t in times[name]],
                                   "letters_per_s": round(length / seconds, 1)}
            if base is not None and ref is not None:
                row["speedup_vs_float32"] = round(base / seconds, 3)
                row["max_abs_logit_diff"] = float((logits[name].float() - ref).abs().max())
                row["top_letter_changed"] = float((logits[name].argmax(-1) != ref.argmax(-1)).float().mean())
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench released-shape", description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="8,32", help="comma-separated depths [8,32]")
    parser.add_argument("--lengths", default="2048,8192", help="comma-separated document lengths [2048,8192]")
    parser.add_argument("--precisions", default="float32,float32-fused,int8,bfloat16",
                        help=f"comma-separated, from {','.join(PRECISIONS)}; float32 is the reference")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    precisions = [p for p in args.precisions.split(",") if p]
    if "float32" not in precisions:
        precisions.insert(0, "float32")
    torch.set_num_threads(args.threads)
    rows = []
    for depth in (int(d) for d in args.depths.split(",")):
        rows.extend(measure(depth, [int(n) for n in args.lengths.split(",")], precisions, args.rounds))
    result = {"benchmark": "released-shape", "shape": RELEASED, "threads": args.threads, "rounds": args.rounds,
              "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
              "machine": platform.machine(), "rows": rows,
              "speedup_vs_float32": {f"{r['precision']}@d{r['depth']}x{r['letters']}": r.get("speedup_vs_float32")
                                     for r in rows if r["precision"] != "float32"}}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result["speedup_vs_float32"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
