"""A training run as a chain of short device calls: ``python -m pretrain chain`` / ``sweep``.

Each call of ``chain`` trains for at most ``--call-s`` seconds, checkpoints, and writes to
``--out`` (the device's ``$OUT``) what must come back: ``status.json`` and the current
weights as parts (``resume.parts.json`` + pieces of ``resume.pt``: bf16 weights, schedule,
data position, no optimiser), and, once the schedule has ended, the best-dev step in the
released format (``best.parts.json`` + pieces; ``python -m pretrain reassemble --prefix
best.`` installs it). The next call resumes from ``RUN/last.pt`` when the machine kept its
disk, else from ``--restore DIR`` (the parts of the previous call, carried back). The
whole run is ``train.time_budget_s`` = ``--budget-s`` seconds of training, turned into a
step count after calibration, with the dev-driven schedule and staged anneal.

``sweep`` trains each candidate shape for ``--seconds-each`` (same data, same recipe),
after rejecting those over the product limits (bf16 backbone size, CPU inference letters/s
per thread against the shipped shape, both measured in the same run), and records the
lowest dev bpc; it is resumable in the same way (``sweep.json``).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from stoicheia_spacy.errors import StoicheiaError

from .config import TRAIN_PRESETS, RunConfig, build_config
from .parts import reassemble, split_files

log = logging.getLogger("pretrain")

#: The shipped default's shape (the reference of the CPU-speed limit).
SHIPPED_SHAPE = {"d_model": 384, "n_heads": 6, "depth": 12}


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="a training bundle (python -m pretrain bundle)")
    p.add_argument("--run", default=".chain/run", help="run directory on the machine's disk (git-ignored .chain/)")
    p.add_argument("--out", required=True, help="what comes back (the device's $OUT)")
    p.add_argument("--restore", help="parts that came back from the previous call (used when RUN is lost)")
    p.add_argument("--call-s", type=float, default=480.0, help="seconds of this call's training")
    p.add_argument("--preset", default="mini")
    p.add_argument("--train-preset", default="published", choices=sorted(TRAIN_PRESETS))
    p.add_argument("--set", dest="overrides", nargs="+", default=[], metavar="SECTION.KEY=VALUE")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--part-mib", type=float, default=15.0)
    p.add_argument("--max-files", type=int, default=8, help="files that may come back per call")


def _config(args: argparse.Namespace, budget_s: float, extra: Sequence[str] = ()) -> RunConfig:
    overrides = list(args.overrides) + list(extra) + [
        f"train.time_budget_s={budget_s}",
        f"train.call_budget_s={args.call_s}",
        f"train.device={args.device}",
        f"train.seed={args.seed}",
        f"train.threads={args.threads}",
    ]
    if args.compile:
        overrides.append("train.compile=true")
    return build_config(args.preset, args.train_preset, overrides)


def _restore(run: Path, restore: str | None) -> None:
    """Put the returned ``resume.pt`` into ``run`` when the machine lost its checkpoint."""
    if (run / "last.pt").is_file() or not restore or not (Path(restore) / "resume.parts.json").is_file():
        return
    tmp = run / "_returned"
    reassemble(restore, tmp, prefix="resume.")
    run.mkdir(parents=True, exist_ok=True)
    (tmp / "resume.pt").replace(run / "resume.pt")
    shutil.rmtree(tmp, ignore_errors=True)
    log.info("no checkpoint on this disk: continuing from the returned weights in %s", restore)


def run_call(cfg: RunConfig, data: str, run: Path, out: Path, *, part_mib: float, max_files: int) -> dict[str, Any]:
    """One chain step: train within the call budget, then write status and parts to ``out``."""
    from .export import export_run
    from .trainer import Trainer

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    trainer = Trainer(cfg, data, run)
    result = trainer.run()
    files_left = max_files - 1  # status.json
    status: dict[str, Any] = {
        "step": result.step,
        "finished": result.finished,
        "max_steps": trainer.schedule.max_steps,
        "best_dev_bpc": result.best_dev_bpc,
        "best_step": result.best_step,
        "train_seconds": round(trainer.train_seconds, 1),
        "call_seconds": round(time.perf_counter() - t0, 1),
        "params": trainer.n_params,
        "letters": int(sum(h.get("letters", 0) for h in trainer.history)),
        "last_dev": next((h for h in reversed(trainer.history) if "dev_bpc" in h), None),
    }
    written: list[str] = []
    if result.finished and trainer.info.is_main:
        best = run / "export_bf16"
        export_run(run, best, which="best", dtype=torch.bfloat16)
        manifest = split_files(best, out, part_mib=part_mib, max_files=files_left, prefix="best.")
        files_left -= 1 + sum(len(e.get("parts", [])) for e in manifest["files"].values())
        written.append("best")
    if trainer.info.is_main:
        trainer.save_resume(run / "resume_out.pt")
        try:
            split_files(run / "resume_out.pt", out / "_resume", part_mib=part_mib, max_files=files_left, prefix="resume.")
        except StoicheiaError as exc:
            if not result.finished:
                raise
            log.warning("resume weights not returned (%s): the best export was", exc)
        else:
            for f in (out / "_resume").iterdir():
                f.replace(out / f.name.replace("resume.resume_out.pt", "resume.resume.pt"))
            text = (out / "resume.parts.json").read_text(encoding="utf-8").replace('"resume_out.pt"', '"resume.pt"')
            (out / "resume.parts.json").write_text(text.replace("resume.resume_out.pt", "resume.resume.pt"), encoding="utf-8")
            written.append("resume")
        shutil.rmtree(out / "_resume", ignore_errors=True)
    status["returned"] = written
    (out / "status.json").write_text(json.dumps(status, indent=1) + "\n", encoding="utf-8")
    return status


def main_chain(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain chain", description="one step of a chained training run")
    _add_run_args(p)
    p.add_argument("--budget-s", type=float, required=True, help="training seconds of the whole run")
    args = p.parse_args(list(argv))
    run = Path(args.run)
    try:
        _restore(run, args.restore)
        status = run_call(_config(args, args.budget_s), args.data, run, Path(args.out),
                          part_mib=args.part_mib, max_files=args.max_files)
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    print(json.dumps(status))
    return 0


# ------------------------------------------------------------------------- sweep
def parse_shape(spec: str) -> dict[str, int]:
    """``d512h8x10`` -> d_model 512, n_heads 8, depth 10."""
    import re

    m = re.fullmatch(r"d(\d+)h(\d+)x(\d+)", spec.strip())
    if not m:
        raise ValueError(f"shape {spec!r} is not of the form d<d_model>h<heads>x<depth>")
    return {"d_model": int(m.group(1)), "n_heads": int(m.group(2)), "depth": int(m.group(3))}


def cpu_letters_per_s(shape: dict[str, int], preset: str, *, letters: int = 2048, repeats: int = 2) -> float:
    """Forward letters/s of a random backbone of ``shape`` on one CPU thread (inference)."""
    from stoicheia_spacy import alphabet as A

    from .model import build_model

    cfg = build_config(preset, "published", [f"model.{k}={v}" for k, v in shape.items()])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_model(cfg.model_config()).eval()
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, A.N_ALPHA, (1, letters), generator=g)
        zeros = torch.zeros_like(ids)
        with torch.no_grad():
            model(ids, zeros, zeros, zeros)
            t0 = time.perf_counter()
            for _ in range(repeats):
                model(ids, zeros, zeros, zeros)
        return letters * repeats / (time.perf_counter() - t0)
    finally:
        torch.set_num_threads(threads)


def admissible(shapes: Sequence[str], preset: str, *, max_backbone_mb: float, min_cpu_ratio: float,
               letters: int = 2048) -> list[dict[str, Any]]:
    """Each shape with its bf16 size, CPU letters/s ratio to the shipped shape, and verdict."""
    from .model import build_model, count_parameters

    ref = cpu_letters_per_s(SHIPPED_SHAPE, preset, letters=letters)
    out = []
    for spec in shapes:
        shape = parse_shape(spec)
        cfg = build_config(preset, "published", [f"model.{k}={v}" for k, v in shape.items()])
        params = count_parameters(build_model(cfg.model_config()))
        ratio = cpu_letters_per_s(shape, preset, letters=letters) / ref
        mb = 2 * params / 1e6
        out.append({"shape": spec, "params": params, "bf16_mb": round(mb, 2), "cpu_ratio": round(ratio, 3),
                    "ok": mb <= max_backbone_mb and ratio >= min_cpu_ratio})
    return out


def main_sweep(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain sweep", description="lowest dev bpc among admissible shapes")
    _add_run_args(p)
    p.add_argument("--shapes", required=True, help="comma-separated d<d_model>h<heads>x<depth>, e.g. d384h6x12,d512h8x8")
    p.add_argument("--seconds-each", type=float, required=True, help="training seconds per shape")
    p.add_argument("--max-backbone-mb", type=float, default=60.0, help="bf16 backbone size limit (MB)")
    p.add_argument("--min-cpu-ratio", type=float, default=0.8, help="CPU letters/s per thread vs the shipped shape")
    p.add_argument("--cpu-letters", type=int, default=2048, help="letters per timed CPU forward")
    args = p.parse_args(list(argv))
    run, out = Path(args.run), Path(args.out)
    run.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    state_path = run / "sweep.json"
    restored = Path(args.restore) / "sweep.json" if args.restore else None
    if state_path.is_file():
        state = json.loads(state_path.read_text(encoding="utf-8"))
    elif restored is not None and restored.is_file():
        state = json.loads(restored.read_text(encoding="utf-8"))
    else:
        state = {"candidates": admissible(args.shapes.split(","), args.preset, max_backbone_mb=args.max_backbone_mb,
                                          min_cpu_ratio=args.min_cpu_ratio, letters=args.cpu_letters),
                 "results": {}}
    t0 = time.perf_counter()
    try:
        for cand in state["candidates"]:
            if not cand["ok"] or cand["shape"] in state["results"]:
                continue
            left = args.call_s - (time.perf_counter() - t0)
            if left < 30:
                break
            args_c = argparse.Namespace(**{**vars(args), "call_s": left})
            shape = parse_shape(cand["shape"])
            cfg = _config(args_c, args.seconds_each, [f"model.{k}={v}" for k, v in shape.items()])
            from .trainer import Trainer

            trainer = Trainer(cfg, args.data, run / cand["shape"])
            result = trainer.run()
            if not result.finished:
                break
            state["results"][cand["shape"]] = {"best_dev_bpc": result.best_dev_bpc, "steps": result.step,
                                               "train_seconds": round(trainer.train_seconds, 1)}
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    done = {k: v for k, v in state["results"].items() if v["best_dev_bpc"] == v["best_dev_bpc"]}
    state["best"] = min(done, key=lambda k: done[k]["best_dev_bpc"]) if done else None
    text = json.dumps(state, indent=1) + "\n"
    state_path.write_text(text, encoding="utf-8")
    (out / "sweep.json").write_text(text, encoding="utf-8")
    print(json.dumps({"best": state["best"], "results": state["results"]}))
    return 0
