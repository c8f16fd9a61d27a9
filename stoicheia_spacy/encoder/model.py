"""``stoicheia.CharEncoder.v1``: Docs -> per-letter hidden states of every backbone layer.

The torch backbone is wrapped with Thinc's ``PyTorchWrapper_v3`` (weights serialised as
safetensors, never pickled). All Docs of a batch go through one forward: their planes
are packed into rows with segment ids (see :mod:`stoicheia_spacy.backbone.windows`); Docs longer than
``max_length`` letters are cut into overlapping windows inside the same forward and
every letter takes the output of the window where it sits farthest from a cut.
A Doc's text becomes planes only here (:func:`doc_inputs`, :mod:`.gaps`): Leiden gaps are
read once and fed as MASK letters; the output holds the gaps, the per-letter states and,
when asked (``with_logits``), every output head's logits from the same forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim, PyTorchWrapper_v3, torch2xp, xp2torch

from ..backbone import StoicheiaConfig, StoicheiaEncoder
from ..backbone.precision import PrecisionCache, check_precision, precision_view
from ..backbone.windows import PackedBatch, pack_planes
from ..errors import CheckpointError, ConfigError
from .align import align_letters
from .gaps import (
    MAX_GAP_WIDTH,
    NOTATIONS,
    UNKNOWN_GAP_WIDTH,
    alignment_offsets,
    encode_text,
    hide_unmarked,
)
from .metadata import doc_metadata
from .states import StatePlan, apply_chunk, split_states
from .token_planes import token_doc_inputs
from .types import LOGIT_HEADS, StoicheiaDocData

HEADS: tuple[str, ...] = tuple(LOGIT_HEADS)
#: Positions per inference forward: rows beyond this run in further forwards (same results).
INFER_POSITIONS = 16384
#: The same when only the components' needs are kept (:mod:`.states`): a chunk's letters hold
#: every layer until the needs are applied, so a smaller chunk (same results) bounds that.
STATE_POSITIONS = 8192

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
        #: the precision of inference forwards (:mod:`stoicheia_spacy.backbone.precision`);
        #: training forwards always run the float32 ``encoder``
        self.precision = "float32"
        self.precision_cache = PrecisionCache()

    def runtime(self, module: torch.nn.Module | None = None) -> torch.nn.Module:
        """``module`` (default: the encoder) as inference runs it: in :attr:`precision`."""
        return precision_view(self.encoder if module is None else module, self.precision, self.precision_cache)

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
        region: torch.Tensor | None = None,
        century: torch.Tensor | None = None,
        owned: torch.Tensor | None = None,
        plan: StatePlan | None = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor], list[np.ndarray | None]]:
        """(hidden states, logits, the results of ``plan``'s needs); ``owned`` and ``plan``
        (inference only): see :meth:`infer`."""
        if not torch.is_grad_enabled():
            planes = {"boundary": boundary, "dia": dia, "punct": punct, "seg_id": seg_id, "positions": positions,
                      "cap": cap, "region": region, "century": century}
            return self.infer(input_ids, planes, with_logits, owned, plan)
        out = self.encoder(
            input_ids, boundary, dia, punct, seg_id=seg_id, positions=positions, cap=cap,
            region=region, century=century, output_hidden_states=True,
        )
        hidden = torch.stack(tuple(out.hidden_states), 0).flatten(1, 2).float()
        if owned is not None:
            hidden = hidden[:, owned.to(hidden.device)]
        logits = {name: getattr(out, name).flatten(0, 1) for name in HEADS} if with_logits else {}
        return hidden, logits, []

    def infer(
        self, input_ids: torch.Tensor, planes: dict[str, torch.Tensor | None], with_logits: bool = False,
        owned: torch.Tensor | None = None, plan: StatePlan | None = None,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor], list[np.ndarray | None]]:
        """The inference forward (no gradient): rows in chunks of at most
        :data:`INFER_POSITIONS` positions, every layer written straight into one float32
        array, so that working memory beyond the output is one chunk's, whatever the number
        of rows (a long document's windows). The array is ``(layers, B*T, d)``, or with
        ``owned`` (flat batch positions) ``(layers, len(owned), d)``: only the states of
        those positions, in that order (the letters' own positions, without the overlap of
        long-document windows or the padding).

        With ``plan`` (and ``owned``) no such array is kept: each chunk's letters get their
        layers in a chunk-sized array, the plan's needs are applied to it
        (:func:`~stoicheia_spacy.encoder.states.apply_chunk`) and only their results come
        back (the third item; the states array is empty)."""
        encoder = self.runtime()
        B, T = input_ids.shape
        width = self.encoder.config.d_model
        n_layers = len(self.encoder.blocks) + 1
        device = input_ids.device
        n_out = B * T if owned is None else int(owned.numel())
        if owned is None:
            plan = None  # needs read letters, and only ``owned`` says which positions are letters
        hidden = torch.empty(n_layers, n_out if plan is None else 0, width, dtype=torch.float32, device=device)
        reduced: list[np.ndarray | None] = [None] * (len(plan.needs) if plan is not None else 0)
        where = None
        if owned is not None:  # where[p]: the output row of flat position p, -1 if none
            where = torch.full((B * T,), -1, dtype=torch.long, device=device)
            where[owned.to(device)] = torch.arange(n_out, device=device)
        chunks: dict[str, list[torch.Tensor]] = {name: [] for name in HEADS}
        step = max(1, (INFER_POSITIONS if plan is None else STATE_POSITIONS) // max(T, 1))
        for first in range(0, B, step):
            rows = slice(first, min(first + step, B))
            flat = slice(rows.start * T, rows.stop * T)
            dest: slice | torch.Tensor = flat
            src: slice | torch.Tensor = slice(None)
            if where is not None:
                src = torch.nonzero(where[flat] >= 0).flatten()
                dest = where[flat][src]
            if plan is not None:  # this chunk's letters, every layer (needs are applied below)
                letters = int(dest.numel()) if plan.needs and isinstance(dest, torch.Tensor) else 0
                target = torch.empty(n_layers, letters, width, dtype=torch.float32, device=device)
                dest_out: slice | torch.Tensor = slice(None)
            else:
                target, dest_out = hidden, dest

            def keep(i: int, h: torch.Tensor, dest: slice | torch.Tensor = dest_out,
                     src: slice | torch.Tensor = src, target: torch.Tensor = target) -> None:
                if target.shape[1]:
                    target[i, dest] = h.flatten(0, 1)[src]

            part = {name: x[rows] if x is not None and x.dim() > 0 else x for name, x in planes.items()}
            out = encoder(input_ids[rows], part.pop("boundary"), part.pop("dia"), part.pop("punct"),
                          layer_callback=keep, **part)
            if with_logits:
                for name in HEADS:
                    chunks[name].append(getattr(out, name).flatten(0, 1))
            del out
            if plan is not None and target.shape[1] and isinstance(dest, torch.Tensor):
                apply_chunk(plan, reduced, target.cpu().numpy(), dest.cpu().numpy())
            del target
        logits = {name: torch.cat(parts, 0) for name, parts in chunks.items()} if with_logits else {}
        return hidden, logits, reduced


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
    notation: str | None = "leiden",
    unknown_gap_width: int = UNKNOWN_GAP_WIDTH,
    max_gap_width: int = MAX_GAP_WIDTH,
    hide_unmarked: bool = True,
    planes: str = "text",
) -> Model[list[Doc], list[StoicheiaDocData]]:
    """Docs -> :class:`StoicheiaDocData` with the (depth + 1, n_letters, d_model) hidden states.

    The architecture hyper-parameters mirror the released ``config.json``; the model's
    weights are allocated, not initialised, here: it gets them at initialize time from a loader
    (``stoicheia.BackboneLoader.v1``) or from disk. ``notation``, ``unknown_gap_width``,
    ``max_gap_width`` and ``hide_unmarked`` set how a Doc's text becomes planes (Leiden
    gaps as MASK letters, see :mod:`.gaps`). ``planes = "tokens"`` builds the planes token by
    token instead, as the released tagger-parser reads them (:mod:`.token_planes`; no
    markup, no hidden planes).
    """
    if not 0 <= overlap < max_length:
        raise ConfigError(f"need 0 <= overlap < max_length, got {overlap} and {max_length}")
    if planes not in ("text", "tokens"):
        raise ConfigError(f"planes must be 'text' or 'tokens', got {planes!r}")
    if notation not in NOTATIONS:
        raise ConfigError(f"notation must be one of {list(NOTATIONS)}, got {notation!r}")
    if not 1 <= unknown_gap_width <= max_gap_width:
        raise ConfigError(f"need 1 <= unknown_gap_width <= max_gap_width, got {unknown_gap_width} "
                          f"and {max_gap_width}")
    config = config_from_args(
        d_model=d_model, n_heads=n_heads, depth=depth, char_window=char_window, qk_norm=qk_norm,
        attn_impl=attn_impl, n_region=n_region, n_century=n_century, use_cap_input=use_cap_input,
    )
    wrapper = PyTorchWrapper_v3(
        HiddenStack(StoicheiaEncoder.empty(config)),  # weights come from a loader or from disk
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
            "notation": notation,
            "unknown_gap_width": unknown_gap_width,
            "max_gap_width": max_gap_width,
            "hide_unmarked": hide_unmarked,
            "planes": planes,
            "weights_loaded": False,
        },
    )


def doc_inputs(doc: Doc, attrs: dict[str, Any] | None = None) -> StoicheiaDocData:
    """A Doc's :class:`StoicheiaDocData` without states: planes with gaps, the planes the
    backbone reads, token alignment (``attrs``: a char encoder's text settings)."""
    attrs = attrs or {}
    if attrs.get("planes", "text") == "tokens":
        return token_doc_inputs(doc)
    planes, gaps, error = encode_text(
        doc.text, notation=attrs.get("notation", "leiden"),
        unknown_width=int(attrs.get("unknown_gap_width", UNKNOWN_GAP_WIDTH)),
        max_width=int(attrs.get("max_gap_width", MAX_GAP_WIDTH)))
    letter_token, token_lengths = align_letters(doc, alignment_offsets(planes, gaps))
    inputs = hide_unmarked(planes) if attrs.get("hide_unmarked", True) else planes
    return StoicheiaDocData(planes, letter_token, token_lengths, gaps=gaps, inputs=inputs, markup_error=error)


def _forward(
    model: Model[list[Doc], list[StoicheiaDocData]], docs: list[Doc], is_train: bool
) -> tuple[list[StoicheiaDocData], Callable[[Sequence[Any]], list[Any]]]:
    data = [doc_inputs(doc, model.attrs) for doc in docs]
    batch = pack_planes([d.inputs if d.inputs is not None else d.planes for d in data], max_length=model.attrs["max_length"],
                        overlap=model.attrs["overlap"])
    meta = doc_metadata(docs, model.attrs.get("stoicheia_config", {}))  # doc._.region / doc._.century
    batch.metadata = {k: batch.per_doc(ids, int(model.attrs["stoicheia_config"][f"n_{k}"]) - 1)
                      for k, ids in meta.items()}
    n_layers, width = model.get_dim("n_layers"), model.get_dim("nO")
    with_logits = bool(model.attrs["with_logits"])
    needs = None if is_train else model.attrs.get("state_needs")
    plan = StatePlan.build(needs, [d.planes.offsets for d in data]) if needs is not None else None
    if batch.n_rows == 0:
        for d in data:
            d.hidden = model.ops.alloc3f(n_layers, 0, width) if plan is None else None
            if with_logits:
                d.logits = {k: np.zeros((0, c), np.float32) for k, c in LOGIT_HEADS.items()}
        if plan is not None:
            split_states(plan, [None] * len(plan.needs), data, n_layers, width)
        return data, lambda d_hidden: []
    (hidden, logits, reduced), bp_hidden = model.layers[0]((batch, with_logits, plan), is_train)
    start = 0
    for d, idx in zip(data, batch.doc_index, strict=True):
        if plan is not None:  # only the needs' results (below)
            d.hidden = None
        elif is_train:
            d.hidden = hidden[:, _positions(idx)]
        else:  # the inference forward returned the letters' own states, Doc after Doc
            d.hidden = hidden[:, start:start + idx.size]
            start += idx.size
        if logits:
            d.logits = {k: model.ops.to_numpy(v[idx]).astype(np.float32, copy=False) for k, v in logits.items()}
    if plan is not None:
        split_states(plan, reduced, data, n_layers, width)

    def backprop(d_hidden: Sequence[Any]) -> list[Any]:
        d_flat: Any = model.ops.alloc3f(*hidden.shape)
        for idx, d_doc in zip(batch.doc_index, d_hidden, strict=True):
            if d_doc is not None and idx.size:
                d_flat[:, idx] = d_doc  # every letter owns exactly one position
        bp_hidden(d_flat)
        return []

    return data, backprop


def _positions(idx: np.ndarray) -> slice | np.ndarray:
    """A Doc's positions in the batch: a slice when they are one run (one row, no windows), so
    that its states are a view whose layers stay contiguous, else the index (a copy)."""
    if idx.size > 1 and int(idx[-1]) - int(idx[0]) + 1 == idx.size and bool((np.diff(idx) == 1).all()):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def _convert_inputs(
    model: Model, inputs: tuple[PackedBatch, bool, StatePlan | None], is_train: bool
) -> tuple[ArgsKwargs, Callable[[Any], Any]]:
    batch, with_logits, plan = inputs
    device = cast(PyTorchShim, model.shims[0]).device
    tensors = {
        name: torch.from_numpy(getattr(batch, name)).to(device)
        for name in ("input_ids", "boundary", "dia", "punct", "seg_id", "positions")
    }
    encoder = model.shims[0]._model.encoder
    if encoder.config.use_cap_input:
        tensors["cap"] = torch.from_numpy(batch.cap).to(device)
    for key, ids in batch.metadata.items():  # region / century rows of restoration fine-tunes
        tensors[key] = torch.from_numpy(ids).to(device)
    if not is_train:  # only the letters' own states come back (HiddenStack.infer)
        owned = np.concatenate(batch.doc_index) if batch.doc_index else np.zeros(0, np.int64)
        tensors["owned"] = torch.from_numpy(owned.astype(np.int64, copy=False)).to(device)
    extra: dict[str, Any] = {"with_logits": with_logits}
    if plan is not None and not is_train:
        extra["plan"] = plan  # the needs of the components after the encoder (HiddenStack.infer)
    return ArgsKwargs(args=(), kwargs={**tensors, **extra}), lambda d: []


def _convert_outputs(
    model: Model, inputs_outputs: Any, is_train: bool
) -> tuple[Any, Callable[[Any], ArgsKwargs]]:
    _, (hidden_t, logits_t, reduced) = inputs_outputs
    hidden = torch2xp(hidden_t)
    logits = {k: torch2xp(v) for k, v in logits_t.items()}

    def backprop(d_hidden: Any) -> ArgsKwargs:
        grad = xp2torch(d_hidden, device=cast(PyTorchShim, model.shims[0]).device)
        return ArgsKwargs(args=((hidden_t,),), kwargs={"grad_tensors": (grad,)})

    return (hidden, logits, reduced), backprop


def _serialize_torch(module: HiddenStack) -> bytes:
    return st_save({k: v.detach().contiguous().cpu() for k, v in module.encoder.state_dict().items()})


def _deserialize_torch(module: HiddenStack, data: bytes, device: Any) -> HiddenStack:
    module.encoder.load_state_dict(st_load(data), assign=True)
    module.precision_cache.clear()
    module.to(device)
    return module


def _stack(model: Model) -> HiddenStack:
    for node in model.walk():
        if node.shims and isinstance(node.shims[0]._model, HiddenStack):
            return node.shims[0]._model
    raise ConfigError(f"model {model.name!r} holds no Stoicheia backbone")


def torch_backbone(model: Model) -> StoicheiaEncoder:
    """The torch :class:`StoicheiaEncoder` inside a ``stoicheia.CharEncoder.v1`` model."""
    return _stack(model).encoder


def runtime_backbone(model: Model, module: torch.nn.Module | None = None) -> torch.nn.Module:
    """``module`` (default: the model's backbone; or a view of it, e.g. the restorer's overlaid
    one) in the model's inference precision, sharing converted blocks with the encoder's own."""
    return _stack(model).runtime(module)


def set_precision(model: Model, precision: str) -> None:
    """Run the model's inference forwards in ``precision`` (``float32``, ``float32-fused``, ``bfloat16``, ``int8``;
    :mod:`stoicheia_spacy.backbone.precision`); the stored weights stay float32."""
    stack = _stack(model)
    stack.precision = check_precision(precision)
    stack.precision_cache.clear()
    model.attrs["precision"] = precision


def set_backbone_weights(model: Model, source: StoicheiaEncoder) -> None:
    """Give the char encoder the weights of a loaded backbone (its tensors, shared, not
    copied), after checking shapes."""
    target = torch_backbone(model)
    want, got = target.config.to_dict(), source.config.to_dict()
    diff = [k for k in SHAPE_KEYS if want.get(k) != got.get(k)]
    if diff:
        detail = ", ".join(f"{k}: pipeline {want.get(k)!r} vs checkpoint {got.get(k)!r}" for k in diff)
        raise ConfigError(f"checkpoint does not fit the pipeline's backbone config ({detail})")
    try:  # the loaded tensors themselves, not a copy of them (no second backbone in memory)
        target.load_state_dict(source.state_dict(), assign=True)
    except RuntimeError as exc:
        raise CheckpointError(f"cannot copy checkpoint weights: {exc}") from exc
    _stack(model).precision_cache.clear()
    model.attrs["weights_loaded"] = True
