"""The tiny golden checkpoint reproduces the published implementation's outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from stoicheia_spacy.backbone import StoicheiaEncoder, load_backbone
from tests.conftest import TINY

HEADS = ("char", "boundary", "dia", "cap", "punct")


@pytest.fixture(scope="module")
def golden(fixtures_dir: Path) -> tuple[Path, dict[str, torch.Tensor]]:
    directory = TINY
    return directory, load_file(str(directory / "io.safetensors"))


def _run(model: StoicheiaEncoder, io: dict[str, torch.Tensor]):
    with torch.no_grad():
        return model(
            io["input.input_ids"], io["input.boundary"], io["input.dia"], io["input.punct"],
            seg_id=io["input.seg_id"],
        )


@pytest.mark.parametrize("attn_impl", ["sdpa", "dense", "flash"])
def test_golden_outputs_within_1e4(golden, attn_impl: str) -> None:
    directory, io = golden
    model = load_backbone(directory, attn_impl=attn_impl)
    assert model.num_parameters() == 224_768
    out = _run(model, io)
    for head in HEADS:
        expected = io[f"expected.{head}"]
        got = getattr(out, head)
        assert got.shape == expected.shape
        assert torch.allclose(got, expected, atol=1e-4, rtol=0), head


def test_golden_detects_wrong_window(golden) -> None:
    directory, io = golden
    model = load_backbone(directory)
    model.config.char_window = 9
    out = _run(model, io)
    assert (out.char - io["expected.char"]).abs().max() > 1.0


def test_golden_detects_missing_segment_mask(golden) -> None:
    directory, io = golden
    model = load_backbone(directory)
    with torch.no_grad():
        out = model(io["input.input_ids"], io["input.boundary"], io["input.dia"], io["input.punct"],
                    seg_id=torch.zeros_like(io["input.seg_id"]))
    assert (out.char - io["expected.char"]).abs().max() > 1e-2


def test_hidden_states_layout(golden) -> None:
    directory, io = golden
    model = load_backbone(directory)
    with torch.no_grad():
        out = model(io["input.input_ids"], io["input.boundary"], io["input.dia"], io["input.punct"],
                    seg_id=io["input.seg_id"], output_hidden_states=True)
    assert out.hidden_states is not None
    assert len(out.hidden_states) == model.config.depth + 1
    emb = (model.e_char(io["input.input_ids"]) + model.e_bnd(io["input.boundary"])
           + model.e_dia(io["input.dia"]) + model.e_punct(io["input.punct"]))
    assert torch.allclose(out.hidden_states[0], emb)
    assert torch.allclose(model.norm_out(out.hidden_states[-1]), out.last_hidden)
    assert torch.allclose(model.head_char(out.last_hidden), out.char, atol=1e-5)
