"""Biaffine scorer: shapes, masking, gradients to every parameter and the inputs."""

from __future__ import annotations

import torch

from stoicheia_spacy.morph.biaffine import NEG, BiaffineScorer


def test_shapes_masking_and_gradients() -> None:
    torch.manual_seed(0)
    scorer = BiaffineScorer(16, n_labels=5, arc_hidden=12, label_hidden=7, dropout=0.33)
    for p in (scorer.arc_weight, scorer.label_weight):  # zero-initialised as published; perturb to test
        torch.nn.init.normal_(p, std=0.1)
    x = torch.randn(3, 6, 16, requires_grad=True)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4], dtype=torch.bool)
    heads = torch.zeros(3, 7, dtype=torch.long)
    heads[0, 1:] = torch.tensor([0, 1, 1, 2, 3, 3])
    arcs, labels = scorer(x, mask, heads)
    assert arcs.shape == (3, 7, 7) and labels.shape == (3, 7, 5)
    # padding heads and self loops are forbidden
    assert (arcs[1, :, 5:] == NEG).all() and (arcs[2, :, 3:] == NEG).all()
    assert (torch.diagonal(arcs, dim1=1, dim2=2) == NEG).all()
    assert (arcs[0, 1:, :] > NEG).sum() == 6 * 6
    loss = torch.nn.functional.cross_entropy(arcs[0, 1:], heads[0, 1:]) + labels[0, 1:].logsumexp(-1).sum()
    loss.backward()
    assert x.grad is not None and x.grad[0].abs().sum() > 0
    for name, p in scorer.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name


def test_label_scores_follow_the_given_heads() -> None:
    torch.manual_seed(1)
    scorer = BiaffineScorer(8, n_labels=3, arc_hidden=4, label_hidden=4).eval()
    torch.nn.init.normal_(scorer.label_weight)
    x = torch.randn(1, 3, 8)
    mask = torch.ones(1, 3, dtype=torch.bool)
    _, dep, head = scorer.arcs(x, mask)
    a = scorer.labels(dep, head, torch.tensor([[0, 0, 1, 1]]))
    b = scorer.labels(dep, head, torch.tensor([[0, 0, 3, 1]]))
    assert torch.allclose(a[0, 1], b[0, 1]) and torch.allclose(a[0, 3], b[0, 3])
    assert not torch.allclose(a[0, 2], b[0, 2])
