"""Scanner heads (torch) over per-letter encoder states, and their Thinc wrapper.

:class:`ScannerHeads` reads the ``(depth + 1, n_letters, d)`` stack of hidden states
that the encoder stores in ``doc._.stoicheia.hidden`` (the listener hands it over in
training): a softmax scalar mix over layers, LayerNorm, a projection plus an embedding
of the letter's rule features (:func:`rule_features`: rule weight class at syllable
ends, dichronon flag), GELU, then two linear heads: ``macron`` (2: short, long) and
``scan`` (4: none, heavy-end, light-end, verse-end). ``hidden = 0`` is the released
meter/macronizer layout instead (:mod:`stoicheia_spacy.scan.released`): the mix runs over
the ``depth`` block outputs and the final-RMSNormed last one (the stored embedding layer
is dropped; ``final_norm`` holds the backbone's ``norm_out`` weight), then two linear
heads, without rule features. The Thinc layer
``stoicheia.ScannerHeads.v1`` outputs one ``(n_letters, 6)`` array per Doc
(macron logits, then scan logits) and backpropagates into the hidden states; the torch
heads sit in a ``PyTorchWrapper_v3`` node, so the training config's optimizer steps them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import torch
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, chain

from ..codec import CharPlanes
from ..encoder.listener import StoicheiaListener
from ..encoder.pooler import set_state_dims
from ..encoder.states import StateNeed, missing, register_node_need, state_key
from ..encoder.types import StoicheiaDocData
from ..heads import build_torch_head, ensure_torch_head, torch_module
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

    def mix_states(self, hidden: torch.Tensor) -> torch.Tensor:
        """The scalar mix of ``hidden`` (L, N, d): (N, d), letter by letter."""
        w = torch.softmax(self.mix, dim=0)
        h = hidden.float()
        if self.config["hidden"] <= 0:
            last = h[-1] * torch.rsqrt(h[-1].pow(2).mean(-1, keepdim=True) + 1e-6) * self.final_norm
            return torch.einsum("l,lnd->nd", w, torch.cat([h[1:], last[None]], 0))
        return torch.einsum("l,lnd->nd", w, h)

    def forward(self, hidden: torch.Tensor, feats: torch.Tensor, mixed: bool = False) -> torch.Tensor:
        """``hidden`` (L, N, d), or with ``mixed`` its :meth:`mix_states` (N, d); ``feats``
        (N,) -> logits (N, 6)."""
        mix = hidden.float() if mixed else self.mix_states(hidden)
        if self.config["hidden"] <= 0:
            mix = self.drop(mix)
            return torch.cat([self.macron(mix), self.scan(mix)], dim=-1)
        h = torch.nn.functional.gelu(self.proj(self.norm(mix)) + self.feat(feats))
        h = self.drop(h)
        return torch.cat([self.macron(h), self.scan(h)], dim=-1)

    def state_key(self) -> str:
        """The key of :meth:`mix_states` in ``StoicheiaDocData.states`` (:mod:`~stoicheia_spacy.encoder.states`)."""
        params = [self.mix] + ([self.final_norm] if self.config["hidden"] <= 0 else [])
        return state_key(f"scanner_mix/{int(self.config['hidden'] <= 0)}", *(p.detach().cpu().numpy() for p in params))


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

    The torch heads sit in a ``PyTorchWrapper_v3`` node (weights as safetensors), built
    at initialize (or from the stored sizes when read back), so the training config's
    optimizer steps them. ``grad_factor`` scales what flows back into the backbone
    (0.0 keeps it frozen).
    """
    listener = StoicheiaListener(upstream, grad_factor)
    heads = build_torch_head("stoicheia_scanner_heads", _convert_inputs, _convert_outputs)
    heads.init = _heads_init
    heads._dims.update({"nO": None, "n_layers": None})
    heads.attrs.update({"hidden": hidden, "dropout": dropout})
    model: Model = chain(listener, heads)
    model.set_ref("heads", heads)
    return model


def make_heads(node: Model, n_layers: int, d_model: int, module: ScannerHeads | None = None) -> ScannerHeads:
    """Put a :class:`ScannerHeads` (``module`` or a new one of the node's sizes) into the heads node."""
    for dim, value in (("n_layers", n_layers), ("nO", d_model)):
        if not node.has_dim(dim):
            node.set_dim(dim, value)
    if module is None:
        module = ScannerHeads(n_layers, d_model, node.attrs["hidden"], node.attrs["dropout"])
    ensure_torch_head(node, module)
    return module


def _heads_init(model: Model, X: list[StoicheiaDocData] | None = None, Y: Any = None) -> None:
    set_state_dims(model, X)
    if not model.layers:
        make_heads(model, model.get_dim("n_layers"), model.get_dim("nO"))


def heads_node(model: Model) -> Model:
    """The node of a scanner model that holds the torch heads."""
    for node in model.walk():
        if node.name == "stoicheia_scanner_heads":
            return node
    raise ValueError("not a scanner model")


def torch_heads(model: Model) -> ScannerHeads:
    """The torch module inside a scanner model (after initialization)."""
    node = heads_node(model)
    if not node.layers:
        raise ValueError("scanner model is not initialized")
    module: ScannerHeads = torch_module(node)  # type: ignore[assignment]
    return module


def mix_need(node: Model) -> StateNeed | None:
    """What the scanner heads read (:mod:`stoicheia_spacy.encoder.states`): their mix of every letter."""
    if not node.layers:
        return None
    module: ScannerHeads = torch_module(node)  # type: ignore[assignment]

    def letters(stack: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module.mix_states(torch.from_numpy(stack)).numpy()

    return StateNeed(module.state_key(), letters)


def _n_letters(doc: StoicheiaDocData) -> int:
    return int(doc.hidden.shape[1]) if doc.hidden is not None else int(doc.letter_token.shape[0])


def _batch_array(hidden: list[np.ndarray]) -> np.ndarray | None:
    """The encoder's own ``(layers, letters, width)`` array of the batch when ``hidden`` are its
    consecutive slices, first to last (the encoder pipe stores one Doc's states as a view of its
    batch's array): the concatenation of ``hidden`` without a copy. None otherwise."""
    base = hidden[0].base
    if not isinstance(base, np.ndarray) or base.ndim != 3 or base.dtype != np.float32 or not base.flags.c_contiguous:
        return None
    if base.shape[1] != sum(h.shape[1] for h in hidden) or base.shape[::2] != hidden[0].shape[::2]:
        return None
    at, step = base.__array_interface__["data"][0], base.strides[1]
    for h in hidden:
        if h.base is not base or h.strides != base.strides or h.__array_interface__["data"][0] != at:
            return None
        at += h.shape[1] * step
    return base


def _convert_inputs(model: Model, docs: list[StoicheiaDocData], is_train: bool
                    ) -> tuple[ArgsKwargs, Callable[[ArgsKwargs], list[Any]]]:
    lengths = [_n_letters(d) for d in docs]
    module: ScannerHeads = model.shims[0]._model
    key = None if is_train else module.state_key()
    mixed = key is not None and bool(docs) and all(key in d.states for d in docs)
    if key is not None and not mixed:
        missing(docs, key)
    if mixed and key is not None:  # mixed once in the encoder's forward
        hid = [np.asarray(d.states[key], dtype=np.float32) for d in docs]
        axis = 0
    else:
        hid = [np.asarray(model.ops.to_numpy(d.hidden), dtype=np.float32) for d in docs]
        axis = 1
    if len(hid) == 1:  # one Doc (annotate's long pieces): its states as they are, not a copy
        stacked = hid[0]
    else:
        joined = _batch_array(hid) if axis == 1 else None  # the encoder's batch array, no copy
        stacked = joined if joined is not None else \
            np.concatenate(hid, axis=axis) if hid else np.zeros((1, 0, 1), np.float32)
    hidden = torch.as_tensor(stacked)
    hidden.requires_grad_(is_train)
    feats = torch.as_tensor(np.concatenate([_features_of(d) for d in docs]) if docs else np.zeros(0, np.int64))
    splits = np.cumsum(lengths)[:-1]

    def reverse(d_inputs: ArgsKwargs) -> list[Any]:
        grad = d_inputs.args[0]
        d_hidden = grad.detach().cpu().numpy() if grad is not None else np.zeros(hidden.shape, np.float32)
        return [model.ops.asarray3f(cast(Any, d)) for d in np.split(d_hidden, splits, axis=1)]

    return ArgsKwargs(args=(hidden, feats), kwargs={"mixed": True} if mixed else {}), reverse


def _convert_outputs(model: Model, inputs_outputs: Any, is_train: bool
                     ) -> tuple[list[np.ndarray], Callable[[list[np.ndarray]], ArgsKwargs]]:
    docs, out = inputs_outputs
    lengths = [_n_letters(d) for d in docs]
    arr = out.detach().cpu().numpy()
    outputs = list(np.split(arr, np.cumsum(lengths)[:-1], axis=0))

    def reverse(d_outputs: list[np.ndarray]) -> ArgsKwargs:
        grad = torch.as_tensor(np.concatenate(d_outputs, axis=0), dtype=out.dtype, device=out.device)
        return ArgsKwargs(args=(out,), kwargs={"grad_tensors": (grad,)})

    return outputs, reverse


register_node_need("stoicheia_scanner_heads", mix_need)
