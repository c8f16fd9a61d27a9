"""XPOS decoding constrained to attested tags.

The factored heads give nine independent distributions (one per AGDT position);
decoding picks, among the full tags seen in training, the one that maximises the sum
of its positions' log-probabilities: one gather and one argmax over an
``(n_tokens, n_attested)`` matrix, so a prediction is always a tag the treebanks use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import InvalidInputError
from .agdt_tags import N_CLASSES, TAG_LENGTH, is_valid_tag, tags_to_ids


def attested_ids(tags: Iterable[str]) -> tuple[list[str], np.ndarray]:
    """Sorted distinct valid tags of ``tags`` and their ``(M, 9)`` class ids."""
    kept = sorted({t for t in tags if is_valid_tag(t)})
    return kept, tags_to_ids(kept).astype(np.int64)


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable log-softmax."""
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def position_logprobs(logits: np.ndarray, sizes: Sequence[int] = N_CLASSES) -> list[np.ndarray]:
    """Split ``(N, sum(sizes))`` logits into per-position log-probabilities."""
    if logits.ndim != 2 or logits.shape[1] != sum(sizes):
        raise InvalidInputError(f"expected (N, {sum(sizes)}) XPOS logits, got {logits.shape}")
    bounds = np.cumsum((0, *sizes))
    return [log_softmax(logits[:, a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def constrained_decode(
    logprobs: Sequence[np.ndarray], attested: np.ndarray, bonus: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Best attested tag per token.

    ``logprobs``: nine ``(N, C_i)`` arrays; ``attested``: ``(M, 9)`` class ids; ``bonus``:
    optional ``(N, M)`` scores added per (token, tag), e.g. a UPOS head's log-probability
    of the tag's UPOS (joint decoding). Returns (index into ``attested`` (N,), its total
    score (N,)).
    """
    if len(logprobs) != TAG_LENGTH:
        raise InvalidInputError(f"expected {TAG_LENGTH} position distributions, got {len(logprobs)}")
    attested = np.asarray(attested, dtype=np.int64)
    if attested.ndim != 2 or attested.shape[1] != TAG_LENGTH or len(attested) == 0:
        raise InvalidInputError(f"attested ids must be a non-empty (M, 9) array, got {attested.shape}")
    n = logprobs[0].shape[0]
    total = np.zeros((n, attested.shape[0]), dtype=np.float64)
    for i, lp in enumerate(logprobs):
        total += lp[:, attested[:, i]]
    if bonus is not None:
        total += bonus
    best = total.argmax(axis=1) if attested.shape[0] else np.zeros(n, dtype=np.int64)
    return best, total[np.arange(n), best]
