"""``python -m stoicheia_lab.bench pipeline [--source SRC] [--n 200] [--threads 1] [--out JSON]``:
words/s of the full default pipeline against the encoder alone, in one run.

Builds the pipeline of ``--source`` (default: the embedded ``grc_stoicheia_doc_clean``,
with every component its ``config.cfg`` names, as ``stoicheia package`` does), then
times ``nlp.pipe`` over the first ``--n`` UD Perseus test sentences twice on the same
object: with every component, and with ``stoicheia_encoder`` alone (the others
disabled).  Both are set against the backbone's GEMM roofline for those sentences:
the words/s the counted forward FLOPs (:func:`~stoicheia_lab.bench.backbone.forward_flops`,
one segment per sentence) would allow at the fp32 ``torch.matmul`` rate measured in
the same run (:func:`~stoicheia_lab.bench.backbone.gemm_flops`).  Printed: words/s of
each arm, full ÷ encoder (the target is ≥ 0.8), each ÷ roofline, and the CPU seconds and
share of time of every component (:func:`component_seconds`, one more pass in the same run).  Times are CPU
seconds of the process (``time.process_time``, all its threads), so that other jobs on a
shared machine do not skew the ratios; wall-clock figures are in the JSON too. ``--threads``
holds for every thread pool of the process: torch's and, through ``threadpoolctl``, numpy's
BLAS and OpenMP (the components' numpy matrix products would otherwise run on every core,
and on a loaded machine their waiting threads' CPU time counts against the full pipeline).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import torch
from threadpoolctl import threadpool_info, threadpool_limits

from .backbone import forward_flops, gemm_flops
from .roundtrip import UD_TEST_SETS, ud_texts

DEFAULT_SOURCE = "embedded:grc_stoicheia_doc_clean"
#: The 200 UD sentences shipped with the tests, used when no data mirror is given.
FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "ud_sentences_200.txt"


def sentences(data: Path | None, n: int) -> tuple[list[str], str]:
    """The first ``n`` UD Perseus test sentences (or of the test fixture) and where they came from."""
    if data is not None:
        path = data / UD_TEST_SETS[0]
        return [t for t in ud_texts(path) if t.strip()][:n], UD_TEST_SETS[0]
    if not FIXTURE.is_file():
        raise SystemExit("no sentences: pass --data MIRROR or set STOICHEIA_ASSET_MIRROR")
    return FIXTURE.read_text(encoding="utf-8").splitlines()[:n], "tests/fixtures/ud_sentences_200.txt"


def timed_words(nlp: Any, texts: list[str], batch_size: int, repeats: int) -> tuple[float, float, int]:
    """(best CPU seconds, best wall seconds, words) of ``nlp.pipe`` over ``texts`` in
    ``repeats`` passes, after a warm-up."""
    list(nlp.pipe(texts[:8], batch_size=batch_size))
    cpu, wall, words = float("inf"), float("inf"), 0
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        words = sum(len(doc) for doc in nlp.pipe(texts, batch_size=batch_size))
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start)
    return cpu, wall, words


def component_seconds(nlp: Any, texts: list[str], batch_size: int) -> dict[str, float]:
    """CPU seconds of each component's ``pipe`` over ``texts``, run one component at a time on
    the same Docs (as :mod:`.components` times them)."""
    docs = [nlp.make_doc(t) for t in texts]
    seconds: dict[str, float] = {}
    for name, proc in nlp.pipeline:
        start = time.process_time()
        docs = list(proc.pipe(docs, batch_size=batch_size))
        seconds[name] = time.process_time() - start
    return seconds


def gemm_rate_cpu(repeats: int = 3) -> float:
    """:func:`~stoicheia_lab.bench.backbone.gemm_flops` in CPU time, as the pipelines are timed."""
    return gemm_flops(repeats, clock=time.process_time)


def roofline_seconds(backbone: torch.nn.Module, texts: list[str], gemm: float) -> tuple[float, float]:
    """(seconds at the GEMM rate, counted FLOPs) of one forward per sentence."""
    from stoicheia_spacy.codec import encode_planes

    flops = 0.0
    for text in texts:
        n = len(encode_planes(text))
        if n:
            flops += forward_flops(backbone, n, n)  # type: ignore[arg-type]
    return flops / gemm, flops


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench pipeline")
    parser.add_argument("--source", default=DEFAULT_SOURCE, help="checkpoint of the pipeline (default: embedded)")
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    parser.add_argument("--data", type=Path, default=Path(mirror) if mirror else None,
                        help="open-data mirror with UD Perseus (default: $STOICHEIA_ASSET_MIRROR, else the test fixture)")
    parser.add_argument("--n", type=int, default=200, help="sentences")
    parser.add_argument("--threads", type=int, default=1, help="threads of torch and of numpy's BLAS/OpenMP")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=1, help="timed passes per arm (best is kept)")
    parser.add_argument("--out", type=Path, default=None, help="write the metrics JSON here")
    args = parser.parse_args(argv)
    with threadpool_limits(limits=args.threads):  # numpy's BLAS / OpenMP, for this run only
        return run(args, argv)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    """The benchmark of :func:`main`'s parsed ``args``."""
    torch.set_num_threads(args.threads)

    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.encoder.model import torch_backbone

    texts, origin = sentences(args.data, args.n)
    nlp = build_pipeline(args.source)
    backbone = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)  # type: ignore[attr-defined]
    others = [name for name in nlp.pipe_names if name != "stoicheia_encoder"]
    full_s, full_wall, words = timed_words(nlp, texts, args.batch_size, args.repeats)
    with nlp.select_pipes(disable=others):
        enc_s, enc_wall, enc_words = timed_words(nlp, texts, args.batch_size, args.repeats)
    per_pipe = component_seconds(nlp, texts, args.batch_size)
    per_total = sum(per_pipe.values())
    gemm, gemm_wall = gemm_rate_cpu(), gemm_flops()
    roof_s, flops = roofline_seconds(backbone, texts, gemm)
    full_wps, enc_wps, roof_wps = words / full_s, enc_words / enc_s, words / roof_s
    result = {
        "command": "python -m stoicheia_lab.bench pipeline " + " ".join(argv),
        "source": args.source, "sentences": len(texts), "sentences_from": origin, "words": words,
        "threads": torch.get_num_threads(), "batch_size": args.batch_size, "repeats": args.repeats,
        "thread_pools": {f"{p['internal_api']}:{p['prefix']}": p["num_threads"] for p in threadpool_info()},
        "machine": platform.processor() or platform.machine(), "torch": torch.__version__,
        "pipes": nlp.pipe_names,
        "full_words_per_s": full_wps, "encoder_words_per_s": enc_wps,
        "full_over_encoder": full_wps / enc_wps, "target_full_over_encoder": 0.8,
        "timing": "CPU seconds of the process (time.process_time), robust on a shared machine",
        "full_cpu_s": full_s, "encoder_cpu_s": enc_s, "full_wall_s": full_wall, "encoder_wall_s": enc_wall,
        "full_over_encoder_wall": (words / full_wall) / (enc_words / enc_wall),
        "gemm_gflops_wall": gemm_wall / 1e9,
        "gemm_gflops": gemm / 1e9, "forward_gflops": flops / 1e9, "roofline_words_per_s": roof_wps,
        "encoder_over_roofline": enc_wps / roof_wps, "full_over_roofline": full_wps / roof_wps,
        "component_cpu_s": per_pipe,
        "component_share": {name: s / per_total for name, s in per_pipe.items()},
        "non_encoder_cpu_s": per_total - per_pipe.get("stoicheia_encoder", 0.0),
    }
    print(f"{len(texts)} sentences ({origin}), {words} words, {torch.get_num_threads()} thread(s), "
          f"pipes {', '.join(nlp.pipe_names)}")
    print(f"full pipeline   : {full_wps:9.1f} words/s")
    print(f"encoder only    : {enc_wps:9.1f} words/s")
    print(f"GEMM roofline   : {roof_wps:9.1f} words/s  ({gemm / 1e9:.1f} GFLOP/s, {flops / 1e9:.1f} GFLOP counted)")
    print(f"full / encoder  : {full_wps / enc_wps:.2f}  (target >= 0.80; wall clock: "
          f"{(words / full_wall) / (enc_words / enc_wall):.2f})")
    print(f"encoder / roof  : {enc_wps / roof_wps:.2f}")
    print(f"full / roof     : {full_wps / roof_wps:.2f}")
    print(f"{'component':26} {'CPU s':>8} {'share':>7}")
    for name, sec in per_pipe.items():
        print(f"{name:26} {sec:8.3f} {sec / per_total:7.1%}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0
