"""CPU seconds per component of the default pipeline, against a baseline checkout in the same run.

``python -m stoicheia_lab.bench components [--baseline CHECKOUT] [--n 200] [--letters 4000]
[--rounds 2] [--out JSON]``

Two inputs, both real Greek: the first ``--n`` UD Perseus test sentences (batches of 32,
as :mod:`.pipeline` times them) and, with the data mirror, two annotate-sized pieces of
Perseus text (``--letters`` characters each, cut at a line or a space): the Odyssey (verse)
and Appian (prose), one Doc each, as ``stoicheia annotate`` cuts long texts. Each arm
(this checkout, and ``--baseline``: another checkout's package, e.g. ``git archive`` of an
earlier commit) runs in its own process (``PYTHONPATH`` = the checkout), builds the same
pipeline and times every component's ``pipe`` over each input (``time.process_time``,
torch pinned to ``--threads``); arms alternate for ``--rounds`` rounds and the best time
of each component is kept. Printed: seconds per component and arm, words/s per arm, and
after ÷ before.

The encoder is also set against this machine's matrix-multiply rate, measured in the
same run: the counted forward FLOPs (:func:`~.backbone.forward_flops`) of each piece at
the best square fp32 GEMM rate (:func:`~.backbone.gemm_flops`), and the time
``torch.matmul`` takes on the forward's own shapes (every linear layer on the piece's
letters, the local attention blocks and the global attention rows), so that
``encoder s ÷ same-shape GEMM s`` says how far the encoder pipe is from its own matrix
products.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from .backbone import forward_flops, gemm_flops
from .pipeline import DEFAULT_SOURCE, sentences

#: Perseus works for the pieces (``--source perseus`` records of the mirror): verse, prose.
PIECE_WORKS = {"verse": "perseus:urn:cts:greekLit:tlg0012.tlg002.perseus-grc2",
               "prose": "perseus:urn:cts:greekLit:tlg0551.tlg017.perseus-grc2"}
PACKAGE_ROOT = Path(__file__).resolve().parents[3]

# Runs in each arm's process, with that checkout's package first on sys.path: reads the
# job (JSON) on stdin, prints {"inputs": {name: {"seconds": {pipe: s}, "words": n}}, "pipes": [...]}.
_CHILD = r"""
import json, sys, time
import torch
job = json.load(sys.stdin)
torch.set_num_threads(job["threads"])
from stoicheia_spacy.assembly import build_pipeline
nlp = build_pipeline(job["source"])
list(nlp.pipe(job["warmup"]))
out = {"pipes": nlp.pipe_names, "inputs": {}}
for name, (texts, batch_size) in job["inputs"].items():
    docs = [nlp.make_doc(t) for t in texts]
    seconds = {}
    for pipe_name, proc in nlp.pipeline:
        start = time.process_time()
        docs = list(proc.pipe(docs, batch_size=batch_size))
        seconds[pipe_name] = time.process_time() - start
    out["inputs"][name] = {"seconds": seconds, "words": sum(len(d) for d in docs)}
    del docs
print(json.dumps(out))
"""


def pieces(data: Path, chars: int) -> dict[str, str]:
    """The first ``chars`` characters (cut at a line end for verse, a space for prose) of each
    of :data:`PIECE_WORKS` in the mirror."""
    from ..corpus.readers import iter_records

    wanted = {work: kind for kind, work in PIECE_WORKS.items()}
    out: dict[str, str] = {}
    for record in iter_records("perseus", data):
        kind = wanted.get(record["id"])
        if kind is not None:
            text = record["text"]
            out[kind] = text[: text.rfind("\n" if kind == "verse" else " ", 0, chars)]
        if len(out) == len(wanted):
            break
    return {kind: out[kind] for kind in PIECE_WORKS if kind in out}


def run_arm(checkout: Path, job: dict[str, Any]) -> dict[str, Any]:
    """One arm: :data:`_CHILD` in a fresh process with ``checkout`` first on ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS=str(job["threads"]), MKL_NUM_THREADS=str(job["threads"]))
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(job), capture_output=True,
                          text=True, env=env, cwd=checkout, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arm {checkout} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per input and component, the least seconds over the rounds of one arm."""
    out: dict[str, Any] = {}
    for name, first in runs[0]["inputs"].items():
        seconds = {pipe: min(r["inputs"][name]["seconds"][pipe] for r in runs) for pipe in first["seconds"]}
        total = sum(seconds.values())
        out[name] = {"seconds": seconds, "total_s": total, "words": first["words"],
                     "words_per_s": first["words"] / total if total else 0.0}
    return out


def matmul_seconds(shapes: list[tuple[int, int, int, int]], repeats: int = 3) -> float:
    """Least CPU seconds of ``torch.matmul`` over ``(batch, m, k, n)`` fp32 products, summed."""
    total = 0.0
    for batch, m, k, n in shapes:
        a, b = torch.randn(batch, m, k), torch.randn(batch, k, n)
        torch.matmul(a, b)
        best = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            torch.matmul(a, b)
            best = min(best, time.process_time() - start)
        total += best
    return total


def forward_shapes(backbone: Any, letters: int) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, int]]]:
    """The matrix products of one forward over one Doc of ``letters`` letters, each
    ``(batch, m, k, n)``: (every linear layer, the attention products of every layer)."""
    cfg = backbone.config
    w, heads, dim = cfg.char_window, cfg.n_heads, cfg.d_model // cfg.n_heads
    linear = [(1, letters, m.in_features, m.out_features) for m in backbone.modules() if isinstance(m, torch.nn.Linear)]
    attention: list[tuple[int, int, int, int]] = []
    blocks = -(-letters // w)
    for layer in range(cfg.depth):
        if cfg.is_global(layer):  # QK^T and PV over the whole Doc
            attention += [(heads, letters, dim, letters), (heads, letters, letters, dim)]
        else:  # the blocked kernel: w queries x 3w keys per block
            attention += [(blocks * heads, w, dim, 3 * w), (blocks * heads, w, 3 * w, dim)]
    return linear, attention


def _flops(shapes: list[tuple[int, int, int, int]]) -> float:
    return float(sum(2 * b * m * k * n for b, m, k, n in shapes))


def gemm_comparison(source: str, letters: dict[str, int], encoder_s: dict[str, float]) -> dict[str, Any]:
    """The encoder's seconds per piece against the square GEMM rate and the same-shape products."""
    from stoicheia_spacy.backbone import load_backbone
    from stoicheia_spacy.backbone.loading import resolve_source
    from stoicheia_spacy.backbone.released import backbone_prefix

    directory = resolve_source(source, None)
    backbone = load_backbone(directory, prefix=backbone_prefix(directory))
    square = gemm_flops(3, clock=time.process_time)
    out: dict[str, Any] = {"square_gemm_gflops": square / 1e9}
    for name, n in letters.items():
        flops = forward_flops(backbone, n, n)
        linear, attention = forward_shapes(backbone, n)
        linear_s, attention_s = matmul_seconds(linear), matmul_seconds(attention)
        same = linear_s + attention_s
        enc = encoder_s[name]
        out[name] = {"letters": n, "forward_gflop": flops / 1e9, "encoder_s": enc,
                     "encoder_gflops": flops / enc / 1e9, "square_gemm_s": flops / square,
                     "same_shape_gemm_s": same, "same_shape_gemm_gflops": flops / same / 1e9,
                     "linear_gflop": _flops(linear) / 1e9, "linear_same_shape_gflops": _flops(linear) / linear_s / 1e9,
                     "attention_gflop": _flops(attention) / 1e9,
                     "attention_same_shape_gflops": _flops(attention) / attention_s / 1e9,
                     "encoder_over_same_shape": enc / same, "encoder_over_square": enc / (flops / square)}
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench components")
    parser.add_argument("--source", default=DEFAULT_SOURCE, help="checkpoint of the pipeline (default: embedded)")
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    parser.add_argument("--data", type=Path, default=Path(mirror) if mirror else None,
                        help="open-data mirror (default: $STOICHEIA_ASSET_MIRROR; without it: the test "
                             "fixture's sentences and no pieces)")
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout of the code to compare with")
    parser.add_argument("--n", type=int, default=200, help="UD sentences")
    parser.add_argument("--letters", type=int, default=4000, help="characters per piece (0: no pieces)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of the arms (best is kept)")
    parser.add_argument("--out", type=Path, default=None, help="write the metrics JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from stoicheia_spacy.codec import encode_planes

    texts, origin = sentences(args.data, args.n)
    inputs: dict[str, tuple[list[str], int]] = {"sentences": (texts, 32)}
    piece_texts = pieces(args.data, args.letters) if args.data is not None and args.letters else {}
    for kind, text in piece_texts.items():
        inputs[f"piece_{kind}"] = ([text], 1)
    job = {"source": args.source, "threads": args.threads, "inputs": inputs, "warmup": texts[:8]}
    arms = {"after": PACKAGE_ROOT} | ({"before": args.baseline.resolve()} if args.baseline else {})
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in arms}
    for _ in range(args.rounds):
        for name, checkout in reversed(arms.items()):  # the baseline first in each round
            runs[name].append(run_arm(checkout, job))
    results = {name: best_of(r) for name, r in runs.items()}
    letters = {f"piece_{kind}": len(encode_planes(t)) for kind, t in piece_texts.items()}
    gemm = gemm_comparison(args.source, letters,
                           {k: results["after"][k]["seconds"]["stoicheia_encoder"] for k in letters})
    pipes = runs["after"][0]["pipes"]
    result: dict[str, Any] = {
        "command": "python -m stoicheia_lab.bench components " + " ".join(argv),
        "source": args.source, "sentences_from": origin, "sentences": len(texts),
        "pieces": {kind: {"work": PIECE_WORKS[kind], "chars": len(t)} for kind, t in piece_texts.items()},
        "threads": args.threads, "rounds": args.rounds, "baseline": str(args.baseline) if args.baseline else None,
        "machine": platform.processor() or platform.machine(), "torch": torch.__version__,
        "load_average": os.getloadavg(), "pipes": pipes,
        "timing": "CPU seconds of each arm's process (time.process_time), best of the rounds",
        "arms": results, "gemm": gemm,
    }
    for name in inputs:
        after = results["after"][name]
        print(f"\n{name}: {after['words']} words")
        print(f"{'component':26} " + " ".join(f"{arm + ' s':>10}" for arm in reversed(arms))
              + ("   after/before" if "before" in arms else "   share"))
        for pipe in pipes:
            cells = " ".join(f"{results[arm][name]['seconds'][pipe]:10.3f}" for arm in reversed(arms))
            if "before" in arms:
                before_s = results["before"][name]["seconds"].get(pipe, 0.0)
                ratio = after["seconds"][pipe] / before_s if before_s else float("nan")
                print(f"{pipe:26} {cells}   {ratio:8.2f}")
            else:
                print(f"{pipe:26} {cells}   {after['seconds'][pipe] / after['total_s']:7.1%}")
        cells = " ".join(f"{results[arm][name]['words_per_s']:10.1f}" for arm in reversed(arms))
        print(f"{'words/s':26} {cells}")
        if "before" in arms:
            result.setdefault("speedup_words_per_s", {})[name] = (
                after["words_per_s"] / results["before"][name]["words_per_s"])
    print(f"\nsquare fp32 GEMM: {gemm['square_gemm_gflops']:.1f} GFLOP/s")
    for name in letters:
        g = gemm[name]
        print(f"{name}: {g['letters']} letters, {g['forward_gflop']:.1f} GFLOP; encoder {g['encoder_s']:.2f} s "
              f"({g['encoder_gflops']:.1f} GFLOP/s) = {g['encoder_over_square']:.2f} x square-GEMM time, "
              f"{g['encoder_over_same_shape']:.2f} x same-shape matmul time ({g['same_shape_gemm_gflops']:.1f} GFLOP/s: "
              f"linear {g['linear_same_shape_gflops']:.1f}, attention {g['attention_same_shape_gflops']:.1f})")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0
