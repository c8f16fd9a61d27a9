from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from pretrain.checkpoint import atomic_torch_save, load_checkpoint
from pretrain.config import build_config
from pretrain.trainer import SimulatedCrash, Trainer
from stoicheia_spacy.errors import CheckpointError

OVERRIDES = [
    "data.dev_fraction=0.25",
    "data.sampler=iid",
    "train.max_steps=10",
    "train.ckpt_every=4",
    "train.eval_every=3",
    "train.accum=2",
    "train.micro_rows=1",
    "train.threads=1",
    "train.device=cpu",
]


def _trainer(corpus: Path, encoder: Any, out: Path, *extra: str, resume: bool = True) -> Trainer:
    cfg = build_config("tiny", "smoke", [*OVERRIDES, *extra])
    return Trainer(cfg, str(corpus), out, resume=resume, encoder=encoder)


def test_crash_and_resume_reproduce_the_uninterrupted_run(corpus: Path, encoder: Any, tmp_path: Path) -> None:
    full = _trainer(corpus, encoder, tmp_path / "full").run()
    assert full.step == 10 and len(full.losses()) == 10
    assert full.losses()[-1] < full.losses()[0]

    with pytest.raises(SimulatedCrash):
        _trainer(corpus, encoder, tmp_path / "crash", "train.fail_at_step=6").run()
    assert load_checkpoint(tmp_path / "crash" / "last.pt")["step"] == 4  # steps 5-6 are lost
    resumed = _trainer(corpus, encoder, tmp_path / "crash").run()
    assert resumed.step == 10
    assert resumed.losses() == pytest.approx(full.losses(), rel=0, abs=1e-6)
    dev = [h["dev_bpc"] for h in resumed.history if "dev_bpc" in h]
    assert dev == pytest.approx([h["dev_bpc"] for h in full.history if "dev_bpc" in h], abs=1e-6)
    lines = (tmp_path / "crash" / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["step"] for x in lines] == list(range(1, 11))


def test_best_step_is_exported_in_the_released_format(corpus: Path, encoder: Any, tmp_path: Path) -> None:
    from stoicheia_spacy.backbone import load_backbone

    out = tmp_path / "run"
    result = _trainer(corpus, encoder, out, "train.max_steps=6").run()
    best = load_checkpoint(out / "best.pt")
    assert best["step"] == result.best_step and best["dev_bpc"] == pytest.approx(result.best_dev_bpc)
    assert (out / "export" / "config.json").is_file() and (out / "export" / "model.safetensors").is_file()
    model = load_backbone(out / "export")
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, best["model"][name])
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["preset"] == "tiny"


def test_export_random_cli_is_seeded(tmp_path: Path) -> None:
    from pretrain.__main__ import main
    from stoicheia_spacy.backbone import load_backbone

    assert main(["export-random", "--preset", "tiny", "--out", str(tmp_path / "a"), "--seed", "3"]) == 0
    assert main(["export-random", "--preset", "tiny", "--out", str(tmp_path / "b"), "--seed", "3"]) == 0
    assert main(["export-random", "--preset", "tiny", "--out", str(tmp_path / "c"), "--seed", "4"]) == 0
    a, b, c = (load_backbone(tmp_path / x).state_dict() for x in "abc")
    assert a.keys() == c.keys() and "blocks.3.attn.qkv.weight" in a
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["e_char.weight"], c["e_char.weight"])


def test_checkpoints_are_atomic_and_corruption_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "last.pt"
    atomic_torch_save({"step": 1}, path)
    atomic_torch_save({"step": 2}, path)
    assert load_checkpoint(path)["step"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]  # no temp files left
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(CheckpointError):
        load_checkpoint(path)
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path / "absent.pt")
