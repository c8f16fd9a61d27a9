"""Batch codec output (:class:`~stoicheia_spacy.codec.CharPlanes`) into padded model inputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from stoicheia_spacy import alphabet
from stoicheia_spacy.errors import InvalidInputError

_PLANES = (
    ("input_ids", "letters", alphabet.PAD_ID),
    ("boundary", "boundary", alphabet.BND_UNKNOWN),
    ("dia", "diacritics", alphabet.DIA_UNKNOWN),
    ("punct", "punctuation", alphabet.PUNCT_UNKNOWN),
    ("cap", "capitals", alphabet.CAP_LOWER),
)


def planes_to_tensors(
    planes: Sequence[Any], pad_to: int | None = None, *, device: str | torch.device = "cpu"
) -> dict[str, torch.Tensor]:
    """Pad a list of ``CharPlanes`` into ``(B, T)`` LongTensors, one document per row.

    Returns ``input_ids`` (PAD = ``alphabet.PAD_ID`` after each document), ``boundary``,
    ``dia``, ``punct`` (UNKNOWN ids at PAD), ``cap`` (raw capitals plane, 0 at PAD),
    ``seg_id`` (0 on letters, 1 on PAD so padding forms its own segment) and ``lengths``
    ``(B,)``. ``T`` is the longest document, or ``pad_to`` when given (must not be shorter).
    """
    if isinstance(planes, str | bytes) or not isinstance(planes, Sequence):
        raise InvalidInputError(f"planes_to_tensors expects a list of CharPlanes, got {type(planes).__name__}")
    if len(planes) == 0:
        raise InvalidInputError("planes_to_tensors needs at least one CharPlanes")
    lengths = []
    for i, p in enumerate(planes):
        try:
            n = len(p.letters)
            sizes = {len(getattr(p, field)) for _, field, _ in _PLANES}
        except AttributeError as exc:
            raise InvalidInputError(f"item {i} is not a CharPlanes ({type(p).__name__}): {exc}") from exc
        if sizes != {n}:
            raise InvalidInputError(f"item {i} has planes of unequal lengths {sorted(sizes)}")
        lengths.append(n)
    longest = max(lengths)
    T = longest if pad_to is None else int(pad_to)
    if T < longest:
        raise InvalidInputError(f"pad_to={pad_to} is shorter than the longest document ({longest} letters)")
    B = len(planes)
    out: dict[str, torch.Tensor] = {}
    for key, field, fill in _PLANES:
        arr = np.full((B, T), fill, dtype=np.int64)
        for row, p in enumerate(planes):
            arr[row, : lengths[row]] = np.asarray(getattr(p, field))
        out[key] = torch.from_numpy(arr).to(device)
    lens = torch.tensor(lengths, dtype=torch.long)
    seg = (torch.arange(T)[None, :] >= lens[:, None]).to(torch.long)
    out["seg_id"] = seg.to(device)
    out["lengths"] = lens.to(device)
    return out
