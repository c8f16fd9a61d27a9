"""Inference precision views of the backbone: the fused float32 forward, int8 dynamic
quantisation of the blocks' linear layers and bf16, the float32 weights untouched, converted
blocks shared between views; every offered precision runs, and the faithful one keeps the
golden backbone fixture's logits and decisions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder, load_backbone
from stoicheia_spacy.backbone.fused import LOCAL_QUERY_BLOCK, FusedBlock, onednn_available
from stoicheia_spacy.backbone.overlay import apply_overlay, fingerprint, trainable_names
from stoicheia_spacy.backbone.precision import FAITHFUL, PRECISIONS, PrecisionCache, precision_view
from stoicheia_spacy.errors import ConfigError

from .helpers import ILIAD_1, greek_inputs


def _golden() -> Path | None:
    """The golden released-task fixtures beside the checkout or the data mirror (as tests/release)."""
    roots = [Path(__file__).resolve().parents[3] / "shared"]
    if os.environ.get("STOICHEIA_ASSET_MIRROR"):
        roots.append(Path(os.environ["STOICHEIA_ASSET_MIRROR"]).parent)
    found = [root / "spec/golden/released_tasks" for root in roots]
    return next((path for path in found if (path / "backbone.json").is_file()), None)


GOLDEN = _golden()
needs_onednn = pytest.mark.skipif(not onednn_available(), reason="torch built without oneDNN")

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def model() -> StoicheiaEncoder:
    torch.manual_seed(0)
    return StoicheiaEncoder(StoicheiaConfig(d_model=64, n_heads=4, depth=4, char_window=8)).eval()


def _char(module: torch.nn.Module) -> torch.Tensor:
    with torch.inference_mode():
        return module(**greek_inputs(ILIAD_1)).char


def test_float32_is_the_module_itself(model: StoicheiaEncoder) -> None:
    assert precision_view(model, "float32") is model


def test_int8_quantises_the_blocks_and_leaves_the_weights(model: StoicheiaEncoder) -> None:
    before = {name: t.clone() for name, t in model.state_dict().items()}
    view = precision_view(model, "int8")
    assert isinstance(view.blocks[0].attn.qkv, DynamicLinear)
    assert isinstance(view.blocks[3].mlp.wo, DynamicLinear)
    assert isinstance(model.blocks[0].attn.qkv, torch.nn.Linear)  # the float module is unchanged
    assert view.head_char is model.head_char and view.e_char is model.e_char  # not converted: shared
    assert view.blocks[0].n1 is model.blocks[0].n1
    ref, got = _char(model), _char(view)
    assert (ref.argmax(-1) == got.argmax(-1)).float().mean() > 0.9
    assert float((ref - got).abs().max()) < 0.5
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, before[name]), name


def test_bfloat16_view_runs_in_bf16(model: StoicheiaEncoder) -> None:
    view = precision_view(model, "bfloat16")
    assert view.blocks[1].attn.qkv.weight.dtype == torch.bfloat16
    assert model.blocks[1].attn.qkv.weight.dtype == torch.float32
    ref, got = _char(model), _char(view)
    assert got.dtype == torch.float32
    assert (ref.argmax(-1) == got.argmax(-1)).float().mean() > 0.9


def test_views_of_an_overlay_share_the_untouched_quantised_blocks(model: StoicheiaEncoder) -> None:
    names = trainable_names(model, 1)
    state = model.state_dict()
    tensors = {name: state[name] + 0.01 for name in names}
    overlaid = apply_overlay(model, tensors, {"base_fingerprint": fingerprint(model, names)})
    cache = PrecisionCache()
    base_view, top_view = precision_view(model, "int8", cache), precision_view(overlaid, "int8", cache)
    assert top_view.blocks[0].attn.qkv is base_view.blocks[0].attn.qkv  # frozen block: one int8 copy
    assert top_view.blocks[3].attn.qkv is not base_view.blocks[3].attn.qkv  # fine-tuned block: its own
    assert precision_view(model, "int8", cache) is base_view


def test_unknown_precision_is_refused(model: StoicheiaEncoder) -> None:
    with pytest.raises(ConfigError, match="precision must be one of"):
        precision_view(model, "int4")


def test_encoder_setting_validates_the_precision() -> None:
    from stoicheia_spacy.encoder.pipe import EncoderSettings

    assert EncoderSettings().precision == "float32"
    assert EncoderSettings(precision="int8").precision == "int8"
    with pytest.raises(ConfigError, match="precision"):
        EncoderSettings(precision="fp8")


@needs_onednn
def test_float32_fused_is_float32_up_to_rounding(model: StoicheiaEncoder) -> None:
    view: Any = precision_view(model, "float32-fused")
    assert isinstance(view.blocks[0], FusedBlock) and view.blocks[0].attn.qkv is model.get_submodule("blocks.0.attn.qkv")  # no copy
    for text, seed in ((ILIAD_1, 0), (ILIAD_1 * 120, 1)):  # 120 lines: the chunked path (> 2 x 2048 positions)
        inputs = greek_inputs(text, seed=seed)
        with torch.inference_mode():
            ref, got = model(**inputs), view(**inputs)
        for head in ("char", "boundary", "dia", "cap", "punct"):
            torch.testing.assert_close(getattr(got, head), getattr(ref, head), atol=1e-5, rtol=1e-5)
        assert torch.equal(got.char.argmax(-1), ref.char.argmax(-1))


@needs_onednn
def test_float32_fused_local_attention_in_query_blocks_is_float32_up_to_rounding() -> None:
    # a window wider than LOCAL_QUERY_BLOCK: the fused local attention reads 64-query blocks
    torch.manual_seed(0)
    wide = StoicheiaEncoder(StoicheiaConfig(d_model=64, n_heads=4, depth=4, char_window=LOCAL_QUERY_BLOCK + 32)).eval()
    inputs = greek_inputs(ILIAD_1 * 8)
    seg = torch.zeros_like(inputs["input_ids"])
    seg[:, 150:] = 1  # two packed documents: the segment mask inside the blocks
    with torch.inference_mode():
        ref, got = wide(**inputs, seg_id=seg).char, precision_view(wide, "float32-fused")(**inputs, seg_id=seg).char
    assert inputs["input_ids"].shape[1] > 2 * wide.config.char_window
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)
    assert torch.equal(got.argmax(-1), ref.argmax(-1))


@needs_onednn
@pytest.mark.parametrize("precision", [p for p in PRECISIONS if p != "float32"])
def test_every_precision_runs_packed_rows(model: StoicheiaEncoder, precision: str) -> None:
    inputs = greek_inputs(ILIAD_1)
    seg = torch.zeros_like(inputs["input_ids"])
    seg[:, 30:] = 1  # two packed documents in the row
    with torch.inference_mode():
        ref = model(**inputs, seg_id=seg).char
        got = precision_view(model, precision)(**inputs, seg_id=seg).char
    assert got.dtype == torch.float32 and got.shape == ref.shape
    assert (ref.argmax(-1) == got.argmax(-1)).float().mean() > 0.9


@needs_onednn
@pytest.mark.skipif(GOLDEN is None, reason="golden released-task fixtures not beside the checkout")
@pytest.mark.parametrize("precision", FAITHFUL)
def test_faithful_precisions_keep_the_golden_backbone(precision: str) -> None:
    assert GOLDEN is not None
    backbone = precision_view(load_backbone(GOLDEN / "backbone"), precision)
    cases = json.loads((GOLDEN / "backbone.json").read_text(encoding="utf-8"))["cases"]
    for case in cases:
        feed = {key: torch.tensor([case["input"][key]]) for key in ("input_ids", "boundary", "dia", "punct", "seg_id")}
        with torch.inference_mode():
            out = backbone(feed.pop("input_ids"), feed.pop("boundary"), feed.pop("dia"), feed.pop("punct"), **feed)
        for head in ("char", "boundary", "dia", "cap", "punct"):
            expected = np.asarray(case["expected"][head])
            got = getattr(out, head)[0, : expected.shape[0], : expected.shape[1]].numpy()
            np.testing.assert_allclose(got, expected, atol=1e-3, rtol=0, err_msg=head)
            assert got.argmax(1).tolist() == case["expected"][f"{head}_argmax"], head


def test_faithful_precisions_are_offered() -> None:
    assert FAITHFUL[0] == "float32" and set(FAITHFUL) <= set(PRECISIONS)
