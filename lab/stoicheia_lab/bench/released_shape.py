"""Letters/s of the backbone at the released shape per ``precision``, against float32 in the same run.

``stoicheia bench released-shape [--depths 8,32] [--lengths 2048,8192]
[--precisions float32,int8,bfloat16] [--threads 2] [--rounds 3] [--out JSON]``

The released width (d 1024, 16 heads, window 256) at each depth, random weights of that
shape (seeded; timing does not depend on the values), one document of ``length`` random
letters per forward, ``--threads`` torch threads. The float32 arm is the forward every
released checkpoint runs today (:class:`~stoicheia_spacy.backbone.StoicheiaEncoder`, float32
weights); each other arm is :func:`~stoicheia_spacy.backbone.precision.precision_view` of the
same module. Arms alternate inside every round (after one short warm-up forward each, of
``WARMUP`` letters, which packs weights and primes kernels), so machine load hits them alike;
reported per cell: the median seconds per forward, letters/s, ``speedup_vs_float32``, the
median over rounds of float32's time divided by the arm's time in the same round (a paired
ratio, robust to load that changes between rounds), the ratio of the medians beside it, the
same paired median of process CPU seconds (``cpu_speedup_vs_float32``: less sensitive to other
jobs taking the cores, though threads that spin while waiting count), and
the largest absolute difference of the letter logits from float32 (first round) plus the
share of letters whose top letter changes (the decisions themselves on real fixtures are
checked by ``tests/release`` under each precision). ``--rounds-at`` lowers the rounds of the
slow cells (``32x8192:1``; ``:0`` skips the cell); the rounds each cell ran are in its row.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import torch

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
from stoicheia_spacy.backbone.precision import PRECISIONS, precision_view

RELEASED: dict[str, Any] = {"d_model": 1024, "n_heads": 16, "char_window": 256}
#: Letters of the warm-up forward of each arm.
WARMUP = 512


def _inputs(length: int, seed: int) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 26, (1, length), generator=generator)
    zeros = torch.zeros_like(ids)
    return ids, zeros, zeros, zeros


def _forward(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> tuple[float, float, torch.Tensor]:
    """Wall seconds, process CPU seconds and letter logits of one forward."""
    with torch.inference_mode():
        start, cpu = time.perf_counter(), time.process_time()
        out = module(*inputs)
        return time.perf_counter() - start, time.process_time() - cpu, out.char


def measure(depth: int, lengths: list[int], precisions: list[str], rounds: int | dict[int, int],
            seed: int = 0) -> list[dict[str, Any]]:
    """One row per (length, precision) at ``depth`` (module doc); ``rounds`` per length when a dict."""
    torch.manual_seed(seed)
    model = StoicheiaEncoder(StoicheiaConfig(depth=depth, **RELEASED)).eval()
    arms = {name: precision_view(model, name) for name in precisions}
    warm = _inputs(WARMUP, seed)
    for module in arms.values():
        _forward(module, warm)
    rows = []
    for length in lengths:
        n_rounds = rounds.get(length, 3) if isinstance(rounds, dict) else rounds
        if n_rounds <= 0:
            continue  # skipped (``--rounds-at DxN:0``)
        inputs = _inputs(length, seed)
        times: dict[str, list[float]] = {name: [] for name in arms}
        cpu: dict[str, list[float]] = {name: [] for name in arms}
        logits: dict[str, torch.Tensor] = {}
        for i in range(n_rounds):
            for name, module in arms.items():
                seconds, cpu_seconds, char = _forward(module, inputs)
                times[name].append(seconds)
                cpu[name].append(cpu_seconds)
                if i == 0:
                    logits[name] = char
        ref = logits.get("float32")
        base = statistics.median(times["float32"]) if "float32" in times else None
        for name in arms:
            seconds = statistics.median(times[name])
            row: dict[str, Any] = {"depth": depth, "letters": length, "precision": name, "rounds": n_rounds,
                                   "seconds": round(seconds, 4), "seconds_all": [round(t, 4) for t in times[name]],
                                   "letters_per_s": round(length / seconds, 1),
                                   "cpu_seconds_all": [round(t, 4) for t in cpu[name]]}
            if base is not None and ref is not None:
                paired = [f / t for f, t in zip(times["float32"], times[name], strict=True)]
                row["speedup_vs_float32"] = round(statistics.median(paired), 3)
                row["speedup_all"] = [round(r, 3) for r in paired]
                row["speedup_of_medians"] = round(base / seconds, 3)
                cpu_paired = [f / t for f, t in zip(cpu["float32"], cpu[name], strict=True)]
                row["cpu_speedup_vs_float32"] = round(statistics.median(cpu_paired), 3)
                row["max_abs_logit_diff"] = float((logits[name].float() - ref).abs().max())
                row["top_letter_changed"] = float((logits[name].argmax(-1) != ref.argmax(-1)).float().mean())
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _commit() -> str | None:
    """The source checkout's commit (``+dirty`` with local changes), or None outside one."""
    root = Path(__file__).resolve().parents[3]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def _rounds_at(spec: str) -> dict[tuple[int, int], int]:
    """``"32x8192:1,32x2048:2"`` -> ``{(32, 8192): 1, (32, 2048): 2}``."""
    out = {}
    for item in (part for part in spec.split(",") if part):
        cell, _, n = item.partition(":")
        depth, _, length = cell.partition("x")
        out[int(depth), int(length)] = int(n)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench released-shape", description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="8,32", help="comma-separated depths [8,32]")
    parser.add_argument("--lengths", default="2048,8192", help="comma-separated document lengths [2048,8192]")
    parser.add_argument("--precisions", default="float32,float32-fused,int8,bfloat16",
                        help=f"comma-separated, from {','.join(PRECISIONS)}; float32 is the reference")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rounds-at", default="", help="fewer rounds for slow cells: DEPTHxLENGTH:N,... (N=0 skips) [none]")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    precisions = [p for p in args.precisions.split(",") if p]
    if "float32" not in precisions:
        precisions.insert(0, "float32")
    torch.set_num_threads(args.threads)
    commit = _commit()  # the code that runs, before anything is committed meanwhile
    lengths = [int(n) for n in args.lengths.split(",")]
    rounds_at = _rounds_at(args.rounds_at)
    rows = []
    for depth in (int(d) for d in args.depths.split(",")):
        rows.extend(measure(depth, lengths, precisions,
                            {n: rounds_at.get((depth, n), args.rounds) for n in lengths}))
    result = {"benchmark": "released-shape", "shape": RELEASED, "threads": args.threads, "rounds": args.rounds,
              "rounds_at": {f"{d}x{n}": r for (d, n), r in rounds_at.items()}, "warmup_letters": WARMUP,
              "speedup": "median over rounds of float32 seconds / arm seconds in the same round",
              "commit": commit,
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
