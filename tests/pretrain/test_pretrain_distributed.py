"""Two gloo processes on CPU give the same losses as one process with the same global
batch (DDP and FSDP), launched through ``torch.distributed.run`` like ``torchrun``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(corpus: Path, out: Path, nproc: int, *extra: str) -> list[float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    launcher = (
        [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
        if nproc > 1
        else [sys.executable]
    )
    cmd = [
        *launcher, "-m", "pretrain", "train", "--preset", "tiny", "--train-preset", "smoke",
        "--data", str(corpus), "--out", str(out), "--device", "cpu", "--threads", "1",
        "--set", "train.max_steps=2", "train.micro_rows=1", "data.dev_fraction=0.2",
        "data.sampler=published", *extra,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["loss"] for line in lines]


@pytest.mark.slow
def test_two_processes_match_one_with_the_same_global_batch(corpus: Path, tmp_path: Path) -> None:
    single = _run(corpus, tmp_path / "one", 1, "train.accum=2")
    assert len(single) == 2
    ddp = _run(corpus, tmp_path / "ddp", 2, "train.accum=1", "--dist", "ddp")
    assert ddp == pytest.approx(single, rel=0, abs=1e-5)
    fsdp = _run(corpus, tmp_path / "fsdp", 2, "train.accum=1", "--dist", "fsdp")
    assert fsdp == pytest.approx(single, rel=0, abs=1e-5)
    assert (tmp_path / "fsdp" / "export" / "model.safetensors").is_file()
