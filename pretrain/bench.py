"""Training-throughput benchmark: ``python -m pretrain bench [--device cpu|cuda] ...``.

Times full optimiser steps (forward, published loss, backward, clipping, AdamW) of a
preset on packed rows (random letters, 15 % masked, ``--seg-len`` letters per packed
segment) and reports letters/s. Model FLOPs per letter are 6 x (matrix parameters
touched per letter) plus the attention products (12 x d x keys per layer: local
layers see 2w-1 keys, global ones the whole segment). The baseline is a large GEMM
timed in the same run (bf16 on CUDA, float32 on CPU); MFU = model FLOP/s / GEMM FLOP/s.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from stoicheia_spacy import alphabet as A

from . import objective as O
from .model import build_model, count_parameters, matrix_parameter_names, param_groups
from .sampling import IGNORE


def gemm_tflops(device: torch.device, dtype: torch.dtype, n: int, repeats: int = 10) -> float:
    """Rate of an ``n x n x n`` matrix product (TFLOP/s), after warm-up."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    _sync(device)
    return 2 * n**3 * repeats / (time.perf_counter() - t0) / 1e12


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def flops_per_letter(config: Any, seg_len: int) -> float:
    """Training FLOPs per letter (forward + backward) of a backbone config."""
    d, depth, w = config.d_model, config.depth, config.char_window
    hidden = config.mlp_hidden
    block = 4 * d * d + 3 * hidden * d
    heads = d * (config.n_char_ids + (config.n_boundary - 1) + (config.n_dia - 1) + 2 + (config.n_punct - 1))
    dense = 6.0 * (depth * block + heads)
    attn = 0.0
    for layer in range(depth):
        keys = seg_len if config.is_global(layer) else min(2 * w - 1, seg_len)
        attn += 12.0 * d * keys
    return dense + attn


def synthetic_rows(n: int, row_len: int, seg_len: int, rng: np.random.Generator) -> list[dict[str, np.ndarray]]:
    """Packed rows of random letters with 15 % masked (weight 1/0.15), segments of ``seg_len``."""
    rows = []
    for _ in range(n):
        letters = rng.integers(0, A.N_ALPHA, row_len)
        masked = rng.random(row_len) < 0.15
        rows.append(
            {
                "input_ids": np.where(masked, A.MASK_ID, letters),
                "boundary": np.where(masked, A.BND_UNKNOWN, (rng.random(row_len) < 0.2).astype(np.int64)),
                "dia": np.where(masked, A.DIA_UNKNOWN, rng.integers(0, A.N_DIA_STATES, row_len)),
                "punct": np.where(masked, A.PUNCT_UNKNOWN, 0),
                "char_target": np.where(masked, letters, IGNORE),
                "char_weight": np.where(masked, 1 / 0.15, 0.0).astype(np.float32),
                "bnd_target": np.where(masked, 0, IGNORE),
                "dia_target": np.where(masked, 0, IGNORE),
                "punct_target": np.where(masked, 0, IGNORE),
                "cap_target": np.where(masked, 0, IGNORE),
                "seg_id": np.arange(row_len, dtype=np.int64) // seg_len + 1,
            }
        )
    return rows


def bench_preset(
    preset: str,
    device: torch.device,
    *,
    row_len: int,
    seg_len: int,
    rows: int,
    steps: int,
    warmup: int,
    compile_model: bool = False,
    overrides: dict[str, Any] | None = None,
    stream: Any = None,
) -> dict[str, Any]:
    """Letters/s and model TFLOP/s of full training steps of ``preset``: on fixed synthetic
    rows, or, with ``stream`` (a ``pretrain.planes.PlaneStream``), end to end on real data
    (window sampling, published corruption and packing on the device inside every step)."""
    from stoicheia_spacy.backbone import StoicheiaConfig

    raw = StoicheiaConfig.preset(preset).to_dict()
    raw.update(overrides or {})
    config = StoicheiaConfig.from_dict(raw)
    torch.manual_seed(0)
    model = build_model(config).to(device)
    fwd = torch.compile(model) if compile_model else model
    opt = torch.optim.AdamW(
        param_groups(model, matrix_parameter_names(model), 0.1),
        lr=3e-4,
        betas=(0.9, 0.95),
        **({"fused": True} if device.type == "cuda" else {}),
    )
    data = synthetic_rows(rows, row_len, seg_len, np.random.default_rng(0))
    fixed = (O.collate(data, device), O.denominators(data))

    def step() -> None:
        if stream is None:
            batch, dens = fixed
        else:
            from .planes import batch_denominators

            batch = stream.next_batch(rows)
            dens = batch_denominators(batch)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            out = fwd(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])
        O.combine(O.numerators(out, batch), dens, 0.1).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    _sync(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    elapsed = time.perf_counter() - t0
    letters_s = rows * row_len * steps / elapsed
    flops = flops_per_letter(config, seg_len)
    result = {
        "preset": preset,
        "params": count_parameters(model),
        "device": str(device),
        "dtype": "bf16 autocast" if device.type == "cuda" else "float32",
        "row_len": row_len,
        "seg_len": seg_len,
        "rows": rows,
        "steps": steps,
        "data": "synthetic" if stream is None else "bundle",
        "step_s": elapsed / steps,
        "letters_s": letters_s,
        "model_tflops": letters_s * flops / 1e12,
    }
    if device.type == "cuda":
        result["peak_mem_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain bench", description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--presets", help="comma-separated (default: mini on CPU; mini,paper on CUDA)")
    p.add_argument("--row-len", type=int, help="letters per row (default 2048 on CPU, 8192 on CUDA)")
    p.add_argument("--seg-len", type=int, help="letters per packed segment (default min(row_len, 4096))")
    p.add_argument("--rows", type=int, default=0, help="rows per step (default 2 on CPU, 4 on CUDA)")
    p.add_argument("--steps", type=int, default=0, help="timed steps (default 3 on CPU, 10 on CUDA)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--quick", action="store_true", help="tiny preset, 2 short steps (a smoke run)")
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--data", help="a training bundle: also time end-to-end steps on its pre-encoded planes "
                   "(same shape and batch) and print the ratio to synthetic rows")
    p.add_argument("--shape", help="d<d_model>h<heads>x<depth> overriding the preset's shape, e.g. d384h6x12")
    args = p.parse_args(list(argv or []))
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else args.device.replace("auto", "cpu"))
    cuda = device.type == "cuda"
    row_len = args.row_len or (8192 if cuda else 2048)
    seg_len = args.seg_len or min(row_len, 4096)
    presets = (args.presets or ("mini,paper" if cuda else "mini")).split(",")
    rows = args.rows or (4 if cuda else 2)
    steps = args.steps or (10 if cuda else 3)
    if args.quick:
        presets, row_len, seg_len, rows, steps = ["tiny"], 256, 128, 2, 2
    gemm_dtype = torch.bfloat16 if cuda else torch.float32
    gemm = gemm_tflops(device, gemm_dtype, 8192 if cuda else 1024, repeats=10 if cuda else 3)
    print(f"baseline: {gemm_dtype} GEMM {gemm:.2f} TFLOP/s on {device} (torch {torch.__version__}, threads {torch.get_num_threads()})")
    results = []
    for preset in presets:
        if cuda:
            torch.cuda.empty_cache()
        shape: dict[str, Any] = {}
        if args.shape:
            from .chain import parse_shape

            shape = dict(parse_shape(args.shape))
        kinds: list[Any] = [None]
        if args.data:
            from .config import DataConfig
            from .planes import PlaneStream, read_plane_corpus

            data_cfg = DataConfig(row_len=row_len, max_window=seg_len)
            corpus = read_plane_corpus(f"{args.data}/pretrain", "train")
            kinds.append(PlaneStream(corpus, data_cfg, seed=0, device=device))
        pair = []
        for stream in kinds:
            r = bench_preset(preset, device, row_len=row_len, seg_len=seg_len, rows=rows, steps=steps,
                             warmup=args.warmup, compile_model=args.compile, overrides=shape, stream=stream)
            r["gemm_tflops"] = gemm
            r["mfu"] = r["model_tflops"] / gemm if gemm > 0 else math.nan
            r["shape"] = args.shape or preset
            results.append(r)
            pair.append(r)
            print(
                f"{preset:>6} {r['params'] / 1e6:8.1f}M  {r['data']:>9}  row {row_len} x {rows}  {r['step_s']:.3f} s/step  "
                f"{r['letters_s']:,.0f} letters/s  {r['model_tflops']:.3f} TFLOP/s  MFU {r['mfu']:.1%} of measured GEMM"
            )
        if len(pair) == 2:
            ratio = pair[1]["letters_s"] / pair[0]["letters_s"]
            pair[1]["ratio_to_synthetic"] = ratio
            print(f"{preset:>6} end-to-end on the bundle / synthetic rows: {ratio:.3f} (target >= 0.8 on GPU)")
    if args.json:
        meta = {"command": "python -m pretrain bench " + " ".join(argv or []), "torch": torch.__version__,
                "threads": torch.get_num_threads(), "date": time.strftime("%Y-%m-%d", time.gmtime())}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"meta": meta, "results": results}, fh, indent=2)
    return 0
