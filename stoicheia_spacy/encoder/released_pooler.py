"""The released word vectors: ``stoicheia.ReleasedWordPooler.v1`` and its reference formula.

The released fine-tunes mix ``depth + 1`` layers with ``softmax(mix_w)``: the ``depth``
raw block outputs and the last one after the backbone's final RMSNorm (``norm_out``) —
not the embedding layer, although the paper's prose says "embeddings + every layer";
the published model code is what the weights were trained with. The encoder pipe stores
``(embedding, block 1 … block depth)`` before ``norm_out``, so the pooler drops the
first entry and RMSNorms the last one with its own copy of ``norm_out.w`` (param
``norm``). Each token then takes the mean of its letters; tokens without a Greek letter
take the learned ``empty`` vector (the release gives them no word slot at all).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import torch
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .types import StoicheiaDocData

EPS = 1e-6


def released_layers(hidden: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
    """``(depth + 1, n, d)`` stored states -> the released ``(depth + 1, n, d)`` mix inputs."""
    last = hidden[-1] * torch.rsqrt(hidden[-1].pow(2).mean(-1, keepdim=True) + EPS) * norm
    return torch.cat([hidden[1:], last[None]], 0)


def released_mix(hidden: np.ndarray, norm: np.ndarray, mix_w: np.ndarray) -> np.ndarray:
    """Reference (numpy, float64) of the released scalar mix over stored states ``hidden``."""
    h = np.asarray(hidden, dtype=np.float64)
    last = h[-1] / np.sqrt((h[-1] ** 2).mean(-1, keepdims=True) + EPS) * np.asarray(norm, np.float64)
    layers = np.concatenate([h[1:], last[None]], 0)
    w = np.exp(mix_w - np.max(mix_w))
    w = w / w.sum()
    return np.tensordot(w, layers, axes=(0, 0))


@registry.architectures("stoicheia.ReleasedWordPooler.v1")
def build_released_pooler() -> Model[list[StoicheiaDocData], list[Floats2d]]:
    """Released scalar mix (see module doc), then mean over each token's letters."""
    return Model("stoicheia_released_pooler", _forward, init=_init, dims={"nO": None, "n_layers": None},
                 params={"mix": None, "norm": None, "empty": None})


def _init(model: Model, X: list[StoicheiaDocData] | None = None, Y: object = None) -> None:
    if X:
        if not model.has_dim("n_layers"):
            model.set_dim("n_layers", int(X[0].hidden.shape[0]))
        if not model.has_dim("nO"):
            model.set_dim("nO", int(X[0].hidden.shape[2]))
    model.set_param("mix", model.ops.alloc1f(model.get_dim("n_layers")))
    model.set_param("norm", model.ops.xp.ones(model.get_dim("nO"), dtype="float32"))
    model.set_param("empty", model.ops.alloc1f(model.get_dim("nO")))


def _forward(model: Model, docs: list[StoicheiaDocData], is_train: bool
             ) -> tuple[list[Floats2d], Callable[[list[Floats2d]], list[Any]]]:
    ops = model.ops
    mix = torch.tensor(ops.to_numpy(model.get_param("mix")), requires_grad=is_train)
    norm = torch.tensor(ops.to_numpy(model.get_param("norm")), requires_grad=is_train)
    empty = torch.tensor(ops.to_numpy(model.get_param("empty")), requires_grad=is_train)
    weights = torch.softmax(mix, 0)
    outs: list[torch.Tensor] = []
    hiddens: list[torch.Tensor] = []
    for doc in docs:
        hidden = torch.tensor(np.asarray(ops.to_numpy(doc.hidden), dtype=np.float32), requires_grad=is_train)
        hiddens.append(hidden)
        lengths = torch.as_tensor(np.asarray(doc.token_lengths, dtype=np.int64))
        n_tok = int(lengths.shape[0])
        if hidden.shape[1]:
            mixed = torch.einsum("l,lnd->nd", weights, released_layers(hidden, norm))
            tok = torch.repeat_interleave(torch.arange(n_tok), lengths)
            sums = torch.zeros(n_tok, hidden.shape[2]).index_add(0, tok, mixed)
            pooled = sums / lengths.clamp(min=1)[:, None].float()
        else:
            pooled = torch.zeros(n_tok, hidden.shape[2])
        pooled = pooled + (lengths == 0).float()[:, None] * empty[None, :]
        outs.append(pooled)
    arrays = [ops.asarray2f(cast(Any, o.detach().numpy())) for o in outs]

    def backprop(d_outputs: list[Floats2d]) -> list[Any]:
        grads = [torch.as_tensor(ops.to_numpy(d), dtype=torch.float32) for d in d_outputs]
        torch.autograd.backward(outs, grads)
        for name, t in (("mix", mix), ("norm", norm), ("empty", empty)):
            if t.grad is not None:
                model.inc_grad(name, ops.asarray1f(cast(Any, t.grad.numpy())))
        return [ops.asarray3f(cast(Any, h.grad.numpy())) if h.grad is not None else ops.alloc3f(*h.shape) for h in hiddens]

    return arrays, backprop
