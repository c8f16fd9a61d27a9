"""Fixtures for the Thinc layer tests: the golden tiny checkpoint and its model config."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

#: ``stoicheia.CharEncoder.v1`` settings of the golden tiny checkpoint (short rows so
#: that packing and windowing are exercised by short real sentences).
TINY_MODEL = {
    "@architectures": "stoicheia.CharEncoder.v1",
    "d_model": 64, "n_heads": 4, "depth": 4, "char_window": 8,
    "max_length": 48, "overlap": 12,
}


@pytest.fixture(scope="session")
def tiny_checkpoint(fixtures_dir: Path) -> Path:
    path = fixtures_dir / "char_bert_tiny"
    assert (path / "model.safetensors").is_file(), "golden tiny checkpoint fixture is missing"
    return path


@pytest.fixture()
def tiny_model_config() -> dict:
    return dict(TINY_MODEL)
