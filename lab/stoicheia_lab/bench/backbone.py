"""Backbone forward throughput against this machine's fp32 GEMM rate.

``python -m stoicheia_lab.bench backbone [--threads N] [--sizes 1024,4096,...]``

FLOP count (inference, per forward of ``T`` letters packed from documents of
``--doc-len`` letters into one row):

* matmuls: ``2 * P * T`` with ``P`` the parameters of every linear layer (qkv, o, GeGLU
  wi/wo, the five heads); embedding lookups are not counted;
* attention per layer: ``4 * d * sum(keys per query)`` (QK^T and PV) with ``3w`` keys per
  query in local blocks (the blocked kernel's cost, band included) and the segment length
  in global blocks (``sum over segments of L^2``).

Norms, RoPE, softmax and GELU are not counted. The GEMM rate is the best of
``torch.matmul`` on 1024^3 and 2048^3 float32 matrices measured in the same run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from stoicheia_spacy import alphabet
from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder


def gemm_flops(repeats: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    """Best fp32 ``torch.matmul`` FLOP/s over 1024^3 and 2048^3 products, timed by ``clock``
    (wall clock by default; ``time.process_time`` for CPU time on a shared machine)."""
    best = 0.0
    for n in (1024, 2048):
        a, b = torch.randn(n, n), torch.randn(n, n)
        torch.matmul(a, b)
        for _ in range(repeats):
            t0 = clock()
            torch.matmul(a, b)
            best = max(best, 2 * n**3 / max(clock() - t0, 1e-9))
    return best


def forward_flops(model: StoicheiaEncoder, T: int, doc_len: int) -> float:
    """Counted FLOPs of one forward (see the module docstring)."""
    cfg = model.config
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    segs = [doc_len] * (T // doc_len) + ([T % doc_len] if T % doc_len else [])
    attn = 0.0
    for i in range(cfg.depth):
        keys = sum(L * L for L in segs) if cfg.is_global(i) else T * 3 * cfg.char_window
        attn += 4.0 * cfg.d_model * keys
    return 2.0 * linear * T + attn


def packed_inputs(T: int, doc_len: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """One packed row of random plane ids with a segment per ``doc_len`` letters."""
    g = torch.Generator().manual_seed(seed)
    return {
        "input_ids": torch.randint(0, alphabet.N_ALPHA, (1, T), generator=g),
        "boundary": torch.randint(0, alphabet.N_BOUNDARY, (1, T), generator=g),
        "dia": torch.randint(0, alphabet.N_DIA, (1, T), generator=g),
        "punct": torch.randint(0, alphabet.N_PUNCT, (1, T), generator=g),
        "seg_id": (torch.arange(T) // doc_len)[None],
    }


def time_forward(model: StoicheiaEncoder, inputs: dict[str, torch.Tensor], repeats: int) -> float:
    """Best wall time of ``repeats`` inference forwards (after one warm-up)."""
    with torch.inference_mode():
        model(**inputs)
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            model(**inputs)
            best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench backbone", description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--preset", default="mini", help="config preset (default mini: d256, depth 8, window 256)")
    parser.add_argument("--sizes", default="1024,4096,16384,65536", help="comma-separated letter counts")
    parser.add_argument("--doc-len", type=int, default=4096, help="letters per packed document (global attention span)")
    parser.add_argument("--attn-impl", default="sdpa", help="sdpa | dense | flash")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = StoicheiaEncoder(StoicheiaConfig.preset(args.preset, attn_impl=args.attn_impl)).eval()
    sizes = [int(s) for s in args.sizes.split(",")]
    gemm = gemm_flops()
    print(f"threads {torch.get_num_threads()}  preset {args.preset}  params {model.num_parameters():,}  "
          f"attn {args.attn_impl}  doc_len {args.doc_len}")
    print(f"fp32 GEMM (torch.matmul): {gemm / 1e9:.1f} GFLOP/s")
    print(f"{'letters':>8} {'time s':>9} {'letters/s':>11} {'GFLOP':>8} {'GFLOP/s':>8} {'/GEMM':>6}")
    times: dict[int, float] = {}
    for T in sizes:
        repeats = args.repeats if T <= 16384 else max(1, args.repeats - 1)
        seconds = time_forward(model, packed_inputs(T, args.doc_len), repeats)
        flops = forward_flops(model, T, args.doc_len)
        times[T] = seconds
        print(f"{T:>8} {seconds:>9.4f} {T / seconds:>11,.0f} {flops / 1e9:>8.1f} "
              f"{flops / seconds / 1e9:>8.1f} {flops / seconds / gemm:>6.2f}")
    if 16384 in times and 65536 in times:
        print(f"time(64k)/time(16k) = {times[65536] / times[16384]:.2f}  (linear = 4.00, goal <= 4.4)")
    return 0
