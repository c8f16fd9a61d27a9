"""One <= 10-minute step of a resumable ``spacy train`` run, and the bf16 export that travels back.

``chain.py CONFIG OUT [--call-s 480] [--gpu 0] [--paths.x y ...]``: trains CONFIG (spaCy's own
``init_nlp`` + ``train`` loop) until the schedule ends (patience / max_steps) or ``--call-s``
seconds have passed; a stopped call saves ``OUT/model-last`` (spaCy saves it on the way out)
and the next call resumes from it (weights kept; the optimizer and the step counter restart,
as in the pretraining chain's machine-lost resume). ``OUT/status.json`` records the calls,
steps, the best dev score and ``done``; once done a call only exits 0.

``chain.py --export OUT/model-best DEST``: a copy whose backbone weights are bf16 (the shipped
precision: the fp32 pipeline is ~2x larger than one transfer), ready for
``python -m pretrain split DEST --out $OUT/NAME``.

``chain.py --export-backbone MODEL DEST [--dev-sample F]``: the pipeline's fine-tuned backbone as
a released-format folder (``--model`` of restore_eval.py and accent's evaluate.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import spacy
import torch
from safetensors.torch import load_file, save_file
from spacy.cli._util import parse_config_overrides
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config, registry

from stoicheia_spacy.registrations import register_all

register_all()  # the factories and architectures, also where the entry points are not installed
CALLBACK = "stoicheia_finetune.deadline.v1"


class Deadline(Exception):
    """Raised before an update once the call's time is spent."""


@registry.callbacks(CALLBACK)
def deadline(seconds: float) -> Any:
    end = time.monotonic() + float(seconds)

    def before_update(nlp: Any, info: dict[str, Any]) -> None:
        if time.monotonic() > end:
            raise Deadline(f"step {info.get('step')}: call time spent")

    return before_update


def _status(out: Path) -> dict[str, Any]:
    path = out / "status.json"
    return json.loads(path.read_text()) if path.is_file() else {"calls": 0, "done": False, "train_s": 0.0}


def _strip_callback(model: Path) -> None:
    """Saved configs must not name the chain's callback (a later ``spacy train`` would not know it)."""
    cfg_path = model / "config.cfg"
    if cfg_path.is_file():
        cfg = load_config(cfg_path, interpolate=False)
        cfg["training"]["before_update"] = None
        cfg.to_disk(cfg_path)


def run_call(config: Path, out: Path, overrides: dict[str, Any], call_s: float, gpu: int) -> dict[str, Any]:
    status = _status(out)
    if status["done"]:
        print(f"{out}: done ({status})")
        return status
    out.mkdir(parents=True, exist_ok=True)
    if gpu >= 0:
        spacy.require_gpu(gpu)
    last = out / "model-last"
    cfg_overrides = {**overrides, "training.before_update": {"@callbacks": CALLBACK, "seconds": call_s}}
    start = time.monotonic()
    if last.is_dir() and status["calls"]:
        nlp = spacy.load(last, config={k: v for k, v in cfg_overrides.items()
                                       if k.startswith(("paths.", "training.", "corpora."))})
        for name in ("train", "dev"):
            if f"paths.{name}" in overrides:
                nlp.config["paths"][name] = overrides[f"paths.{name}"]
    else:
        nlp = init_nlp(load_config(config, overrides=cfg_overrides, interpolate=False), use_gpu=gpu)
    done = True
    try:
        train(nlp, out, use_gpu=gpu, stdout=sys.stdout, stderr=sys.stderr)
    except Deadline as exc:
        print(f"chain: {exc}; resume with the same command")
        done = False
    for model in (out / "model-best", last):
        _strip_callback(model)
    meta = out / "model-best" / "meta.json"
    status.update(calls=status["calls"] + 1, done=done, train_s=status["train_s"] + time.monotonic() - start,
                  best=json.loads(meta.read_text()).get("performance") if meta.is_file() else None)
    (out / "status.json").write_text(json.dumps(status, indent=1))
    print(json.dumps(status))
    return status


def export_bf16(model: Path, dest: Path) -> Path:
    """Copy a trained pipeline with its backbone weights in bf16."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(model, dest)
    for weights in dest.glob("*/model.safetensors"):
        tensors = load_file(weights)
        save_file({k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in tensors.items()}, weights)
    return dest


def export_backbone(model: Path, dest: Path, dev_sample: Path | None = None) -> Path:
    """The fine-tuned backbone of a pipeline as a released-format folder (config.json +
    model.safetensors, + the shipped model's ``dev_sample.jsonl``): what restore_eval.py and
    accent's evaluate.py take as ``--model``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "model.safetensors"):
        shutil.copy2(model / "stoicheia_encoder" / name, dest / name)
    if dev_sample is not None and dev_sample.is_file():
        shutil.copy2(dev_sample, dest / "dev_sample.jsonl")
    return dest


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", type=Path, nargs="?")
    p.add_argument("out", type=Path, nargs="?")
    p.add_argument("--call-s", type=float, default=480.0)
    p.add_argument("--gpu", type=int, default=-1)
    p.add_argument("--export", nargs=2, type=Path, metavar=("MODEL", "DEST"), help="bf16 copy of a pipeline")
    p.add_argument("--export-backbone", nargs=2, type=Path, metavar=("MODEL", "DEST"),
                   help="the pipeline's backbone as a released-format folder")
    p.add_argument("--dev-sample", type=Path, default=None, help="with --export-backbone: dev_sample.jsonl to copy")
    args, rest = p.parse_known_args(argv)
    if args.export:
        print(export_bf16(*args.export))
        return 0
    if args.export_backbone:
        print(export_backbone(*args.export_backbone, args.dev_sample))
        return 0
    if args.config is None or args.out is None:
        p.error("CONFIG and OUT are required")
    status = run_call(args.config, args.out, parse_config_overrides(rest), args.call_s, args.gpu)
    return 0 if status["calls"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
