"""One device call of the fine-tuning chain: train the next arms, return finished weights in parts.

    python3 projects/finetune/scripts/gpu_step.py setup --bundle .bundle --work /tmp/ft
    python3 projects/finetune/scripts/gpu_step.py train --work /tmp/ft --out $OUT --budget-s 540 \
        --backbone .ftw/grc_stoicheia_doc_clean [--arms joint_s0,frozen_s0,...] [--gpu 0]

``setup`` unpacks the bundle's fold-0 treebank (``python -m pretrain bundle --unpack-treebank``),
turns the scansion silver into DocBins and the papyri into JSON lines under WORK (the machine's
disk; seconds). ``train`` walks ARMS in order: an arm not done gets a ``chain.py`` call for the
time left (each arm resumes from its ``model-last`` on the next call), the restoration overlay
arm one ``finetune.py`` run of the time left; an arm done and not yet returned is exported (bf16)
and cut into <= 15 MiB parts (``python -m pretrain split``) under OUT/ARM while fewer than
``--max-files`` part files were written (8 files per transfer; frozen-backbone arms travel
without their unchanged backbone). OUT/status.json lists every arm's state. Arms whose parts
came back in an earlier session: pass ``--skip``.

    python projects/finetune/scripts/gpu_step.py install --files FILES_AT --arm joint_s0   (CPU)

reassembles an arm's parts (sha256 checked) into projects/finetune/training/returned/ARM and puts
a frozen arm's backbone back (the shipped one, or the returned joint arm's).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CONFIGS = REPO / "assets" / "configs" / "finetune"
FROZEN = {f"components.{c}.model.tok2vec.grad_factor": 0.0
          for c in ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")}
NO_AUX = {"components.stoicheia_diffusion.weight": 0.0}
RANDOM = {"initialize.components.stoicheia_encoder.loader.random_init": True}
SCAN_FROZEN = {"components.stoicheia_scanner.model.grad_factor": 0.0, **NO_AUX}


def arm_spec(arm: str) -> tuple[str, dict[str, Any]]:
    """ARM = NAME_sSEED -> (config file or "restore", overrides). Names:
    joint (design A), frozen (B: heads on the frozen base), random (control of joint), nodiff
    (joint without the auxiliary loss), scanner (end to end), scanner_frozen (B), scanner_joint
    (A: heads on the joint_sSEED backbone, frozen), scanner_random (control), restore (B overlay)."""
    name, _, seed = arm.rpartition("_s")
    if not name or not seed.isdigit():
        raise SystemExit(f"arm {arm!r}: expected NAME_sSEED, e.g. joint_s0")
    base = {"system.seed": int(seed)}
    table: dict[str, tuple[str, dict[str, Any]]] = {
        "joint": ("joint.cfg", {}), "frozen": ("joint.cfg", {**FROZEN, **NO_AUX}),
        "random": ("joint.cfg", RANDOM), "nodiff": ("joint.cfg", NO_AUX),
        "scanner": ("scanner.cfg", {}), "scanner_frozen": ("scanner.cfg", SCAN_FROZEN),
        "scanner_joint": ("scanner.cfg", {**SCAN_FROZEN, "paths.backbone": f"@joint_s{seed}"}),
        "scanner_random": ("scanner.cfg", RANDOM), "restore": ("restore", {}),
    }
    if name not in table:
        raise SystemExit(f"arm {arm!r}: unknown name {name!r}; known: {sorted(table)}")
    config, overrides = table[name]
    return config, {**base, **overrides}


def _chain() -> Any:
    spec = importlib.util.spec_from_file_location("finetune_chain", HERE / "chain.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def setup(bundle: Path, work: Path) -> None:
    corpus = work / "corpus"
    subprocess.run([sys.executable, "-m", "pretrain", "bundle", "--out", str(bundle),
                    "--unpack-treebank", str(corpus)], check=True, cwd=REPO)
    subprocess.run([sys.executable, str(HERE / "silver_docbin.py"), str(bundle / "scansion" / "silver.jsonl.xz"),
                    str(corpus / "scansion")], check=True)
    with lzma.open(bundle / "papyri" / "ddbdp.jsonl.xz", "rb") as src, (corpus / "papyri.jsonl").open("wb") as dst:
        shutil.copyfileobj(src, dst)
    print(f"setup: {sorted(str(p.relative_to(work)) for p in corpus.rglob('*') if p.is_file())}")


def _data(config: str, corpus: Path) -> dict[str, str]:
    if config == "joint.cfg":
        return {"paths.train": str(corpus / "fold0" / "train.spacy"), "paths.dev": str(corpus / "fold0" / "dev.spacy")}
    return {"paths.train": str(corpus / "scansion" / "train.spacy"), "paths.dev": str(corpus / "scansion" / "dev.spacy")}


def train_arm(arm: str, work: Path, backbone: Path, seconds: float, gpu: int,
              extra: dict[str, Any] | None = None) -> bool:
    config, overrides = arm_spec(arm)
    out = work / "training" / arm
    if config == "restore":
        if (out / "done").is_file():
            return True
        cmd = [sys.executable, str(REPO / "projects" / "restore" / "scripts" / "finetune.py"), "--config",
               str(CONFIGS / "restore.cfg"), "--mirror", str(work), "--corpus", str(work / "corpus" / "papyri.jsonl"),
               "--literary-ratio", "0", "--init", str(backbone), "--seed", str(overrides["system.seed"]),
               "--minutes", f"{max(1.0, seconds / 60 - 0.5):.2f}", "--out", str(out)]
        subprocess.run(cmd, check=True)
        (out / "done").write_text("1")
        return True
    chain = _chain()
    source = overrides.get("paths.backbone", str(backbone))
    if source.startswith("@"):  # another arm's fine-tuned backbone
        dep = work / "training" / source[1:] / "model-best"
        if not dep.is_dir():
            print(f"{arm}: waits for {source[1:]}")
            return False
        source = str(chain.export_backbone(dep, work / "export" / f"{source[1:]}_backbone"))
    overrides = {**overrides, **_data(config, work / "corpus"), **(extra or {}), "paths.backbone": source}
    return bool(chain.run_call(CONFIGS / config, out, overrides, seconds, gpu)["done"])


def frozen_source(arm: str) -> str | None:
    """The backbone a frozen-backbone arm read ("base" or another arm), None if it trains it."""
    _, overrides = arm_spec(arm)
    if not any(k.endswith("grad_factor") for k in overrides):
        return None
    return str(overrides["paths.backbone"])[1:] if "paths.backbone" in overrides else "base"


def export_arm(arm: str, work: Path) -> Path:
    """bf16 pipeline (or the overlay folder) -> WORK/outgoing/ARM/parts.json + pieces.
    A frozen-backbone arm travels without its (unchanged) backbone: ``backbone.txt`` names it
    and ``install`` puts it back."""
    trained = work / "training" / arm
    if arm_spec(arm)[0] == "restore":
        src = trained
    else:
        model = trained / ("model-last" if arm.startswith("scanner") else "model-best")
        src = _chain().export_bf16(model, work / "export" / arm)
        source = frozen_source(arm)
        if source is not None:
            (src / "stoicheia_encoder" / "model.safetensors").unlink()
            (src / "backbone.txt").write_text(source + "\n")
    staged = work / "outgoing" / arm
    if staged.exists():
        shutil.rmtree(staged)
    subprocess.run([sys.executable, "-m", "pretrain", "split", str(src), "--out", str(staged)], check=True, cwd=REPO)
    return staged


def install(files: Path, arm: str, dest: Path, base: Path) -> Path:
    """CPU: reassemble ARM's parts (sha256 checked) into DEST/ARM; put a frozen arm's backbone back."""
    target = dest / arm
    subprocess.run([sys.executable, "-m", "pretrain", "reassemble", "--parts", str(files / arm), "--install",
                    str(target)], check=True, cwd=REPO)
    marker = target / "backbone.txt"
    if marker.is_file():
        source = marker.read_text().strip()
        weights = base / "model.safetensors" if source == "base" else dest / source / "stoicheia_encoder" / "model.safetensors"
        if not weights.is_file():
            raise SystemExit(f"{arm} read the backbone of {source!r}: install that first ({weights} is missing)")
        shutil.copy2(weights, target / "stoicheia_encoder" / "model.safetensors")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("setup", "train", "install"))
    ap.add_argument("--arm", default=None, help="install: the arm to install")
    ap.add_argument("--files", type=Path, default=None, help="install: where the returned files lie")
    ap.add_argument("--dest", type=Path, default=HERE.parent / "training" / "returned")
    ap.add_argument("--bundle", type=Path, default=REPO / ".bundle")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ft"))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--backbone", type=Path, default=REPO / ".ftw" / "grc_stoicheia_doc_clean")
    ap.add_argument("--arms", default="joint_s0,scanner_joint_s0,frozen_s0,random_s0,scanner_frozen_s0,restore_s0,"
                    "nodiff_s0,scanner_s0,scanner_random_s0,joint_s1,random_s1,joint_s2,random_s2")
    ap.add_argument("--skip", default="", help="arms already returned in an earlier session")
    ap.add_argument("--budget-s", type=float, default=540.0)
    ap.add_argument("--max-files", type=int, default=6,
                    help="part files returned per call (8 per transfer: status.json and the log take two)")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="config overrides for every spaCy arm (JSON values), e.g. training.max_steps=2000")
    args = ap.parse_args(argv)
    extra = {k: json.loads(v) for k, v in (item.split("=", 1) for item in args.set)}
    if args.command == "setup":
        setup(args.bundle, args.work)
        return 0
    if args.command == "install":
        if not args.arm or not args.files:
            ap.error("install needs --arm and --files")
        print(install(args.files, args.arm, args.dest, REPO / "assets" / "models" / "grc_stoicheia_doc_clean"))
        return 0
    if not (args.work / "corpus" / "fold0" / "train.spacy").is_file():
        raise SystemExit(f"{args.work}: no data (a fresh machine?): run `gpu_step.py setup` first")
    end = time.monotonic() + args.budget_s
    skip = set(filter(None, args.skip.split(",")))
    arms = [a for a in args.arms.split(",") if a and a not in skip]
    returned_path = args.work / "returned.json"
    returned: list[str] = json.loads(returned_path.read_text()) if returned_path.is_file() else []
    state: dict[str, str] = {}
    for arm in arms:
        left = end - time.monotonic() - 45  # export + split margin
        if arm in returned:
            state[arm] = "returned"
            continue
        if left < 30:
            state[arm] = "pending"
            continue
        state[arm] = "done" if train_arm(arm, args.work, args.backbone, left, args.gpu, extra) else "running"
    if args.out is not None:
        n = 0
        for arm in arms:
            if state.get(arm) != "done":
                continue
            staged = export_arm(arm, args.work)
            count = sum(1 for p in staged.iterdir() if p.is_file())
            if n and n + count > args.max_files:
                state[arm] = "done, returns next call"
                continue
            args.out.mkdir(parents=True, exist_ok=True)
            shutil.move(str(staged), str(args.out / arm))
            returned.append(arm)
            state[arm] = "returned now"
            n += count
        returned_path.write_text(json.dumps(returned))
        args.out.mkdir(parents=True, exist_ok=True)
        status = {arm: {"state": state.get(arm, "pending"), **(json.loads(p.read_text()) if (
            p := args.work / "training" / arm / "status.json").is_file() else {})} for arm in arms}
        (args.out / "status.json").write_text(json.dumps(status, indent=1))
    print(json.dumps(state, indent=1))
    os.sync()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
