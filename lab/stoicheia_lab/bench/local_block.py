"""A/B of the fused blocks' local-attention query block (64 against the window, 256) at the
released shape: one local FusedBlock's forward, both settings alternating in every round, wall
and process CPU seconds, paired median ratios; writes ``assets/metrics/speed/local_block_ab.json``.

``python -m stoicheia_lab.bench.local_block [--lengths 2048,8192] [--rounds 5] [--threads 1]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder, fused
from stoicheia_spacy.backbone.attention import build_plan
from stoicheia_spacy.backbone.layers import rope_tables
from stoicheia_spacy.backbone.precision import precision_view

OUT = Path(__file__).resolve().parents[3] / "assets" / "metrics" / "speed" / "local_block_ab.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="2048,8192")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = StoicheiaEncoder(StoicheiaConfig(depth=1, d_model=1024, n_heads=16, char_window=256)).eval()
    view: Any = precision_view(model, "float32-fused")
    block: Any = view.blocks[0]
    assert block.local
    arms = {"query_block_64": 64, "query_block_256": 256}
    rows = []
    for length in (int(n) for n in args.lengths.split(",")):
        x = torch.randn(1, length, 1024)
        plan = build_plan(torch.zeros(1, length, dtype=torch.long), 256, "sdpa")
        rope = rope_tables(torch.arange(length)[None], 64)
        wall: dict[str, list[float]] = {a: [] for a in arms}
        cpu: dict[str, list[float]] = {a: [] for a in arms}
        outs = {}
        with torch.inference_mode():
            for arm, size in arms.items():  # warm-up, masks built
                fused.LOCAL_QUERY_BLOCK = size
                outs[arm] = block(x, rope, plan)
            for _ in range(args.rounds):
                for arm, size in arms.items():
                    fused.LOCAL_QUERY_BLOCK = size
                    start, c = time.perf_counter(), time.process_time()
                    block(x, rope, plan)
                    wall[arm].append(time.perf_counter() - start)
                    cpu[arm].append(time.process_time() - c)
        fused.LOCAL_QUERY_BLOCK = 64
        ratio = [b / a for a, b in zip(wall["query_block_64"], wall["query_block_256"], strict=True)]
        cpu_ratio = [b / a for a, b in zip(cpu["query_block_64"], cpu["query_block_256"], strict=True)]
        row = {"letters": length, "wall_s": {a: [round(t, 4) for t in v] for a, v in wall.items()},
               "cpu_s": {a: [round(t, 4) for t in v] for a, v in cpu.items()},
               "speedup_64_vs_256": round(statistics.median(ratio), 3),
               "cpu_speedup_64_vs_256": round(statistics.median(cpu_ratio), 3),
               "max_abs_diff": float((outs["query_block_64"] - outs["query_block_256"]).abs().max())}
        print(json.dumps(row), flush=True)
        rows.append(row)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"experiment": "local query block A/B, one local fused block, d 1024, 16 heads, w 256",
                               "threads": args.threads, "rounds": args.rounds, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
