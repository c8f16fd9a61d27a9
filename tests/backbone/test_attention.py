"""Every attention implementation agrees with the dense reference (fp32 tolerance)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from stoicheia_spacy import alphabet
from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
from stoicheia_spacy.backbone.attention import (
    blocked_local_attention,
    build_plan,
    dense_attention,
    segment_global_attention,
)

from .helpers import ILIAD_1, ODYSSEY_1, greek_inputs, random_inputs


def _model(attn_impl: str, char_window: int = 4, depth: int = 4) -> StoicheiaEncoder:
    torch.manual_seed(0)
    cfg = StoicheiaConfig.preset("tiny", char_window=char_window, depth=depth, attn_impl=attn_impl)
    model = StoicheiaEncoder(cfg).eval()
    with torch.no_grad():  # larger weights so that mistakes show
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(8.0)
    return model


def _segments(B: int, T: int, cuts: list[int]) -> torch.Tensor:
    seg = torch.zeros(B, T, dtype=torch.long)
    for c in cuts:
        if c < T:
            seg[:, c:] += 1
    return seg


def _qkv(B: int, T: int, H: int = 2, D: int = 8, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, T, H, D, generator=g) for _ in range(3))


@pytest.mark.parametrize("T", [1, 3, 4, 5, 13, 32, 37])
@pytest.mark.parametrize("packed", [False, True])
def test_kernels_match_dense(T: int, packed: bool) -> None:
    w = 4
    q, k, v = _qkv(2, T, seed=T)
    seg = _segments(2, T, [5, 11] if packed else [])
    seg[1] = seg[1].flip(0)  # second row: a different layout of segments
    plan = build_plan(seg, w, "sdpa")
    ref_local = dense_attention(q, k, v, plan.dense_mask(local=True))
    ref_global = dense_attention(q, k, v, plan.dense_mask(local=False))
    assert torch.allclose(blocked_local_attention(q, k, v, plan), ref_local, atol=1e-5)
    for block in (1, 2, 3, 8):  # query blocks smaller and larger than the window
        assert torch.allclose(blocked_local_attention(q, k, v, plan, block), ref_local, atol=1e-5), block
    assert torch.allclose(segment_global_attention(q, k, v, plan), ref_global, atol=1e-5)


def test_noncontiguous_segment_ids_fall_back_to_masked_global() -> None:
    q, k, v = _qkv(1, 12)
    seg = torch.tensor([[0, 0, 0, 1, 1, 1, 0, 0, 0, 2, 2, 2]])
    plan = build_plan(seg, 4, "sdpa")
    assert not plan.contiguous
    ref = dense_attention(q, k, v, plan.dense_mask(local=False))
    assert torch.allclose(segment_global_attention(q, k, v, plan), ref, atol=1e-5)
    ref_l = dense_attention(q, k, v, plan.dense_mask(local=True))
    assert torch.allclose(blocked_local_attention(q, k, v, plan), ref_l, atol=1e-5)


def test_local_mask_is_banded_not_dense() -> None:
    T, w = 1000, 8
    plan = build_plan(torch.zeros(1, T, dtype=torch.long), w, "sdpa")
    mask = plan.local_block_mask()
    n = -(-T // w)
    assert tuple(mask.shape) == (n, 1, w, 3 * w)  # O(T*w), not T x T
    assert tuple(plan.local_block_mask(2).shape) == (-(-T // 2), 1, 2, 2 + 2 * w)
    assert "dense_local" not in plan._cache


@pytest.mark.parametrize("impl", ["sdpa", "flash"])
@pytest.mark.parametrize("T", [1, 3, 9, 30])
def test_model_paths_match_dense_reference(impl: str, T: int) -> None:
    dense, other = _model("dense"), _model(impl)
    inputs = random_inputs(2, T, seed=T)
    seg = _segments(2, T, [7, 20])
    inputs["input_ids"][1, T - T // 3:] = alphabet.PAD_ID
    seg[1, T - T // 3:] = 9
    with torch.no_grad():
        a = dense(**inputs, seg_id=seg, output_hidden_states=True)
        b = other(**inputs, seg_id=seg, output_hidden_states=True)
    assert a.hidden_states is not None and b.hidden_states is not None
    for x, y in zip(a.hidden_states, b.hidden_states, strict=True):
        assert torch.allclose(x, y, atol=1e-4, rtol=1e-4)
    for head in ("char", "boundary", "dia", "cap", "punct"):
        assert torch.allclose(getattr(a, head), getattr(b, head), atol=1e-3, rtol=1e-4)


def test_packed_documents_do_not_see_each_other() -> None:
    model = _model("sdpa", char_window=8)
    a, b = greek_inputs(ILIAD_1, seed=1), greek_inputs(ODYSSEY_1, seed=2)
    packed = {k: torch.cat([a[k], b[k]], dim=1) for k in a}
    seg = torch.cat([torch.zeros_like(a["input_ids"]), torch.ones_like(b["input_ids"])], dim=1)
    with torch.no_grad():
        alone_a, alone_b = model(**a), model(**b)
        both = model(**packed, seg_id=seg)
    n = a["input_ids"].shape[1]
    # positions restart per segment only in RoPE phase; attention is relative, so equal
    assert torch.allclose(both.char[:, :n], alone_a.char, atol=1e-4)
    assert torch.allclose(both.char[:, n:], alone_b.char, atol=1e-4)
    with torch.no_grad():
        leaky = model(**packed)
    assert not torch.allclose(leaky.char[:, :n], alone_a.char, atol=1e-3)


def test_pad_positions_do_not_change_real_outputs() -> None:
    model = _model("sdpa", char_window=8)
    a = greek_inputs(ILIAD_1)
    n = a["input_ids"].shape[1]
    padded = {k: torch.nn.functional.pad(t, (0, 7), value=0) for k, t in a.items()}
    padded["input_ids"][:, n:] = alphabet.PAD_ID
    with torch.no_grad():
        plain, pad = model(**a), model(**padded)  # default seg_id: PAD is its own segment
    assert torch.allclose(plain.char, pad.char[:, :n], atol=1e-4)


def test_chunked_inference_path_matches_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    import stoicheia_spacy.backbone.model as model_module

    monkeypatch.setattr(model_module, "CHUNK", 7)  # force the chunked path on a short batch
    model = _model("sdpa", char_window=8)
    inputs = random_inputs(2, 45, seed=5)
    seg = _segments(2, 45, [20])
    with torch.inference_mode():
        chunked = model(**inputs, seg_id=seg, output_hidden_states=True)
    calls: list[int] = []
    original = model_module.Block._forward_chunked

    def counting(self: model_module.Block, *args: Any) -> torch.Tensor:
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(model_module.Block, "_forward_chunked", counting)
    with torch.inference_mode():
        model(**inputs, seg_id=seg)
    assert len(calls) == model.config.depth
    with torch.enable_grad():
        plain = model(**inputs, seg_id=seg, output_hidden_states=True)
    assert chunked.hidden_states is not None and plain.hidden_states is not None
    for a, b in zip(chunked.hidden_states, plain.hidden_states, strict=True):
        assert torch.allclose(a, b.detach(), atol=1e-4, rtol=1e-5)
