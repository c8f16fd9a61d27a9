"""The sha256 recorded beside a checkpoint is checked at load (the embedded default ships one)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from stoicheia_spacy.backbone import load_backbone
from stoicheia_spacy.errors import CheckpointError
from tests.conftest import TINY


def _copy_tiny(fixtures_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tiny"
    shutil.copytree(TINY, target)
    return target


def test_matching_checksum_loads(fixtures_dir: Path, tmp_path: Path) -> None:
    model_dir = _copy_tiny(fixtures_dir, tmp_path)
    weights = model_dir / "model.safetensors"
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    (model_dir / "model.safetensors.sha256").write_text(f"{digest}  model.safetensors\n")
    assert load_backbone(model_dir).config.d_model == 64


def test_checksum_mismatch_is_refused(fixtures_dir: Path, tmp_path: Path) -> None:
    model_dir = _copy_tiny(fixtures_dir, tmp_path)
    (model_dir / "model.safetensors.sha256").write_text("0" * 64 + "  model.safetensors\n")
    with pytest.raises(CheckpointError, match="sha256"):
        load_backbone(model_dir)


def test_shipped_default_matches_its_checksum() -> None:
    from stoicheia_spacy.assets import default_model_dir

    model = load_backbone(default_model_dir())
    assert model.config.d_model == 384 and model.config.depth == 12


def test_embedded_source_names_the_shipped_model() -> None:
    from stoicheia_spacy.errors import ModelNotAvailableError

    assert load_backbone("embedded:").config.depth == 12
    assert load_backbone("embedded:grc_stoicheia_doc_clean").config.d_model == 384
    with pytest.raises(ModelNotAvailableError, match="no_such_model"):
        load_backbone("embedded:no_such_model")
