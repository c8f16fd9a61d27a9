"""load_backbone / save_backbone: released format, prefixes, hub, and corrupt checkpoints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import huggingface_hub
import pytest
import torch
from safetensors.torch import load_file, save_file

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder, load_backbone, save_backbone
from stoicheia_spacy.errors import CheckpointError, ModelNotAvailableError
from tests.conftest import TINY

from .helpers import ILIAD_1, greek_inputs

REPO = "anonymous-stoicheia/Stoicheia-doc_clean"


@pytest.fixture()
def golden_dir(fixtures_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "golden"
    out.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(TINY / name, out / name)
    return out


def _logits(model: StoicheiaEncoder) -> torch.Tensor:
    with torch.no_grad():
        return model(**greek_inputs(ILIAD_1)).char


def test_save_then_load_is_exact(golden_dir: Path, tmp_path: Path) -> None:
    model = load_backbone(golden_dir)
    out = save_backbone(model, tmp_path / "copy")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    assert set(load_file(str(out / "model.safetensors"))) == set(load_file(str(golden_dir / "model.safetensors")))
    assert json.loads((out / "config.json").read_text())["model_type"] == "char_bert"
    again = load_backbone(out)
    assert torch.equal(_logits(model), _logits(again))


def test_bf16_checkpoint_loads_as_fp32(golden_dir: Path, tmp_path: Path) -> None:
    model = load_backbone(golden_dir)
    save_backbone(model, tmp_path / "bf16", dtype=torch.bfloat16)
    stored = load_file(str(tmp_path / "bf16" / "model.safetensors"))
    assert all(t.dtype == torch.bfloat16 for t in stored.values())
    loaded = load_backbone(tmp_path / "bf16")
    assert all(p.dtype == torch.float32 for p in loaded.parameters())
    ref, got = _logits(model), _logits(loaded)
    assert (ref - got).abs().max() < 0.1 * ref.abs().max()


@pytest.mark.parametrize("prefix", ["model.", "encoder.", "tagger.encoder."])
def test_prefixed_checkpoints(golden_dir: Path, tmp_path: Path, prefix: str) -> None:
    tensors = load_file(str(golden_dir / "model.safetensors"))
    renamed = {prefix + k: v for k, v in tensors.items()}
    if prefix != "model.":  # task checkpoints: capitalization input + heads beside the backbone
        renamed[prefix + "cap_emb.weight"] = torch.zeros(2, 64)
        renamed["head_mac.weight"] = torch.zeros(2, 64)
    out = tmp_path / "prefixed"
    out.mkdir()
    save_file(renamed, str(out / "model.safetensors"))
    shutil.copy(golden_dir / "config.json", out / "config.json")
    model = load_backbone(out, prefix=None if prefix == "model." else prefix)
    assert model.config.use_cap_input == (prefix != "model.")
    assert torch.allclose(_logits(model), _logits(load_backbone(golden_dir)))


def test_hub_repo_id_via_snapshot_download(golden_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake_snapshot_download(repo_id: str, **kwargs: object) -> str:
        calls.append(repo_id)
        return str(golden_dir)

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    model = load_backbone(REPO)
    assert calls == [REPO]
    assert model.config.d_model == 64


def test_hub_offline_names_repo_and_local_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with pytest.raises(ModelNotAvailableError) as info:
        load_backbone(REPO)
    assert REPO in str(info.value) and "local directory" in str(info.value)


def test_hub_failure_becomes_model_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(repo_id: str, **kwargs: object) -> str:
        raise OSError("connection refused")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", broken)
    with pytest.raises(ModelNotAvailableError, match="Stoicheia-doc_clean"):
        load_backbone(REPO)


def test_nonexistent_local_path(tmp_path: Path) -> None:
    with pytest.raises(ModelNotAvailableError):
        load_backbone(tmp_path / "nowhere" / "deeper")


def test_pickle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with pytest.raises(CheckpointError, match="pickle"):
        load_backbone(tmp_path / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match="only safetensors"):
        load_backbone(tmp_path)


def test_truncated_file(golden_dir: Path) -> None:
    weights = golden_dir / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) - 1000])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        load_backbone(golden_dir)


def test_flipped_header_bytes(golden_dir: Path) -> None:
    weights = golden_dir / "model.safetensors"
    data = bytearray(weights.read_bytes())
    for i in (9, 10, 40, 41, 42):
        data[i] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError):
        load_backbone(golden_dir)


def test_flipped_header_length(golden_dir: Path) -> None:
    weights = golden_dir / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[0] ^= 0x10
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError):
        load_backbone(golden_dir)


def test_garbage_file(golden_dir: Path) -> None:
    (golden_dir / "model.safetensors").write_text("μῆνιν ἄειδε θεά" * 100, encoding="utf-8")
    with pytest.raises(CheckpointError):
        load_backbone(golden_dir)


def test_missing_config_key(golden_dir: Path) -> None:
    cfg = json.loads((golden_dir / "config.json").read_text())
    del cfg["char_window"]
    (golden_dir / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="char_window"):
        load_backbone(golden_dir)


def test_wrong_shape_names_the_tensor(golden_dir: Path) -> None:
    tensors = load_file(str(golden_dir / "model.safetensors"))
    tensors["blocks.2.mlp.wi.weight"] = torch.zeros(320, 64)
    save_file(tensors, str(golden_dir / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"blocks\.2\.mlp\.wi\.weight has shape \(320, 64\), expected \(384, 64\)"):
        load_backbone(golden_dir)


def test_missing_and_unexpected_tensors_are_named(golden_dir: Path) -> None:
    tensors = load_file(str(golden_dir / "model.safetensors"))
    del tensors["blocks.1.attn.q_norm.w"]
    tensors["blocks.1.attn.bias"] = torch.zeros(64)
    save_file(tensors, str(golden_dir / "model.safetensors"))
    with pytest.raises(CheckpointError) as info:
        load_backbone(golden_dir)
    assert "missing tensor(s): blocks.1.attn.q_norm.w" in str(info.value)
    assert "unexpected tensor(s): blocks.1.attn.bias" in str(info.value)


def test_non_finite_weights_are_refused(golden_dir: Path) -> None:
    tensors = load_file(str(golden_dir / "model.safetensors"))
    tensors["norm_out.w"][3] = float("nan")
    save_file(tensors, str(golden_dir / "model.safetensors"))
    with pytest.raises(CheckpointError, match="norm_out.w"):
        load_backbone(golden_dir)


def test_restoration_metadata_embeddings_roundtrip(tmp_path: Path) -> None:
    cfg = StoicheiaConfig.preset("tiny", n_region=15, n_century=15)
    model = StoicheiaEncoder(cfg).eval()
    save_backbone(model, tmp_path / "restoration")
    names = set(load_file(str(tmp_path / "restoration" / "model.safetensors")))
    assert {"e_region.weight", "e_century.weight"} <= names
    loaded = load_backbone(tmp_path / "restoration")
    inputs = greek_inputs(ILIAD_1)
    with torch.no_grad():
        a = loaded(**inputs, region=torch.tensor([3]), century=torch.tensor([9]))
        b = loaded(**inputs)  # unknown metadata
    assert not torch.allclose(a.char, b.char)


def test_load_backbone_takes_the_stored_tensors_in_place(tmp_path: Path) -> None:
    """A float32 checkpoint is read into a meta-device skeleton (no random init, no copy), and
    the char encoder then holds those very tensors (one backbone in memory, not two)."""
    from stoicheia_spacy.encoder.model import (
        build_char_encoder,
        set_backbone_weights,
        torch_backbone,
    )

    config = StoicheiaConfig(d_model=32, n_heads=2, depth=2, char_window=8)
    torch.manual_seed(0)
    reference = StoicheiaEncoder(config).eval()
    save_backbone(reference, tmp_path)
    loaded = load_backbone(tmp_path)
    assert all(not p.is_meta for p in loaded.parameters())
    for name, tensor in reference.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], tensor), name
    model = build_char_encoder(d_model=32, n_heads=2, depth=2, char_window=8)
    set_backbone_weights(model, loaded)
    target = torch_backbone(model)
    shared = {p.untyped_storage().data_ptr() for p in target.parameters()}
    assert shared == {p.untyped_storage().data_ptr() for p in loaded.parameters()}
