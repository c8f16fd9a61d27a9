"""Dozat-Manning biaffine arc and label scorer (Dozat & Manning 2017, as published).

Word vectors ``x (B, n, d)`` get a learned ROOT vector prepended (position 0). Four
MLPs (one layer each, LeakyReLU 0.1, dropout 0.33) give arc-dependent/arc-head
representations (500) and label-dependent/label-head ones (150). Arc scores are
``s[b, i, j] = h_dep_i W h_head_j + h_head_j . u`` (``i`` the dependent, ``j`` the head,
the ``scores[dep, head]`` layout of :func:`stoicheia_spacy.morph.mst.chu_liu_edmonds`);
label scores of a dependent and a given head are ``[r_dep; 1] U_l [r_head; 1]``.
Padding heads and self-loops get a large negative score. The MLPs' weights and the two biaffine
tensors may be kept in bfloat16 (:func:`stoicheia_spacy.heads.keep_weights`) and are used in the
input's type.
"""

from __future__ import annotations

import torch
from torch import nn

from ..heads import UpcastLinear

NEG = -1e9


class _MLP(nn.Module):
    def __init__(self, n_in: int, n_out: int, dropout: float) -> None:
        super().__init__()
        self.linear = UpcastLinear(n_in, n_out)
        self.act = nn.LeakyReLU(0.1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.act(self.linear(x)))


class BiaffineScorer(nn.Module):
    """Arc and label scores of every (dependent, head) pair of padded sentences."""

    kept_weights = ("arc_weight", "label_weight")

    def __init__(self, n_in: int, n_labels: int, arc_hidden: int = 500, label_hidden: int = 150,
                 dropout: float = 0.33) -> None:
        super().__init__()
        self.n_labels = n_labels
        self.root = nn.Parameter(torch.randn(n_in) * 0.02)
        self.input_drop = nn.Dropout(dropout)
        self.arc_dep = _MLP(n_in, arc_hidden, dropout)
        self.arc_head = _MLP(n_in, arc_hidden, dropout)
        self.label_dep = _MLP(n_in, label_hidden, dropout)
        self.label_head = _MLP(n_in, label_hidden, dropout)
        self.arc_weight = nn.Parameter(torch.zeros(arc_hidden, arc_hidden))
        self.arc_bias = nn.Parameter(torch.zeros(arc_hidden))
        self.label_weight = nn.Parameter(torch.zeros(n_labels, label_hidden + 1, label_hidden + 1))

    def arcs(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Arc scores ``(B, n+1, n+1)`` ``[dep, head]`` (ROOT at 0) and the label-dependent and
        label-head representations ``(B, n+1, label_hidden)``. ``mask (B, n)`` marks real words."""
        b = x.shape[0]
        x = torch.cat([self.root.expand(b, 1, -1).to(x.dtype), x], dim=1)
        x = self.input_drop(x)
        dep, head = self.arc_dep(x), self.arc_head(x)
        scores = torch.einsum("bid,de,bje->bij", dep, self.arc_weight.to(dep.dtype), head)
        scores = scores + (head @ self.arc_bias)[:, None, :]
        full = torch.cat([torch.ones_like(mask[:, :1]), mask], dim=1).bool()
        n1 = full.shape[1]
        eye = torch.eye(n1, dtype=torch.bool, device=x.device)[None]
        scores = scores.masked_fill(~full[:, None, :] | eye, NEG)
        return scores, self.label_dep(x), self.label_head(x)

    def labels(self, label_dep: torch.Tensor, label_head: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
        """Label scores ``(B, n+1, n_labels)`` of every dependent with the head ``heads (B, n+1)``
        (indices into 0..n; row 0 and padding take any index, e.g. 0)."""
        index = heads.clamp(min=0).long()[..., None].expand(-1, -1, label_head.shape[-1])
        chosen = torch.gather(label_head, 1, index)
        ones = torch.ones_like(label_dep[..., :1])
        dep1, head1 = torch.cat([label_dep, ones], -1), torch.cat([chosen, ones], -1)
        return torch.einsum("bid,lde,bie->bil", dep1, self.label_weight.to(dep1.dtype), head1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, heads: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(arc scores, label scores at ``heads``); training passes the gold heads."""
        scores, label_dep, label_head = self.arcs(x, mask)
        return scores, self.labels(label_dep, label_head, heads)
