"""``stoicheia.CharEncoder.v1``: Docs -> per-letter hidden states of every backbone layer.

The torch backbone is wrapped with Thinc's ``PyTorchWrapper_v3`` (weights serialised as
safetensors, never pickled). All Docs of a batch go through one forward: their planes
are packed into rows with segment ids (see :mod:`.packing`); Docs longer than
``max_length`` letters are cut into overlapping windows inside the same forward and
every letter takes the output of the window where it sits farthest from a cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim, PyTorchWrapper_v3, torch2xp, xp2torch

from ..backbone import StoicheiaConfig, StoicheiaEncoder
from ..errors import CheckpointError, ConfigError
from .align import align_letters
from .packing import PackedBatch, pack_planes
from .types import StoicheiaDocData

HEADS: tuple[str, ...] = ("char", "boundary", "dia", "cap", "punct")

#: Config keys that fix the weights or the computation; a checkpoint must agree on all of them.
SHAPE_KEYS: tuple[str, ...] = (
    "n_char_ids", "n_boundary", "n_dia", "n_punct", "d_model", "n_heads", "depth",
    "char_window", "n_region", "n_century", "use_cap_input", "qk_norm",
)


class HiddenStack(torch.nn.Module):
    """Run the backbone and return (hidden states of all layers flattened over rows, logits)."""

    def __init__(self, encoder: StoicheiaEncoder) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(
        self,
        input_ids: torch.Tensor,
        boundary: torch.Tensor,
        dia: torch.Tensor,
        punct: torch.Tensor,
        seg_id: torch.Tensor,
        positions: torch.Tensor,
        cap: torch.Tensor | None = None,
        with_logits: bool = False,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        out = self.encoder(
            input_ids, boundary, dia, punct, seg_id=seg_id, positions=positions, cap=cap,
            output_hidden_states=True,
        )
        hidden = torch.stack(tuple(out.hidden_states), 0).flatten(1, 2).float()
        logits = {name: getattr(out, name).flatten(0, 1) for name in HEADS} if with_logits else {}
        return hidden, logits


def config_from_args(**kwargs: Any) -> StoicheiaConfig:
    """Build a :class:`StoicheiaConfig` from the flat hyper-parameters of a spaCy config."""
    return StoicheiaConfig(**kwargs)


@registry.architectures("stoicheia.CharEncoder.v1")
def build_char_encoder(
    d_model: int = 1024,
    n_heads: int = 16,
    depth: int = 32,
    char_window: int = 256,
    qk_norm: bool = True,
    attn_impl: str = "sdpa",
    n_region: int | None = None,
    n_century: int | None = None,
    use_cap_input: bool = False,
    max_length: int = 4096,
    overlap: int = 512,
) -> Model[list[Doc], list[StoicheiaDocData]]:
    """Docs -> :class:`StoicheiaDocData` with the (depth + 1, n_letters, d_model) hidden states.

    The architecture hyper-parameters mirror the released ``config.json``; the model is
    randomly initialised here and gets its weights at initialize time from a loader
    (``stoicheia.BackboneLoader.v1``) or from disk.
    """
    if not 0 <= overlap < max_length:
        raise ConfigError(f"need 0 <= overlap < max_length, got {overlap} and {max_length}")
    config = config_from_args(
        d_model=d_model, n_heads=n_heads, depth=depth, char_window=char_window, qk_norm=qk_norm,
        attn_impl=attn_impl, n_region=n_region, n_century=n_century, use_cap_input=use_cap_input,
    )
    wrapper = PyTorchWrapper_v3(
        HiddenStack(StoicheiaEncoder(config)),
        convert_inputs=_convert_inputs,
        convert_outputs=_convert_outputs,
        serialize_model=_serialize_torch,
        deserialize_model=_deserialize_torch,
    )
    return Model(
        "stoicheia_char_encoder",
        _forward,
        layers=[wrapper],
        dims={"nO": d_model, "n_layers": depth + 1},
        attrs={
            "stoicheia_config": config.to_dict(),
            "max_length": max_length,
            "overlap": overlap,
            "with_logits": False,
        },
    )


def _forward(
    model: Model[list[Doc], list[StoicheiaDocData]], docs: list[Doc], is_train: bool
) -> tuple[list[StoicheiaDocData], Callable[[Sequence[Any]], list[Any]]]:
    from ..codec import encode_planes

    planes = [encode_planes(doc.text) for doc in docs]
    aligned = [align_letters(doc, p.offsets) for doc, p in zip(docs, planes, strict=True)]
    batch = pack_planes(planes, max_length=model.attrs["max_length"], overlap=model.attrs["overlap"])
    n_layers, width = model.get_dim("n_layers"), model.get_dim("nO")
    if batch.n_rows == 0:
        outputs = [
            StoicheiaDocData(p, lt, tl, hidden=model.ops.alloc3f(n_layers, 0, width))
            for p, (lt, tl) in zip(planes, aligned, strict=True)
        ]
        return outputs, lambda d_hidden: []
    (hidden, logits), bp_hidden = model.layers[0]((batch, model.attrs["with_logits"]), is_train)
    outputs = []
    for p, (lt, tl), idx in zip(planes, aligned, batch.doc_index, strict=True):
        doc_logits = {k: v[idx] for k, v in logits.items()} if logits else None
        outputs.append(StoicheiaDocData(p, lt, tl, hidden=hidden[:, idx], logits=doc_logits))

    def backprop(d_hidden: Sequence[Any]) -> list[Any]:
        d_flat: Any = model.ops.alloc3f(*hidden.shape)
        for idx, d_doc in zip(batch.doc_index, d_hidden, strict=True):
            if d_doc is not None and idx.size:
                d_flat[:, idx] = d_doc  # every letter owns exactly one position
        bp_hidden(d_flat)
        return []

    return outputs, backprop


def _convert_inputs(
    model: Model, inputs: tuple[PackedBatch, bool], is_train: bool
) -> tuple[ArgsKwargs, Callable[[Any], Any]]:
    batch, with_logits = inputs
    device = cast(PyTorchShim, model.shims[0]).device
    tensors = {
        name: torch.from_numpy(getattr(batch, name)).to(device)
        for name in ("input_ids", "boundary", "dia", "punct", "seg_id", "positions")
    }
    encoder = model.shims[0]._model.encoder
    if encoder.config.use_cap_input:
        tensors["cap"] = torch.from_numpy(batch.cap).to(device)
    return ArgsKwargs(args=(), kwargs={**tensors, "with_logits": with_logits}), lambda d: []


def _convert_outputs(
    model: Model, inputs_outputs: Any, is_train: bool
) -> tuple[Any, Callable[[Any], ArgsKwargs]]:
    _, (hidden_t, logits_t) = inputs_outputs
    hidden = torch2xp(hidden_t)
    logits = {k: torch2xp(v) for k, v in logits_t.items()}

    def backprop(d_hidden: Any) -> ArgsKwargs:
        grad = xp2torch(d_hidden, device=cast(PyTorchShim, model.shims[0]).device)
        return ArgsKwargs(args=((hidden_t,),), kwargs={"grad_tensors": (grad,)})

    return (hidden, logits), backprop


def _serialize_torch(module: HiddenStack) -> bytes:
    return st_save({k: v.detach().contiguous().cpu() for k, v in module.encoder.state_dict().items()})


def _deserialize_torch(module: HiddenStack, data: bytes, device: Any) -> HiddenStack:
    module.encoder.load_state_dict(st_load(data))
    module.to(device)
    return module


def torch_backbone(model: Model) -> StoicheiaEncoder:
    """The torch :class:`StoicheiaEncoder` inside a ``stoicheia.CharEncoder.v1`` model."""
    for node in model.walk():
        if node.shims and isinstance(node.shims[0]._model, HiddenStack):
            return node.shims[0]._model.encoder
    raise ConfigError(f"model {model.name!r} holds no Stoicheia backbone")


def set_backbone_weights(model: Model, source: StoicheiaEncoder) -> None:
    """Copy the weights of a loaded backbone into the char encoder, after checking shapes."""
    target = torch_backbone(model)
    want, got = target.config.to_dict(), source.config.to_dict()
    diff = [k for k in SHAPE_KEYS if want.get(k) != got.get(k)]
    if diff:
        detail = ", ".join(f"{k}: pipeline {want.get(k)!r} vs checkpoint {got.get(k)!r}" for k in diff)
        raise ConfigError(f"checkpoint does not fit the pipeline's backbone config ({detail})")
    try:
        target.load_state_dict(source.state_dict())
    except RuntimeError as exc:
        raise CheckpointError(f"cannot copy checkpoint weights: {exc}") from exc
