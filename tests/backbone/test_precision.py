"""Inference precision views of the backbone: int8 dynamic quantisation of the blocks' linear
layers and bf16, the float32 weights untouched, converted blocks shared between views."""

from __future__ import annotations

import pytest
import torch
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
from stoicheia_spacy.backbone.overlay import apply_overlay, fingerprint, trainable_names
from stoicheia_spacy.backbone.precision import PrecisionCache, precision_view
from stoicheia_spacy.errors import ConfigError

from .helpers import ILIAD_1, greek_inputs

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
