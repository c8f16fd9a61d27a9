"""The 15-minute GPU window in one device call: ``python -m pretrain gpu {prep,args,train,repack,install}``.

A session that is lent a GPU gets 15 device-minutes in all (start and idle included, at most
10 minutes a call, 64 MiB that travel, at most 8 files of 16 MiB that come back). This module
turns them into one call (``projects/pretrain/GPU.md``):

``prep`` (CPU, ``make gpu-prep``)
    the training bundle (``pretrain.bundle``: doc-clean planes, fold-0 treebank, scansion
    silver) plus ``init/``, the weights the call starts from: the shipped backbone's bf16
    safetensors with the high bytes of every value xz-compressed and the low bytes stored
    raw (40.7 MiB -> about 28 MiB, exact bytes, sha256-checked). The doc-clean planes get
    what is left of the 64 MiB once the tree that travels and the other parts are counted.
``args`` (``make gpu-train``)
    prints the ``run`` tool's arguments: command, carry, timeout_s.
``train`` (on the device)
    trains the shipped shape from ``init/`` with the dev-driven schedule and staged anneal
    for ``--budget-s`` seconds on device-resident planes (``pretrain.planes.PlaneStream``)
    and writes a snapshot to ``$OUT`` every ``--snapshot-s`` seconds and at the end:
    ``gpu.json`` (status, sha256 of every part) and ``wNNN.partKK`` (one ``torch.save``
    blob: bf16 weights, schedule, data position, history; at most 15 MiB a part). A new
    snapshot's parts are written before ``gpu.json`` points to them and the old ones are
    removed after, so whatever the timeout leaves is consistent.
``repack`` (``make gpu-train FILES=DIR``)
    a second call resumes: the returned snapshot becomes the bundle's ``init/`` (weights
    packed as above, loop state in ``init/state.pt``).
``install`` (``make gpu-install FILES=DIR``)
    verifies and reassembles the parts, runs ``python -m stoicheia_lab.bench quality``
    before and after (with its random-init control), installs ``config.json`` and
    ``model.safetensors`` (+ ``.sha256``) into the model folder only if the masked bpc
    improves, and writes the metrics JSON.

The device image has torch, numpy and safetensors but no spaCy: ``train`` imports neither
spaCy nor ``datasets``, and the window fine-tunes no spaCy head (the heads are re-fitted on
CPU by their recipes, listed by ``install``).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import logging
import lzma
import math
import os
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stoicheia_spacy.errors import CheckpointError, CorpusError, StoicheiaError

log = logging.getLogger("pretrain")

FORMAT = "stoicheia-gpu-window/1"
MANIFEST = "gpu.json"
INIT = "init"
#: what one device call may carry (tree + carried folder) and return
TRAVEL_MIB = 64.0
RETURN_FILES = 8
#: tracked paths that stay home (``DEVICE_TREE_PATHS`` of ``../shared/hooks/device-tree``)
STAY_HOME = ("assets/models", "assets/which_model")
#: the recipe of the window on the device (``--set`` adds to or overrides it)
GPU_RECIPE = (
    "data.row_len=8192",
    "data.max_window=4096",
    "train.micro_rows=16",
    "train.lr=6e-4",
    "train.warmup_frac=0.04",
    "train.eval_every=50",
    "train.patience=5",
    "train.log_every=10",
    "train.ckpt_every=1000000",
)
#: the task heads of the shipped model folder and the CPU recipes that re-fit them on a new backbone
HEAD_RECIPES = {
    "morphosyntax": "projects/parse: weasel run train-pretrained (then stoicheia package)",
    "restorer": "projects/restore: weasel run finetune",
    "scanner": "projects/meter: weasel run train",
    "dater": "projects/date: weasel run train",
    "attributor": "projects/date: weasel run attribute",
}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mib(n: float) -> float:
    return n / 2**20


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ------------------------------------------------------------------ packed bf16 weights
def safetensors_dtypes(data: bytes) -> set[str]:
    n = struct.unpack("<Q", data[:8])[0]
    return {v["dtype"] for k, v in json.loads(data[8 : 8 + n]).items() if k != "__metadata__"}


def as_bf16(data: bytes) -> bytes:
    """A safetensors file with every floating tensor in bf16 (unchanged if it already is)."""
    if safetensors_dtypes(data) <= {"BF16"}:
        return data
    from safetensors.torch import load

    return _bf16_safetensors(load(data))


def pack_safetensors(data: bytes, out: Path, *, preset: int = 6) -> dict[str, Any]:
    """Store a bf16 safetensors file as ``header.bin`` + ``hi.xz`` (the high byte of every
    value: sign, exponent, one mantissa bit; it compresses about 3x) + ``lo.bin`` (the low
    bytes, incompressible). Other dtypes are refused (``CheckpointError``)."""
    import numpy as np

    n = struct.unpack("<Q", data[:8])[0]
    dtypes = safetensors_dtypes(data)
    if dtypes != {"BF16"}:
        raise CheckpointError(f"packed weights must be bf16 safetensors, not {sorted(dtypes)}")
    body = np.frombuffer(data[8 + n :], dtype="<u2")
    out.mkdir(parents=True, exist_ok=True)
    (out / "header.bin").write_bytes(data[: 8 + n])
    (out / "hi.xz").write_bytes(lzma.compress((body >> 8).astype(np.uint8).tobytes(), preset=preset))
    (out / "lo.bin").write_bytes((body & 0xFF).astype(np.uint8).tobytes())
    meta = {"bytes": len(data), "sha256": _sha(data), "values": int(body.size)}
    (out / "weights.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def unpack_safetensors(directory: Path) -> bytes:
    """The exact safetensors bytes that ``pack_safetensors`` stored (sha256-checked)."""
    import numpy as np

    meta_path = directory / "weights.json"
    if not meta_path.is_file():
        raise CheckpointError(f"no packed weights in {directory}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    hi = np.frombuffer(lzma.decompress((directory / "hi.xz").read_bytes()), dtype=np.uint8)
    lo = np.frombuffer((directory / "lo.bin").read_bytes(), dtype=np.uint8)
    if hi.size != lo.size or hi.size != meta["values"]:
        raise CheckpointError(f"{directory}: packed weights are incomplete")
    body = (hi.astype("<u2") << 8) | lo
    data = (directory / "header.bin").read_bytes() + body.astype("<u2").tobytes()
    if len(data) != meta["bytes"] or _sha(data) != meta["sha256"]:
        raise CheckpointError(f"{directory}: unpacked weights do not match their sha256")
    return data


def _bf16_safetensors(state: dict[str, Any]) -> bytes:
    import torch
    from safetensors.torch import save

    return save({k: v.detach().to(torch.bfloat16).contiguous().cpu() if v.is_floating_point() else v.contiguous().cpu()
                 for k, v in state.items()}, metadata={"format": "pt"})


def write_init(out: Path, weights: bytes, config: dict[str, Any], state: dict[str, Any] | None = None) -> dict[str, Any]:
    """``out/init``: packed weights, ``config.json`` and, for a resumed run, ``state.pt``."""
    import torch

    init = out / INIT
    shutil.rmtree(init, ignore_errors=True)
    meta = pack_safetensors(weights, init)
    (init / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    if state is not None:
        torch.save(state, init / "state.pt")
    return meta | {"resume_step": None if state is None else int(state["step"])}


def read_init(bundle: Path, workdir: Path) -> tuple[Path, dict[str, Any] | None]:
    """Unpack ``bundle/init`` into a backbone folder under ``workdir``; its loop state or None."""
    import torch

    init = bundle / INIT
    model_dir = workdir / "init_model"
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / "model.safetensors").write_bytes(unpack_safetensors(init))
    shutil.copyfile(init / "config.json", model_dir / "config.json")
    state = torch.load(init / "state.pt", map_location="cpu", weights_only=False) if (init / "state.pt").is_file() else None
    return model_dir, state


# ------------------------------------------------------------------ sizes
def tree_mib(root: Path, stay_home: Sequence[str] = STAY_HOME) -> float:
    """MiB of what travels without carry: tracked + untracked-not-ignored files, minus ``stay_home``."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return math.nan
    total = 0
    for rel in out.decode("utf-8", "replace").split("\0"):
        if not rel or any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in stay_home):
            continue
        try:
            total += (root / rel).stat().st_size
        except OSError:
            pass
    return _mib(total)


def folder_mib(path: Path) -> float:
    return _mib(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()))


# ------------------------------------------------------------------ prep
def prep(out: Path, *, mirror: Path | None, model: Path, corpus: Path, treebank: Path, limit: int | None = None,
         holdout: Path | None = None, travel_mib: float = TRAVEL_MIB, tree: float | None = None,
         margin_mib: float = 1.5, dev_mib: float = 0.5) -> dict[str, Any]:
    """Build the window's folder: treebank and scansion parts, ``init/`` from ``model``, then the
    doc-clean planes in the room that is left; returns the manifest (``CorpusError`` when over)."""
    from .bundle import build_bundle, build_pretrain, write_manifest

    t0 = time.process_time()
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    tree = tree_mib(Path.cwd()) if tree is None else tree
    if math.isnan(tree):
        raise CorpusError("cannot measure the tree that travels (not a git checkout?)")
    parts = ("treebank", "scansion") if mirror is not None else ("treebank",)  # scansion silver needs the mirror
    manifest = build_bundle(out, mirror=mirror or Path(), corpus=corpus, treebank=treebank, parts=parts,
                            limit=limit, max_mib=travel_mib)
    counts: dict[str, Any] = dict(manifest["counts"])
    settings: dict[str, Any] = dict(manifest["settings"])
    weights = as_bf16((model / "model.safetensors").read_bytes())
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    counts["init"] = write_init(out, weights, config) | {"source": str(model)}
    room = travel_mib - tree - folder_mib(out) - margin_mib
    if room < 2 * dev_mib:
        raise CorpusError(f"no room for the planes: tree {tree:.1f} MiB + folder {folder_mib(out):.1f} MiB of {travel_mib}")
    t1 = time.perf_counter()
    counts["pretrain"] = build_pretrain(corpus, out / "pretrain", limit=limit, holdout=holdout,
                                        max_bytes={"dev": int(dev_mib * 2**20), "train": int((room - dev_mib) * 2**20)})
    settings.setdefault("seconds", {})["pretrain"] = round(time.perf_counter() - t1, 1)
    settings["parts"] = ["pretrain", *parts, INIT]
    settings["holdout"] = str(holdout) if holdout else None
    settings["window"] = {"tree_mib": round(tree, 2), "travel_mib": travel_mib, "stay_home": list(STAY_HOME),
                          "wheels": "none: the call pretrains only (torch, numpy, safetensors are on the image)"}
    manifest = write_manifest(out, counts, settings)
    total = _mib(manifest["total_bytes"])
    if total + tree > travel_mib:
        raise CorpusError(f"{out} ({total:.1f} MiB) + the tree ({tree:.1f} MiB) exceed {travel_mib} MiB")
    manifest["prep_cpu_seconds"] = round(time.process_time() - t0, 1)
    return manifest


def main_prep(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain gpu prep", description="build the GPU window's folder")
    p.add_argument("--out", default=".bundle")
    p.add_argument("--mirror", required=True, help="the open-data mirror (scansion silver)")
    p.add_argument("--model", default="assets/models/grc_stoicheia_doc_clean", help="the backbone the call starts from")
    p.add_argument("--corpus", default="projects/corpus/corpus", help="corpus workflow output (doc_clean/)")
    p.add_argument("--treebank", default="projects/parse/corpus", help="parse data workflow output (fold0/)")
    p.add_argument("--holdout", default=None, help="held-out text kept out of the planes (default: MODEL/dev_sample.jsonl)")
    p.add_argument("--limit", type=int, help="records per part (tests)")
    p.add_argument("--travel-mib", type=float, default=TRAVEL_MIB)
    p.add_argument("--tree-mib", type=float, help="size of the tree that travels (default: measured with git)")
    args = p.parse_args(list(argv))
    model = Path(args.model)
    holdout = Path(args.holdout) if args.holdout else model / "dev_sample.jsonl"
    try:
        m = prep(Path(args.out), mirror=Path(args.mirror), model=model, corpus=Path(args.corpus),
                 treebank=Path(args.treebank), limit=args.limit, holdout=holdout if holdout.is_file() else None,
                 travel_mib=args.travel_mib, tree=args.tree_mib)
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    tree = m["settings"]["window"]["tree_mib"]
    total = _mib(m["total_bytes"])
    pre = m["counts"]["pretrain"]["train"]
    print(json.dumps({"folder": args.out, "folder_mib": round(total, 2), "tree_mib": tree,
                      "travels_mib": round(total + tree, 2), "train_letters": pre["letters"],
                      "train_records": pre["records"], "prep_cpu_seconds": m["prep_cpu_seconds"]}))
    print(f"{args.out}: {total:.1f} MiB (+ {tree:.1f} MiB of tree = {total + tree:.1f} of {args.travel_mib:.0f} MiB)")
    return 0


# ------------------------------------------------------------------ args
def device_command(bundle: str, *, budget_s: float, call_s: float, snapshot_s: float, extra: Sequence[str] = ()) -> str:
    sets = f" --set {' '.join(extra)}" if extra else ""
    return (
        "export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/lab; set -o pipefail; "
        f"python3 -m pretrain gpu train --bundle {bundle} --out $OUT --device cuda "
        f"--budget-s {budget_s:g} --call-s {call_s:g} --snapshot-s {snapshot_s:g}{sets} 2>&1 | tee $OUT/train.log"
    )


def main_args(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain gpu args", description="print the device call")
    p.add_argument("--bundle", default=".bundle")
    p.add_argument("--timeout-s", type=int, default=560)
    p.add_argument("--call-s", type=float, default=500.0, help="the call stops training and writes its last snapshot by then")
    p.add_argument("--budget-s", type=float, default=420.0, help="training seconds of the whole run (schedule length)")
    p.add_argument("--snapshot-s", type=float, default=60.0)
    p.add_argument("--set", dest="overrides", nargs="+", default=[], metavar="SECTION.KEY=VALUE")
    args = p.parse_args(list(argv))
    from .bundle import verify_bundle

    bundle = Path(args.bundle)
    try:
        manifest = verify_bundle(bundle)
        if not (bundle / INIT / "weights.json").is_file():
            raise CorpusError(f"{bundle} has no {INIT}/: build it with make gpu-prep")
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    if args.timeout_s > 560 or args.call_s + 30 > args.timeout_s:
        print("error: timeout_s must be <= 560 and leave >= 30 s after --call-s")
        return 2
    tree = tree_mib(Path.cwd())
    total = folder_mib(bundle)
    command = device_command(args.bundle, budget_s=args.budget_s, call_s=args.call_s, snapshot_s=args.snapshot_s,
                             extra=args.overrides)
    call = {"command": command, "carry": [args.bundle], "timeout_s": args.timeout_s}
    state = bundle / INIT / "state.pt"
    print("# 1. keep the shipped weights home (they do not travel; `off` before any commit):")
    print(f'DEVICE_TREE_PATHS="{" ".join(STAY_HOME)}" bash ../shared/hooks/device-tree on')
    print(f"# 2. one call of the device tool's run with (travels: {total:.1f} MiB + tree {tree:.1f} MiB"
          f" = {total + tree:.1f} of {TRAVEL_MIB:.0f}; {'resumes at step ' + str(manifest['counts'].get('init', {}).get('resume_step')) if state.is_file() else 'starts from the shipped weights'}):")
    print(json.dumps(call, indent=1))
    print("# 3. back here:")
    print(f'DEVICE_TREE_PATHS="{" ".join(STAY_HOME)}" bash ../shared/hooks/device-tree off')
    print("make gpu-install FILES=<files_at>      # if status.finished is false and time is left: make gpu-train FILES=<files_at>")
    if total + tree > TRAVEL_MIB or len(command) > 2000:
        print("error: over the transfer limit or the 2,000-character command limit")
        return 2
    return 0


# ------------------------------------------------------------------ snapshots in $OUT
class Snapshots:
    """Writes snapshots to ``out``: the new parts first, then ``gpu.json``, then the old parts go,
    so at most 2 x parts + 2 files exist at any moment (<= 8 for weights up to 45 MiB)."""

    def __init__(self, out: Path, *, part_mib: float = 15.0) -> None:
        self.out = out
        self.part_bytes = int(part_mib * 2**20)
        self.seq = 0
        self.files: list[str] = []
        self.manifest: dict[str, Any] = {}
        out.mkdir(parents=True, exist_ok=True)

    def write(self, blob: bytes, status: dict[str, Any]) -> dict[str, Any]:
        n_parts = -(-len(blob) // self.part_bytes)
        if 2 * n_parts + 2 > RETURN_FILES:
            raise CheckpointError(f"a snapshot of {n_parts} parts does not fit {RETURN_FILES} returned files")
        self.seq += 1
        parts: list[dict[str, Any]] = []
        for i in range(0, len(blob), self.part_bytes):
            name = f"w{self.seq:03d}.part{i // self.part_bytes:02d}"
            chunk = blob[i : i + self.part_bytes]
            (self.out / name).write_bytes(chunk)
            parts.append({"file": name, "bytes": len(chunk), "sha256": _sha(chunk)})
        manifest = {"format": FORMAT, "status": status, "bytes": len(blob), "sha256": _sha(blob), "parts": parts}
        _atomic_write(self.out / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
        for old in self.files:
            (self.out / old).unlink(missing_ok=True)
        self.files = [x["file"] for x in parts]
        self.manifest = manifest
        return manifest

    def update_status(self, extra: dict[str, Any]) -> dict[str, Any]:
        """Add to the last snapshot's status (the parts stay)."""
        self.manifest["status"] = self.manifest["status"] | extra
        _atomic_write(self.out / MANIFEST, (json.dumps(self.manifest, indent=1) + "\n").encode("utf-8"))
        return self.manifest


def read_snapshot(files: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify (sha256 of every part and of the whole) and load what a call returned:
    (the manifest, the snapshot: ``step``, ``model`` (bf16), ``model_config``, loop state)."""
    import torch

    path = files / MANIFEST
    if not path.is_file():
        raise CheckpointError(f"no {MANIFEST} in {files}: not what a GPU-window call returned")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise CheckpointError(f"{path}: unknown format {manifest.get('format')!r}")
    chunks = []
    for part in manifest["parts"]:
        f = files / part["file"]
        if not f.is_file():
            raise CheckpointError(f"missing part {f}")
        data = f.read_bytes()
        if len(data) != part["bytes"] or _sha(data) != part["sha256"]:
            raise CheckpointError(f"{f}: sha256 mismatch (a damaged transfer?)")
        chunks.append(data)
    blob = b"".join(chunks)
    if len(blob) != manifest["bytes"] or _sha(blob) != manifest["sha256"]:
        raise CheckpointError(f"{files}: the reassembled snapshot does not match its sha256")
    return manifest, torch.load(io.BytesIO(blob), map_location="cpu", weights_only=False)


# ------------------------------------------------------------------ train (device)
def _finite(x: float) -> float | None:
    return round(float(x), 4) if math.isfinite(x) else None


def _blob(trainer: Any, *, finished: bool) -> tuple[bytes, str]:
    import torch

    from .checkpoint import load_checkpoint

    which = "last"
    weights = {k: v.detach().cpu() for k, v in trainer.raw_model.state_dict().items()}
    best = trainer.out / "best.pt"
    if finished and best.is_file():
        weights, which = load_checkpoint(best)["model"], "best"
    state = {
        "format": FORMAT,
        "step": trainer.step,
        "finished": finished,
        "weights": which,
        "model": {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in weights.items()},
        "model_config": trainer.model_config.to_dict(),
        "schedule": trainer.schedule.state_dict(),
        "data": trainer.stream.state_dict(),
        "history": trainer.history,
        "train_seconds": trainer.train_seconds,
    }
    buf = io.BytesIO()
    torch.save(state, buf)
    return buf.getvalue(), which


def train_window(bundle: Path, out: Path, *, device: str, budget_s: float, call_s: float, snapshot_s: float,
                 overrides: Sequence[str] = (), run: Path | None = None, part_mib: float = 15.0,
                 t_start: float | None = None, call_steps: int = 0, synthetic_steps: int = 10,
                 synthetic_reserve_s: float = 30.0) -> dict[str, Any]:
    """The device call: train from ``bundle/init`` and keep ``out`` holding the latest snapshot.
    ``call_steps`` > 0 also stops the call after that many steps (tests: a call cut short).
    When more than ``synthetic_reserve_s`` are left after the last snapshot, ``synthetic_steps``
    steps on synthetic rows of the same shape and batch give the rate the real data is compared with."""
    import torch

    from .config import build_config
    from .trainer import Trainer

    t_start = time.perf_counter() if t_start is None else t_start
    deadline = t_start + call_s
    run = Path(run or Path(tempfile.gettempdir()) / "stoicheia-gpu-window")
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    init_dir, state = read_init(bundle, run)
    shape = json.loads((init_dir / "config.json").read_text(encoding="utf-8"))
    model_keys = [f"model.{k}={json.dumps(v)}" for k, v in shape.items() if k != "model_type"]
    cfg = build_config("mini", "published", [*model_keys, *GPU_RECIPE, *overrides,
                                            f"train.time_budget_s={budget_s}", f"train.device={device}"])
    trainer = Trainer(cfg, str(bundle), run, resume=False)
    from stoicheia_spacy.backbone import load_backbone

    if state is not None:
        trainer.raw_model.load_state_dict(load_backbone(init_dir).state_dict())
        trainer.schedule.load_state_dict(state["schedule"])
        trainer.stream.load_state_dict(state["data"])
        trainer.step = int(state["step"])
        trainer.history = list(state["history"])
        trainer.train_seconds = float(state.get("train_seconds", 0.0))
    else:
        trainer.raw_model.load_state_dict(load_backbone(init_dir).state_dict())
    trainer.raw_model.to(trainer.device)
    snaps = Snapshots(out, part_mib=part_mib)
    first_step = trainer.step
    info: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if trainer.device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "resumed_from_step": first_step if state is not None else None,
    }
    if state is None:  # the trainer's dev bpc of the weights the run starts from
        info["init_dev_bpc"] = _finite(trainer.evaluate())
    info["setup_s"] = round(time.perf_counter() - t_start, 1)
    last_snap = time.perf_counter()
    letters0 = sum(int(h.get("letters", 0)) for h in trainer.history)

    def status(finished: bool, which: str) -> dict[str, Any]:
        devs = [h for h in trainer.history if "dev_bpc" in h]
        letters = sum(int(h.get("letters", 0)) for h in trainer.history)
        call_train = max(time.perf_counter() - t_start - info["setup_s"], 1e-9)
        return info | {
            "step": trainer.step,
            "end_step": trainer.schedule.end_step,
            "max_steps": trainer.schedule.max_steps,
            "finished": finished,
            "weights": which,
            "best_dev_bpc": _finite(trainer.schedule.best),
            "best_step": trainer.schedule.best_step,
            "first_dev_bpc": _finite(devs[0]["dev_bpc"]) if devs else None,
            "last_dev_bpc": _finite(devs[-1]["dev_bpc"]) if devs else None,
            "letters": letters,
            "letters_this_call": letters - letters0,
            "letters_per_s": round((letters - letters0) / call_train),
            "train_seconds": round(trainer.train_seconds, 1),
            "call_seconds": round(time.perf_counter() - t_start, 1),
            "params": trainer.n_params,
        }

    def after_step(tr: Any, entry: dict[str, Any]) -> bool:
        nonlocal last_snap
        now = time.perf_counter()
        if tr.step == first_step + 1:
            info["first_step_s"] = round(now - t_start, 1)
            log.info("first step done %.1f s after the start", now - t_start)
        stop = now >= deadline or (call_steps > 0 and tr.step - first_step >= call_steps)
        if now - last_snap >= snapshot_s and not stop:
            blob, which = _blob(tr, finished=False)
            snaps.write(blob, status(False, which))
            last_snap = time.perf_counter()
        return stop

    trainer.after_step = after_step
    result = trainer.run()
    blob, which = _blob(trainer, finished=result.finished)
    manifest = snaps.write(blob, status(result.finished, which))
    if synthetic_steps > 0 and deadline - time.perf_counter() > synthetic_reserve_s:
        # the synthetic rate of the same shape, rows and batch in the same call (BENCHMARKS.md)
        from .bench import bench_preset

        t = cfg.train
        synth = bench_preset("mini", trainer.device, row_len=cfg.data.row_len, seg_len=cfg.data.max_window,
                             rows=t.micro_rows * t.accum, steps=synthetic_steps, warmup=2,
                             overrides={k: v for k, v in shape.items() if k != "model_type"})
        rate = manifest["status"]["letters_per_s"]
        manifest = snaps.update_status({"synthetic": {k: synth[k] for k in ("letters_s", "step_s", "rows", "row_len", "steps")}
                                        | {"peak_mem_gib": synth.get("peak_mem_gib")},
                                        "ratio_to_synthetic": round(rate / synth["letters_s"], 3)})
    return manifest["status"]


def main_train(argv: Sequence[str]) -> int:
    t_start = time.perf_counter()
    p = argparse.ArgumentParser(prog="python -m pretrain gpu train", description="the device call of the GPU window")
    p.add_argument("--bundle", default=".bundle")
    p.add_argument("--out", required=True, help="the device's $OUT")
    p.add_argument("--run", help="working folder on the machine's disk (default: the temp dir)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="cuda")
    p.add_argument("--budget-s", type=float, required=True, help="training seconds of the whole run")
    p.add_argument("--call-s", type=float, required=True, help="stop and write the last snapshot after this many seconds")
    p.add_argument("--snapshot-s", type=float, default=60.0)
    p.add_argument("--part-mib", type=float, default=15.0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--call-steps", type=int, default=0, help="also stop after this many steps (tests)")
    p.add_argument("--synthetic-steps", type=int, default=10, help="synthetic-row steps timed at the end (0: none)")
    p.add_argument("--set", dest="overrides", nargs="+", default=[], metavar="SECTION.KEY=VALUE")
    args = p.parse_args(list(argv))
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    try:
        status = train_window(Path(args.bundle), Path(args.out), device=args.device, budget_s=args.budget_s,
                              call_s=args.call_s, snapshot_s=args.snapshot_s, overrides=args.overrides,
                              run=Path(args.run) if args.run else None, part_mib=args.part_mib, t_start=t_start,
                              call_steps=args.call_steps, synthetic_steps=args.synthetic_steps)
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    print(json.dumps(status))
    return 0


# ------------------------------------------------------------------ repack (resume)
def repack(files: Path, bundle: Path) -> dict[str, Any]:
    """Make the returned snapshot the bundle's ``init/`` so that the next call resumes from it."""
    from .bundle import verify_bundle, write_manifest

    manifest, snap = read_snapshot(files)
    if snap["finished"]:
        raise CheckpointError(f"the run in {files} has finished (step {snap['step']}): install it (make gpu-install)")
    old = verify_bundle(bundle)
    state = {k: snap[k] for k in ("step", "schedule", "data", "history", "train_seconds")}
    config = dict(snap["model_config"])
    counts = dict(old["counts"])
    counts["init"] = write_init(bundle, _bf16_safetensors(snap["model"]), config, state) | {"source": str(files)}
    write_manifest(bundle, counts, dict(old["settings"]))
    return manifest["status"]


def main_repack(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain gpu repack", description="resume the next call from returned parts")
    p.add_argument("--files", required=True, help="the folder the call's files came back to")
    p.add_argument("--bundle", default=".bundle")
    args = p.parse_args(list(argv))
    try:
        status = repack(Path(args.files), Path(args.bundle))
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    print(f"{args.bundle}/{INIT}: resumes at step {status['step']} of {status['end_step']}")
    return 0


# ------------------------------------------------------------------ install (CPU)
def _quality(source: Path, dev: Path, json_path: Path, *, dev_letters: int, ngram_train: Path | None) -> dict[str, Any]:
    from stoicheia_lab.bench.quality import main as quality

    argv = ["--source", str(source), "--dev", str(dev), "--dev-letters", str(dev_letters),
            "--train", str(ngram_train) if ngram_train else "", "--json", str(json_path)]
    if quality(argv) != 0:
        raise CheckpointError(f"bench quality failed on {source}")
    return json.loads(json_path.read_text(encoding="utf-8"))


def install(files: Path, model: Path, *, metrics: Path | None, dev_letters: int = 30_000,
            ngram_train: Path | None = None, force: bool = False) -> dict[str, Any]:
    """Verify the returned parts, compare masked bpc before/after, install if it improves."""
    from stoicheia_spacy.backbone import StoicheiaConfig, save_backbone

    from .model import build_model

    manifest, snap = read_snapshot(files)
    dev = model / "dev_sample.jsonl"
    if not dev.is_file():
        raise CheckpointError(f"{model} has no dev_sample.jsonl: nothing to compare on")
    with tempfile.TemporaryDirectory(prefix=".gpu-install.", dir=model.parent) as tmp:
        cand = Path(tmp) / "candidate"
        net = build_model(StoicheiaConfig.from_dict(snap["model_config"]))
        net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in snap["model"].items()})
        import torch

        save_backbone(net, cand, dtype=torch.bfloat16)
        weights = (cand / "model.safetensors").read_bytes()
        (cand / "model.safetensors.sha256").write_text(f"{_sha(weights)}  model.safetensors\n", encoding="utf-8")
        before = _quality(model, dev, Path(tmp) / "before.json", dev_letters=dev_letters, ngram_train=ngram_train)
        after = _quality(cand, dev, Path(tmp) / "after.json", dev_letters=dev_letters, ngram_train=None)
        b, a = before["rows"][0]["bpc"], after["rows"][0]["bpc"]
        improved = a < b
        heads = sorted(d.name for d in model.iterdir() if d.is_dir())
        if improved or force:
            for name in ("config.json", "model.safetensors", "model.safetensors.sha256"):
                tmpf = model / f".{name}.new"
                shutil.copyfile(cand / name, tmpf)
                os.replace(tmpf, model / name)
    st = manifest["status"]
    result = {
        "format": FORMAT,
        "model": str(model),
        "installed": bool(improved or force),
        "improved": improved,
        "bench_quality": {"before": before, "after": after},
        "masked_bpc": {"before": b, "after": a, "random_init_control": before["rows"][1]["bpc"],
                       **({"ngram": before["rows"][2]["bpc"]} if len(before["rows"]) > 2 else {})},
        "window": {k: st.get(k) for k in ("device", "torch", "step", "end_step", "finished", "weights",
                                          "init_dev_bpc", "first_dev_bpc", "best_dev_bpc", "last_dev_bpc", "letters",
                                          "letters_this_call", "letters_per_s", "train_seconds", "call_seconds",
                                          "setup_s", "first_step_s", "resumed_from_step", "synthetic",
                                          "ratio_to_synthetic")},
        "heads_to_refit": {h: HEAD_RECIPES.get(h, "its recipe") for h in heads} if improved or force else {},
    }
    if metrics is not None:
        metrics.parent.mkdir(parents=True, exist_ok=True)
        metrics.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


def main_install(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain gpu install", description="verify, compare and install")
    p.add_argument("--files", required=True, help="the folder the call's files came back to")
    p.add_argument("--model", default="assets/models/grc_stoicheia_doc_clean")
    p.add_argument("--metrics", default="assets/metrics/backbone_gpu_window.json", help="'' for none")
    p.add_argument("--dev-letters", type=int, default=30_000)
    p.add_argument("--ngram-train", default="projects/pretrain/corpus/doc_clean.jsonl",
                   help="the n-gram baseline's text (skipped when absent)")
    p.add_argument("--force", action="store_true", help="install even if the bpc did not improve")
    args = p.parse_args(list(argv))
    ngram = Path(args.ngram_train) if args.ngram_train and Path(args.ngram_train).is_file() else None
    try:
        r = install(Path(args.files), Path(args.model), metrics=Path(args.metrics) if args.metrics else None,
                    dev_letters=args.dev_letters, ngram_train=ngram, force=args.force)
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    bpc = r["masked_bpc"]
    print(f"masked bpc: before {bpc['before']:.4f}, after {bpc['after']:.4f}, random-init control "
          f"{bpc['random_init_control']:.4f}: {'installed into ' + r['model'] if r['installed'] else 'NOT installed (no improvement)'}")
    for head, recipe in r["heads_to_refit"].items():
        print(f"re-fit {head} on the new backbone: {recipe}")
    return 0


COMMANDS = {"prep": main_prep, "args": main_args, "train": main_train, "repack": main_repack, "install": main_install}


def main(argv: Sequence[str]) -> int:
    argv = list(argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m pretrain gpu {{{','.join(COMMANDS)}}} ... (projects/pretrain/GPU.md)")
        return 2
    return COMMANDS[argv[0]](argv[1:])
