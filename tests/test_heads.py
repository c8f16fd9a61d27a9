"""Torch heads kept in bfloat16 (``weight_dtype``): half the memory of their matrices, answers
exactly those of the float32 head with its weights rounded to bfloat16, through save and load."""

from __future__ import annotations

import copy

import pytest
import torch

from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.heads import (
    TokenHeads,
    build_torch_head,
    ensure_torch_head,
    keep_weights,
    kept_parameters,
    torch_module,
    weight_dtype,
)
from stoicheia_spacy.morph.biaffine import BiaffineScorer


def rounded(module: torch.nn.Module) -> torch.nn.Module:
    """A float32 copy whose kept matrices hold their values rounded to bfloat16."""
    out = copy.deepcopy(module)
    for param in kept_parameters(out):
        param.data = param.data.to(torch.bfloat16).float()
    return out


def test_token_heads_in_bfloat16_answer_as_the_rounded_float32_head() -> None:
    torch.manual_seed(0)
    head = TokenHeads(48, (7, 300), hidden=32).eval()
    x = torch.randn(20, 48)
    before = head(x)
    reference = rounded(head)(x)
    assert keep_weights(head, torch.bfloat16) == 48 * 32 + 32 * 307
    assert {p.dtype for p in kept_parameters(head)} == {torch.bfloat16}
    assert head.out.bias.dtype == torch.float32 and head.mlp[1].bias.dtype == torch.float32
    after = head(x)
    assert after.dtype == torch.float32
    assert torch.equal(after, reference)
    assert torch.allclose(after, before, atol=0.05) and not torch.equal(after, before)
    assert keep_weights(head, torch.bfloat16) == 0  # already kept so


def test_biaffine_scorer_in_bfloat16_answers_as_the_rounded_float32_scorer() -> None:
    torch.manual_seed(1)
    scorer = BiaffineScorer(16, n_labels=5, arc_hidden=12, label_hidden=7).eval()
    for param in (scorer.arc_weight, scorer.label_weight):
        param.data.normal_()
    x, mask = torch.randn(2, 6, 16), torch.ones(2, 6, dtype=torch.bool)
    heads = torch.randint(0, 7, (2, 7))
    reference = rounded(scorer)(x, mask, heads)
    keep_weights(scorer, torch.bfloat16)
    assert scorer.arc_weight.dtype == scorer.label_weight.dtype == torch.bfloat16
    assert scorer.arc_dep.linear.weight.dtype == torch.bfloat16 and scorer.root.dtype == torch.float32
    arcs, labels = scorer(x, mask, heads)
    assert torch.equal(arcs, reference[0]) and torch.equal(labels, reference[1])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_head_node_keeps_its_weight_dtype_through_save_and_load(dtype: str) -> None:
    torch.manual_seed(2)
    saved = build_torch_head("test_head")
    saved.attrs["weight_dtype"] = dtype
    ensure_torch_head(saved, TokenHeads(8, (5,), hidden=4).eval())
    keep_weights(torch_module(saved), weight_dtype(dtype))
    data = saved.to_bytes()
    loaded = build_torch_head("test_head")
    loaded.attrs["weight_dtype"] = dtype
    ensure_torch_head(loaded, TokenHeads(8, (5,), hidden=4).eval())
    loaded.from_bytes(data)
    module = torch_module(loaded)
    assert {p.dtype for p in kept_parameters(module)} == {weight_dtype(dtype)}
    for a, b in zip(torch_module(saved).state_dict().values(), module.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_an_unknown_weight_dtype_is_refused_with_the_options() -> None:
    with pytest.raises(ConfigError, match="bfloat16"):
        weight_dtype("int4")
