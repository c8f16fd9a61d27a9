"""Command line: ``python -m pretrain {train,export,export-random,bench,presets,bundle,split,reassemble,chain,sweep,gpu} ...``.

Examples::

    python -m pretrain train --preset mini --train-preset cpu --data corpus.jsonl --out runs/x
    torchrun --nproc_per_node 8 -m pretrain train --preset paper --data DIR --out runs/p --dist fsdp
    python -m pretrain export --run runs/x --out models/x
    python -m pretrain export-random --preset mini --out models/random --seed 1
    python -m pretrain bench --quick
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from stoicheia_spacy.errors import StoicheiaError

from .config import TRAIN_PRESETS, build_config


def _common_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", default="mini", help="model size preset: tiny, mini, base, paper")
    p.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="overrides, e.g. train.lr=1e-3 model.depth=4 data.row_len=2048",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pretrain", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    tr = sub.add_parser("train", help="pretrain a backbone (resumes from OUT/last.pt)")
    _common_model_args(tr)
    tr.add_argument("--train-preset", default="published", choices=sorted(TRAIN_PRESETS))
    tr.add_argument("--data", required=True, help="PATH[,PATH]: jsonl/json/parquet/txt files or directories")
    tr.add_argument("--out", required=True, help="run directory")
    tr.add_argument("--max-steps", type=int)
    tr.add_argument("--device", choices=["auto", "cpu", "cuda"])
    tr.add_argument("--dist", choices=["ddp", "fsdp"], help="multi-process wrapping under torchrun")
    tr.add_argument("--compile", action="store_true", help="torch.compile the model")
    tr.add_argument("--seed", type=int)
    tr.add_argument("--threads", type=int, help="torch CPU threads")
    tr.add_argument("--no-resume", action="store_true", help="ignore OUT/last.pt and start over")

    ex = sub.add_parser("export", help="export a run's best-dev step in the released format")
    ex.add_argument("--run", required=True)
    ex.add_argument("--out", required=True)
    ex.add_argument("--which", choices=["best", "last"], default="best")

    rnd = sub.add_parser("export-random", help="random-init backbone of a preset (control arms)")
    _common_model_args(rnd)
    rnd.add_argument("--out", required=True)
    rnd.add_argument("--seed", type=int, default=0)

    sub.add_parser("bench", help="training throughput benchmark (see pretrain/BENCHMARKS.md)", add_help=False)
    sub.add_parser("bundle", help="build the portable training bundle (.bundle/)", add_help=False)
    sub.add_parser("split", help="cut weights into <= 15 MiB parts", add_help=False)
    sub.add_parser("reassemble", help="verify parts (sha256) and install them", add_help=False)
    sub.add_parser("chain", help="one <= 10-minute step of a chained, time-budgeted run", add_help=False)
    sub.add_parser("sweep", help="shape sweep: lowest dev bpc within the product limits", add_help=False)
    sub.add_parser("gpu", help="the 15-minute GPU window: prep, args, train, repack, install", add_help=False)
    sub.add_parser("presets", help="print the training presets")
    return parser


def _train(args: argparse.Namespace) -> int:
    overrides = list(args.overrides)
    flag_map = {
        "max_steps": "train.max_steps",
        "device": "train.device",
        "dist": "train.dist",
        "seed": "train.seed",
        "threads": "train.threads",
    }
    for attr, dotted in flag_map.items():
        value = getattr(args, attr)
        if value is not None:
            overrides.append(f"{dotted}={value}")
    if args.compile:
        overrides.append("train.compile=true")
    cfg = build_config(args.preset, args.train_preset, overrides)
    from .trainer import train

    result = train(cfg, args.data, args.out, resume=not args.no_resume)
    if int(os.environ.get("RANK", "0")) == 0:
        print(json.dumps({"step": result.step, "best_dev_bpc": result.best_dev_bpc, "best_step": result.best_step}))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if argv and argv[0] == "bench":
        from .bench import main as bench_main

        return bench_main(argv[1:])
    if argv and argv[0] == "bundle":
        from .bundle import main as bundle_main

        return bundle_main(argv[1:])
    if argv and argv[0] in {"split", "reassemble"}:
        from .parts import main_reassemble, main_split

        return (main_split if argv[0] == "split" else main_reassemble)(argv[1:])
    if argv and argv[0] == "gpu":
        from .gpu import main as gpu_main

        return gpu_main(argv[1:])
    if argv and argv[0] in {"chain", "sweep"}:
        from .chain import main_chain, main_sweep

        return (main_chain if argv[0] == "chain" else main_sweep)(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        if args.command == "train":
            return _train(args)
        if args.command == "export":
            from .export import export_run

            print(export_run(args.run, args.out, which=args.which))
            return 0
        if args.command == "export-random":
            from .export import export_random

            cfg = build_config(args.preset, "published", args.overrides)
            print(export_random(cfg.model_config(), args.out, seed=args.seed))
            return 0
        if args.command == "presets":
            print(json.dumps(TRAIN_PRESETS, indent=2))
            return 0
    except StoicheiaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
