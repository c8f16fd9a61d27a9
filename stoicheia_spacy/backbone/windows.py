"""Long documents: encode in overlapping windows and stitch the outputs back together.

A document of ``T`` letters is cut into windows of ``window`` letters whose starts advance
by ``window - overlap`` (the last window ends at ``T``). Each position takes its output
from the window in which it is most central: between two neighbouring windows the cut
lies in the middle of their overlap. A document no longer than ``window`` is one plain
forward. Peak working memory is bounded by one window; the returned logits (and the
hidden layers selected with ``layers``) are of course ``O(T)``; pass ``callback`` to
consume each stitched piece instead and keep nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from stoicheia_spacy.errors import InvalidInputError

if TYPE_CHECKING:
    from .model import EncoderOutput, StoicheiaEncoder

_HEADS = ("char", "boundary", "dia", "cap", "punct")


def window_spans(length: int, window: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """``(start, end, keep_lo, keep_hi)`` per window; the keep ranges tile ``0..length``."""
    if window < 1 or overlap < 0 or overlap >= window:
        raise InvalidInputError(f"need window >= 1 and 0 <= overlap < window, got {window=}, {overlap=}")
    if length <= window:
        return [(0, length, 0, length)]
    stride = window - overlap
    starts = list(range(0, length - window, stride)) + [length - window]
    spans = []
    for k, s in enumerate(starts):
        lo = 0 if k == 0 else (s + starts[k - 1] + window) // 2
        hi = length if k == len(starts) - 1 else (starts[k + 1] + s + window) // 2
        spans.append((s, s + window, lo, hi))
    return spans


def _row(x: torch.Tensor | None, name: str, length: int | None) -> torch.Tensor | None:
    if x is None:
        return None
    if x.dim() == 1:
        x = x[None]
    if x.dim() != 2 or x.shape[0] != 1 or (length is not None and x.shape[1] != length):
        raise InvalidInputError(f"encode_long takes one document: {name} must be (T,) or (1, T), got {tuple(x.shape)}")
    return x


def encode_long(
    model: StoicheiaEncoder,
    input_ids: torch.Tensor,
    boundary: torch.Tensor,
    dia: torch.Tensor,
    punct: torch.Tensor,
    *,
    window: int = 4096,
    overlap: int = 512,
    layers: Sequence[int] | None = None,
    callback: Callable[[int, int, EncoderOutput], None] | None = None,
    seg_id: torch.Tensor | None = None,
    cap: torch.Tensor | None = None,
    region: torch.Tensor | None = None,
    century: torch.Tensor | None = None,
) -> EncoderOutput | None:
    """Encode one document (``(T,)`` or ``(1, T)`` plane tensors) in overlapping windows.

    Returns an :class:`EncoderOutput` with batch size 1 whose ``hidden_states`` holds only
    the layers listed in ``layers`` (indices into embeddings + blocks, ``0..depth``; None =
    none kept), in that order. With ``callback(lo, hi, piece)`` each stitched piece
    (positions ``lo:hi``, batch 1) is handed over instead and the function returns None.
    Runs without autograd.
    """
    from .model import EncoderOutput

    ids = _row(input_ids, "input_ids", None)
    assert ids is not None
    T = int(ids.shape[1])
    if T == 0:
        raise InvalidInputError("cannot encode an empty document")
    planes = {
        "boundary": _row(boundary, "boundary", T),
        "dia": _row(dia, "dia", T),
        "punct": _row(punct, "punct", T),
    }
    extra = {
        "seg_id": _row(seg_id, "seg_id", T),
        "cap": _row(cap, "cap", T),
        "region": region,
        "century": century,
    }
    depth = model.config.depth
    wanted = list(layers) if layers is not None else []
    for layer in wanted:
        if not 0 <= layer <= depth:
            raise InvalidInputError(f"layer {layer} outside 0..{depth}")
    spans = window_spans(T, window, overlap)
    result: dict[str, torch.Tensor] = {}
    kept: list[torch.Tensor] = []
    with torch.no_grad():
        for start, end, lo, hi in spans:
            grabbed: dict[int, torch.Tensor] = {}
            a, b = lo - start, hi - start

            def grab(i: int, h: torch.Tensor, a: int = a, b: int = b, grabbed: dict[int, torch.Tensor] = grabbed) -> None:
                if i in wanted:
                    grabbed[i] = h[:, a:b].clone()

            kwargs: dict[str, Any] = {
                k: (v[:, start:end] if isinstance(v, torch.Tensor) and v.dim() == 2 and v.shape[1] == T else v)
                for k, v in extra.items()
            }
            out = model(
                ids[:, start:end],
                *(p[:, start:end] for p in planes.values() if p is not None),
                layer_callback=grab if wanted else None,
                **kwargs,
            )
            piece = EncoderOutput(
                **{h: getattr(out, h)[:, a:b] for h in _HEADS},
                last_hidden=out.last_hidden[:, a:b],
                hidden_states=tuple(grabbed[i] for i in wanted) if wanted else None,
            )
            if callback is not None:
                callback(lo, hi, piece)
                continue
            if not result:
                for h in (*_HEADS, "last_hidden"):
                    t = getattr(piece, h)
                    result[h] = t.new_empty((1, T, t.shape[-1]))
                kept = [t.new_empty((1, T, t.shape[-1])) for t in piece.hidden_states or ()]
            for h in (*_HEADS, "last_hidden"):
                result[h][:, lo:hi] = getattr(piece, h)
            for dst, src in zip(kept, piece.hidden_states or (), strict=True):
                dst[:, lo:hi] = src
    if callback is not None:
        return None
    return EncoderOutput(**result, hidden_states=tuple(kept) if wanted else None)
