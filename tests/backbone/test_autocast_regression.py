"""Regression: per-segment global attention when SDPA answers in bf16.

On CUDA, SDPA under autocast returns bf16 while the per-segment output buffer was
float32, which crashed the first GPU pretraining run at its first dev evaluation
("Index put requires the source and destination dtypes match"). CPU autocast leaves
SDPA in float32, so the test makes SDPA answer in bf16 as CUDA autocast does."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from stoicheia_spacy.backbone import attention


def test_segment_global_attention_accepts_bf16_sdpa_output(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    seg = torch.tensor([[0] * 5 + [1] * 9 + [2] * 2])
    plan = attention.build_plan(seg, char_window=8, backend="sdpa")
    q, k, v = (torch.randn(1, seg.shape[1], 2, 8) for _ in range(3))
    ref = attention.segment_global_attention(q, k, v, plan)
    sdpa = attention.F.scaled_dot_product_attention

    def bf16_sdpa(*args: Any, **kwargs: Any) -> torch.Tensor:
        return sdpa(*args, **kwargs).to(torch.bfloat16)

    monkeypatch.setattr(attention.F, "scaled_dot_product_attention", bf16_sdpa)
    out = attention.segment_global_attention(q, k, v, plan)
    assert out.shape == ref.shape
    assert torch.allclose(out.float(), ref, atol=2e-2)
