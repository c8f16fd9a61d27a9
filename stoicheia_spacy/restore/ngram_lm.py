"""A compact character n-gram LM for restoration: storage, a beam scorer, sequence scores.

The model is :class:`~stoicheia_spacy.restore.char_ngram.CharNgramLM` (interpolated Kneser-Ney
over the 24 letters, ``SPACE`` and ``UNK``). This module adds what the restorer needs:

* :func:`save_lm` / :func:`load_lm`: one ``.npz`` file (hash keys int64, counts float32),
  pruned by :func:`prune` (top-order n-grams seen fewer than ``min_count`` times dropped,
  so a model of millions of letters stays a few MB);
* :class:`NgramScorer`: the LM as a beam :class:`~.beam.Scorer` (masked letters from both
  sides of every hypothesis by ``masked_logprobs``, word breaks by P(SPACE | left history);
  BLANK is never predicted);
* :func:`letters_to_symbols` / :func:`window_logprob`: the left-to-right log-probability of a
  filled window (left context, candidate, right context), used to rescore candidate lists;
* :class:`LMRescorer`: that joint log-probability for the finished candidates of a
  :class:`~.beam.GapQuery` (the candidate and the right context given the left), added to their
  scores by the beam (``rescore``): inside the beam the LM only sees a slot's neighbours up to the
  next open slot, so a gap whose word is fixed by the letters right of it (``[.3]ρειν`` →
  ``χαι``) is found but ranked low until the whole filled window is scored.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..alphabet import ALPHABET, MASK_ID, N_ALPHA, PAD_ID
from ..errors import CheckpointError
from .char_ngram import SPACE, UNK, CharNgramLM, _Table

__all__ = ["LMRescorer", "NgramScorer", "lm_digest", "load_lm", "prune", "save_lm", "text_symbols", "window_logprob"]


def prune(lm: CharNgramLM, min_count: int = 2) -> CharNgramLM:
    """``lm`` with the top-order n-grams seen fewer than ``min_count`` times dropped. Their
    history statistics are kept, so a dropped n-gram gets only its back-off share: the model
    no longer sums to one over symbols, and its scores are read renormalised over the letters
    (``masked_logprobs``, the fused beam) or compared between candidates of one gap."""
    if min_count > 1 and lm._ngram:
        top = lm._ngram[-1]
        keep = top.values >= min_count
        lm._ngram[-1] = _Table(top.keys[keep], top.values[keep])
    return lm


def save_lm(lm: CharNgramLM, path: str | Path) -> None:
    """Write ``lm`` to one ``.npz`` file (keys int64, values float32)."""
    arrays: dict[str, np.ndarray] = {"order": np.array([lm.order]), "discount": np.array([lm.discount])}
    for name in ("_ngram", "_hist_total", "_hist_types"):
        for k, table in enumerate(getattr(lm, name)):
            arrays[f"{name}{k}_keys"] = table.keys.astype(np.int64)
            arrays[f"{name}{k}_values"] = table.values.astype(np.float32)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]


def lm_digest(lm: CharNgramLM) -> str:
    """sha256 of the LM's order, discount and tables as stored (float32 values): the same for
    every build of the same text, unlike the bytes of the ``.npz`` (its zip entries are dated)."""
    h = hashlib.sha256(f"{lm.order} {lm.discount}".encode())
    for name in ("_ngram", "_hist_total", "_hist_types"):
        for table in getattr(lm, name):
            h.update(np.ascontiguousarray(table.keys, dtype=np.int64).tobytes())
            h.update(np.ascontiguousarray(table.values, dtype=np.float32).tobytes())
    return h.hexdigest()


def load_lm(path: str | Path, sha256: str | None = None) -> CharNgramLM:
    """The LM saved by :func:`save_lm`; a missing or damaged file, or one whose
    :func:`lm_digest` is not ``sha256`` (when given), raises ``CheckpointError``."""
    try:
        with np.load(path) as data:
            lm = CharNgramLM(order=int(data["order"][0]), discount=float(data["discount"][0]))
            for name in ("_ngram", "_hist_total", "_hist_types"):
                setattr(lm, name, [_Table(data[f"{name}{k}_keys"], data[f"{name}{k}_values"].astype(np.float64))
                                   for k in range(lm.order)])
    except (OSError, KeyError, ValueError) as exc:
        raise CheckpointError(f"cannot read the character n-gram LM {path}: {exc}") from exc
    if sha256 and lm_digest(lm) != sha256:
        raise CheckpointError(f"the character n-gram LM {path} is not the pinned one (sha256 {sha256[:12]}…): "
                              "rebuild it with `make restore-lm`")
    return lm


def text_symbols(letters: np.ndarray, boundary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symbols of a row of letter ids (MASK -> ``UNK``) with ``SPACE`` after each letter whose
    boundary is a break (1 or 2), and each letter's position in them."""
    sym = np.where(letters == MASK_ID, UNK, letters).astype(np.int64)
    space_after = (boundary == 1) | (boundary == 2)
    seq = np.insert(sym, np.flatnonzero(space_after) + 1, SPACE)
    pos = np.arange(len(letters)) + np.concatenate([[0], np.cumsum(space_after)[:-1]]).astype(np.int64)
    return seq, pos


class NgramScorer:
    """The LM as a beam scorer over the batch tensors of :func:`~stoicheia_spacy.backbone.planes_to_tensors`:
    letters ``(B, T, 26)`` (masked slots: ``masked_logprobs``, other positions uniform; MASK and
    BLANK columns -inf) and breaks ``(B, T, 2)`` (P(SPACE | left history) after each letter)."""

    def __init__(self, lm: CharNgramLM) -> None:
        self.lm = lm
        self.forwards = 0

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        self.forwards += 1
        ids, bnd = batch["input_ids"].numpy(), batch["boundary"].numpy()
        B, T = ids.shape
        letters = np.full((B, T, 26), np.log(1 / N_ALPHA), dtype=np.float32)
        letters[..., N_ALPHA:] = -np.inf
        breaks = np.zeros((B, T, 2), dtype=np.float32)
        ctx = self.lm.order - 1
        for r in range(B):
            n = int((ids[r] != PAD_ID).sum())
            seq, pos = text_symbols(ids[r, :n], bnd[r, :n])
            masked = np.flatnonzero(ids[r, :n] == MASK_ID)
            if len(masked):
                letters[r, masked, :N_ALPHA] = self.lm.masked_logprobs(seq, pos[masked])
            padded = np.concatenate([np.full(ctx, SPACE), seq])
            hist = np.lib.stride_tricks.sliding_window_view(padded, ctx)[pos + 1]
            is_unk = hist == UNK
            last = np.where(is_unk.any(1), ctx - 1 - np.argmax(is_unk[:, ::-1], axis=1), -1)
            lp = self.lm.logprob(np.where(is_unk, SPACE, hist), np.full(n, SPACE), ctx - 1 - last)
            p = np.clip(np.exp(lp), 1e-6, 1 - 1e-6)
            breaks[r, :n, 0], breaks[r, :n, 1] = np.log1p(-p), np.log(p)
        return torch.from_numpy(letters), torch.from_numpy(breaks)


def window_logprob(lm: CharNgramLM, rows: list[np.ndarray], starts: np.ndarray) -> np.ndarray:
    """Left-to-right log-probability of the symbols of each row from ``starts[i]`` to its end,
    every prediction conditioned on up to ``order - 1`` symbols before it (an ``UNK`` cuts the
    history; ``UNK`` symbols themselves are not scored). Rows are symbol arrays (see
    :func:`text_symbols`); a candidate's score is its row's window minus nothing else, so rows of
    one gap share their context and compare directly."""
    ctx = lm.order - 1
    hists, syms, lens, owner = [], [], [], []
    for i, (seq, s) in enumerate(zip(rows, starts, strict=True)):
        padded = np.concatenate([np.full(ctx, SPACE, np.int64), np.asarray(seq, np.int64)])
        idx = np.arange(int(s), len(seq))
        if not len(idx):
            continue
        hist = np.lib.stride_tricks.sliding_window_view(padded, ctx)[idx]
        is_unk = hist == UNK
        last = np.where(is_unk.any(1), ctx - 1 - np.argmax(is_unk[:, ::-1], axis=1), -1)
        sym = np.asarray(seq, np.int64)[idx]
        keep = sym != UNK
        hists.append(np.where(is_unk, SPACE, hist)[keep])
        syms.append(sym[keep])
        lens.append((ctx - 1 - last)[keep])
        owner.append(np.full(int(keep.sum()), i))
    out = np.zeros(len(rows))
    if hists:
        lp = lm.logprob(np.concatenate(hists), np.concatenate(syms), np.concatenate(lens))
        np.add.at(out, np.concatenate(owner), lp)
    return out


#: a candidate text's characters as LM symbols (the codec's letter ids; final sigma is sigma)
_LETTER_SYMBOL = {ch: i for i, ch in enumerate(ALPHABET)} | {"ς": ALPHABET.index("σ"), " ": SPACE}


class LMRescorer:
    """``weight`` × the LM's joint log-probability of each candidate text and the right context
    after it, given the left context (``context`` letters a side of the gap, other gaps ``UNK``):
    the beam's ``rescore`` hook (:func:`~.beam.beam_search`)."""

    def __init__(self, lm: CharNgramLM, weight: float, context: int = 24) -> None:
        self.lm = lm
        self.weight = float(weight)
        self.context = int(context)

    def __call__(self, query: Any, texts: list[str]) -> np.ndarray:
        if not texts or self.weight == 0:
            return np.zeros(len(texts))
        ctx, at = query.context, int(query.insert_at)
        lo, hi = max(0, at - self.context), min(len(ctx), at + self.context)
        left, _ = text_symbols(ctx.letters[lo:at].astype(np.int64), ctx.boundary[lo:at])
        right, _ = text_symbols(ctx.letters[at:hi].astype(np.int64), ctx.boundary[at:hi])
        if query.left_open and len(left) and left[-1] == SPACE:
            left = left[:-1]  # the candidate says whether a break falls at the left edge
        if not query.left_open and (not len(left) or left[-1] != SPACE):
            left = np.append(left, SPACE)
        rows = []
        for text in texts:
            cand = np.array([_LETTER_SYMBOL[ch] for ch in text if ch in _LETTER_SYMBOL], dtype=np.int64)
            if not query.right_open and (not len(cand) or cand[-1] != SPACE):
                cand = np.append(cand, SPACE)
            rows.append(np.concatenate([left, cand, right]))
        return self.weight * window_logprob(self.lm, rows, np.full(len(rows), len(left)))
