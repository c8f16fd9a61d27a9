"""Shared pieces of the morphosyntax pipes: grouped softmax losses, sentence cuts and the
default token-heads model (the pipes' base class is
:class:`stoicheia_spacy.component.HeadPipe`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from spacy.training import Example


def grouped_softmax_loss(logits: np.ndarray, gold: np.ndarray, sizes: Sequence[int]) -> tuple[float, np.ndarray]:
    """Summed cross-entropy of several softmax groups; ``gold (N, G)`` holds class ids, -1 = no gold.

    Returns (mean loss per token with gold, gradient w.r.t. ``logits`` of that mean).
    """
    logits = np.asarray(logits, dtype=np.float32)
    gold = np.asarray(gold, dtype=np.int64).reshape(len(logits), len(sizes))
    d = np.zeros_like(logits)
    n = max(int((gold >= 0).any(axis=1).sum()), 1)
    loss = 0.0
    start = 0
    rows = np.arange(len(logits))
    for g, size in enumerate(sizes):
        block = logits[:, start:start + size]
        shifted = block - block.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        target = gold[:, g]
        known = target >= 0
        tgt = np.where(known, target, 0)
        loss -= float(np.log(probs[rows, tgt] + 1e-12)[known].sum())
        grad = probs.copy()
        grad[rows, tgt] -= 1.0
        d[:, start:start + size] = grad * known[:, None] / n
        start += size
    return loss / n, d


def softmax_xent_rows(scores: np.ndarray, gold: np.ndarray) -> tuple[float, np.ndarray, int]:
    """Cross-entropy over the last axis of ``scores (..., C)`` with ``gold (...)`` (-1 = none).

    Returns (summed loss, gradient of the summed loss, number of rows with gold).
    """
    shifted = scores - scores.max(axis=-1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=-1, keepdims=True)
    known = gold >= 0
    tgt = np.where(known, gold, 0)
    picked = np.take_along_axis(probs, tgt[..., None], axis=-1)[..., 0]
    loss = float(-np.log(picked + 1e-12)[known].sum())
    grad = probs
    np.put_along_axis(grad, tgt[..., None], np.take_along_axis(grad, tgt[..., None], -1) - 1.0, -1)
    grad *= known[..., None]
    return loss, grad.astype(np.float32), int(known.sum())


def gold_sentence_lengths(example: Example) -> list[int]:
    """Sentence lengths of ``example.predicted`` from the reference's sentence starts."""
    starts = example.get_aligned_sent_starts()
    n = len(example.predicted)
    cuts = [0] + [i for i in range(1, n) if starts[i] == 1]
    bounds = [*cuts, n]
    return [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


#: Default ``[model]`` of the token-level heads (morphologizer, lemmatizer): TokenHeads on the
#: shared encoder through a listener and the word pooler.
DEFAULT_TOKEN_HEADS_MODEL = """
[model]
@architectures = "stoicheia.TokenHeads.v1"
hidden_width = 256
dropout = 0.33

[model.tok2vec]
@architectures = "stoicheia.StoicheiaListener.v1"
upstream = "*"
grad_factor = 1.0

[model.tok2vec.pooling]
@architectures = "stoicheia.WordPooler.v1"
"""
