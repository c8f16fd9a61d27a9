"""Scanner heads (torch) over per-letter encoder states, and their Thinc wrapper.

:class:`ScannerHeads` reads the ``(depth + 1, n_letters, d)`` stack of hidden states
that the encoder stores in ``doc._.stoicheia.hidden`` (the listener hands it over in
training): a softmax scalar mix over layers, LayerNorm, a projection plus an embedding
of the letter's rule features (:func:`rule_features`: rule weight class at syllable
ends, dichronon flag), GELU, then two linear heads: ``macron`` (2: short, long) and
``scan`` (4: none, heavy-end, light-end, verse-end). ``hidden = 0`` is the released
meter/macronizer layout instead (:mod:`stoicheia_spacy.release.meter`): the mix runs over
the ``depth`` block outputs and the final-RMSNormed last one (the stored embedding layer
is dropped; ``final_norm`` holds the backbone's ``norm_out`` weight), then two linear
heads, without rule features. The Thinc layer
``stoicheia.ScannerHeads.v1`` outputs one ``(n_letters, 6)`` array per Doc
(macron logits, then scan logits) and backpropagates into the hidden states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from spacy.util import registry
from thinc.api import Model, chain, get_torch_default_device

from ..codec import CharPlanes
from ..models.listener import StoicheiaListener
from ..models.types import StoicheiaDocData
from .syllabify import HEAVY, LIGHT, dichrona_mask, syllabify

N_MACRON, N_SCAN = 2, 4
N_FEATURES = 8


def rule_features(planes: CharPlanes, text: str | None = None) -> np.ndarray:
    """(n,) int ids: 0 not a syllable end, 1 heavy, 2 light, 3 undetermined end; +4 if dichronon."""
    n = len(planes)
    feats = np.zeros(n, dtype=np.int64)
    if n == 0:
        return feats
    syl = syllabify(planes, text=text)
    if len(syl):
        feats[syl.ends] = np.where(syl.weights == HEAVY, 1, np.where(syl.weights == LIGHT, 2, 3))
    return feats + 4 * dichrona_mask(planes).astype(np.int64)


class ScannerHeads(torch.nn.Module):
    """Scalar mix + MLP with macron and scan heads (see module doc)."""

    def __init__(self, n_layers: int, d_model: int, hidden: int = 128, dropout: float = 0.1) -> None:
        super().__init__()
        self.config = {"n_layers": n_layers, "d_model": d_model, "hidden": hidden, "dropout": dropout}
        self.mix = torch.nn.Parameter(torch.zeros(n_layers))
        self.drop = torch.nn.Dropout(dropout)
        if hidden <= 0:  # released linear heads (see module doc)
            self.final_norm = torch.nn.Parameter(torch.ones(d_model))
            self.macron = torch.nn.Linear(d_model, N_MACRON)
            self.scan = torch.nn.Linear(d_model, N_SCAN)
            return
        self.norm = torch.nn.LayerNorm(d_model)
        self.proj = torch.nn.Linear(d_model, hidden)
        self.feat = torch.nn.Embedding(N_FEATURES, hidden)
        self.macron = torch.nn.Linear(hidden, N_MACRON)
        self.scan = torch.nn.Linear(hidden, N_SCAN)

    def forward(self, hidden: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """``hidden`` (L, N, d), ``feats`` (N,) -> logits (N, 6)."""
        w = torch.softmax(self.mix, dim=0)
        if self.config["hidden"] <= 0:
            h = hidden.float()
            last = h[-1] * torch.rsqrt(h[-1].pow(2).mean(-1, keepdim=True) + 1e-6) * self.final_norm
            mixed = torch.einsum("l,lnd->nd", w, torch.cat([h[1:], last[None]], 0))
            mixed = self.drop(mixed)
            return torch.cat([self.macron(mixed), self.scan(mixed)], dim=-1)
        mixed = torch.einsum("l,lnd->nd", w, hidden.float())
        h = torch.nn.functional.gelu(self.proj(self.norm(mixed)) + self.feat(feats))
        h = self.drop(h)
        return torch.cat([self.macron(h), self.scan(h)], dim=-1)


def _features_of(doc: StoicheiaDocData) -> np.ndarray:
    cached = getattr(doc, "_scan_features", None)
    if cached is None:
        cached = rule_features(doc.planes)
    return cached


@registry.architectures("stoicheia.ScannerHeads.v1")
def build_scanner_model(
    upstream: str = "*",
    grad_factor: float = 0.0,
    hidden: int = 128,
    dropout: float = 0.1,
) -> Model:
    """A ``StoicheiaListener`` (per-letter states, no pooling) to ``upstream`` + :class:`ScannerHeads`.

    ``grad_factor`` scales what flows back into the backbone (0.0 keeps it frozen).
    """
    listener = StoicheiaListener(upstream, grad_factor)
    heads: Model = Model("stoicheia_scanner_heads", _heads_forward, init=_heads_init,
                  dims={"nO": None, "n_layers": None},
                  attrs={"hidden": hidden, "dropout": dropout, "torch": None})
    return chain(listener, heads)


def _heads_init(model: Model, X: list[StoicheiaDocData] | None = None, Y: Any = None) -> None:
    if X:
        first = X[0].hidden
        if not model.has_dim("n_layers"):
            model.set_dim("n_layers", int(first.shape[0]))
        if not model.has_dim("nO"):
            model.set_dim("nO", int(first.shape[2]))
    if model.attrs["torch"] is None:
        model.attrs["torch"] = ScannerHeads(model.get_dim("n_layers"), model.get_dim("nO"),
                                            model.attrs["hidden"], model.attrs["dropout"])


def torch_heads(model: Model) -> ScannerHeads:
    """The torch module inside a scanner model (after initialization)."""
    for node in model.walk():
        if node.name == "stoicheia_scanner_heads" and node.attrs.get("torch") is not None:
            return node.attrs["torch"]
    raise ValueError("scanner model is not initialized")


def _heads_forward(model: Model, docs: list[StoicheiaDocData], is_train: bool
                   ) -> tuple[list[np.ndarray], Callable[[list[np.ndarray]], list[Any]]]:
    module: ScannerHeads = model.attrs["torch"]
    device = get_torch_default_device()
    module.to(device)
    module.train(is_train)
    lengths = [int(d.hidden.shape[1]) for d in docs]
    hid_np = [np.asarray(d.hidden, dtype=np.float32) for d in docs]
    hidden = torch.as_tensor(np.concatenate(hid_np, axis=1) if hid_np else np.zeros((1, 0, 1), np.float32),
                             device=device).requires_grad_(is_train)
    feats = torch.as_tensor(np.concatenate([_features_of(d) for d in docs]) if docs else np.zeros(0, np.int64),
                            device=device)
    if is_train:
        out = module(hidden, feats)
    else:
        with torch.no_grad():
            out = module(hidden, feats)
    arr = out.detach().cpu().numpy()
    splits = np.cumsum(lengths)[:-1]
    outputs = list(np.split(arr, splits, axis=0))

    def backprop(d_outputs: list[np.ndarray]) -> list[Any]:
        grad = torch.as_tensor(np.concatenate(d_outputs, axis=0), device=device, dtype=out.dtype)
        out.backward(grad)  # parameter gradients accumulate in the torch module (the pipe steps them)
        d_hidden = hidden.grad.detach().cpu().numpy() if hidden.grad is not None else np.zeros_like(
            hidden.detach().cpu().numpy())
        return list(np.split(d_hidden, splits, axis=1))

    return outputs, backprop
