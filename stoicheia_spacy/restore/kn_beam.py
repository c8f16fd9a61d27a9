"""The n-gram's own restorations: a beam from each side of a gap, the union rescored by both
directions of a :class:`~.kneser_ney.KneserNeyLM`.

For every candidate width of a :class:`~.beam.GapQuery` (a known width, each width of a range,
widths 1..``max_letters`` for an unknown one, or ``N..N+3`` characters holding exactly ``N``
letters for a gap counted in letters), a left-to-right beam grows the gap's characters (letters
and single word breaks) after the left context and a right-to-left beam grows them before the
right context, ``beam`` hypotheses each. Every candidate of the union is then scored by both
models: ``fwd`` = log P→(gap + ``far`` symbols of the right context | left context), ``rev`` =
log P←(gap + ``far`` symbols of the left context | right context) (:func:`score_texts`; the
far-side symbols make the two comparable across candidates of one gap). The candidate's score
is ``fwd + rev`` unless a caller combines them otherwise (:mod:`.combine`).

The gap's edges follow :class:`~.ngram_lm.LMRescorer`: a gap that does not touch a letter on a
side has a word break there, and no two word breaks are adjacent. All hypotheses of all gaps of
one direction run through one batched lookup per step (steps = the widest gap's characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..alphabet import ALPHABET, MASK_ID
from .kneser_ney import N_PREDICT, SPACE, UNK, KneserNeyLM

__all__ = ["KnCandidate", "gap_symbols", "kn_restore", "render", "score_texts", "text_to_symbols"]

#: context letters read on each side of a gap (enough for the histories and the far side)
CONTEXT = 32
_LETTER = {ch: i for i, ch in enumerate(ALPHABET)} | {"ς": ALPHABET.index("σ"), "ϲ": ALPHABET.index("σ"), " ": SPACE}


@dataclass(frozen=True)
class KnCandidate:
    """One n-gram restoration: its text, width (characters) and both directions' scores."""

    text: str
    width: int
    fwd: float
    rev: float

    @property
    def score(self) -> float:
        return self.fwd + self.rev


def _symbols(letters: np.ndarray, boundary: np.ndarray) -> np.ndarray:
    sym = np.where(letters == MASK_ID, UNK, letters).astype(np.int64)
    space_after = (boundary == 1) | (boundary == 2)
    return np.insert(sym, np.flatnonzero(space_after) + 1, SPACE)


def gap_symbols(query: object, context: int = CONTEXT) -> tuple[np.ndarray, np.ndarray]:
    """The symbols left and right of a gap, each with the word break the gap's edge implies
    (a gap that does not touch a letter on a side has one there)."""
    ctx, at = query.context, int(query.insert_at)  # type: ignore[attr-defined]
    lo, hi = max(0, at - context), min(len(ctx), at + context)
    left = _symbols(ctx.letters[lo:at], ctx.boundary[lo:at])
    right = _symbols(ctx.letters[at:hi], ctx.boundary[at:hi])
    if query.left_open:  # type: ignore[attr-defined]
        left = left[:-1] if len(left) and left[-1] == SPACE else left
    elif len(left) and left[-1] != SPACE:
        left = np.append(left, SPACE)
    if not query.right_open and (not len(right) or right[0] != SPACE):  # type: ignore[attr-defined]
        right = np.concatenate([[SPACE], right])
    return left.astype(np.int64), right.astype(np.int64)


def text_to_symbols(text: str) -> np.ndarray:
    """A candidate text (bare letters, spaces) as symbols (other characters dropped)."""
    return np.array([_LETTER[ch] for ch in text if ch in _LETTER], dtype=np.int64)


def render(symbols: np.ndarray, next_symbol: int) -> str:
    """Letters and spaces of a symbol run; σ is ς before a break (or ``next_symbol`` SPACE)."""
    chars = [" " if s == SPACE else ALPHABET[s] for s in symbols.tolist()]
    after = list(symbols[1:].tolist()) + [next_symbol]
    return "".join("ς" if c == "σ" and a in (SPACE, UNK) else c for c, a in zip(chars, after, strict=True))


def _beam(lm: KneserNeyLM, ctx: np.ndarray, far: np.ndarray, widths: np.ndarray, beam: int,
          reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """Beams for J jobs at once: ``ctx`` (J, order-1) the context nearest first, ``far`` (J,) the
    symbol beyond the gap's other edge, ``widths`` (J,). Returns fills (J, beam, max width) in
    generation order and scores (J, beam) (-inf: no hypothesis)."""
    J, c = ctx.shape
    W = int(widths.max()) if J else 0
    hist = np.repeat(ctx[:, None, :], beam, axis=1)  # (J, B, c)
    score = np.full((J, beam), -np.inf)
    score[:, 0] = 0.0
    fills = np.full((J, beam, W), UNK, np.int64)
    for t in range(W):  # over the gap's positions (all gaps of the batch at once)
        act = np.flatnonzero(widths > t)
        h = hist[act].reshape(-1, c)
        lp = lm.next_logprobs(h, reverse=reverse).reshape(len(act), beam, N_PREDICT)
        bad = h[:, 0].reshape(len(act), beam) == SPACE
        last = (widths[act] == t + 1) & (far[act] == SPACE)
        lp[..., SPACE] = np.where(bad | last[:, None], -np.inf, lp[..., SPACE])
        cand = (score[act][:, :, None] + lp).reshape(len(act), -1)
        top = np.argsort(-cand, axis=1, kind="stable")[:, :beam]
        parent, sym = top // N_PREDICT, top % N_PREDICT
        rows = act[:, None]
        score[act] = np.take_along_axis(cand, top, axis=1)
        fills[act] = fills[rows, parent]
        fills[act, :, t] = sym
        hist[act] = np.concatenate([sym[:, :, None], hist[rows, parent][:, :, :-1]], axis=2)
    return fills, score


def score_texts(lm: KneserNeyLM, left: np.ndarray | Sequence[np.ndarray], right: np.ndarray | Sequence[np.ndarray],
                cands: Sequence[np.ndarray], far: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``fwd`` and ``rev`` of each candidate (symbol arrays) between ``left`` and ``right`` (one
    pair for all candidates, or one per candidate)."""
    lefts = [left] * len(cands) if isinstance(left, np.ndarray) else list(left)
    rights = [right] * len(cands) if isinstance(right, np.ndarray) else list(right)
    rows = [np.concatenate([a, c, b]) for a, c, b in zip(lefts, cands, rights, strict=True)]
    n = np.array([len(a) for a in lefts], dtype=np.int64)
    widths = np.array([len(c) for c in cands], dtype=np.int64)
    ends_f = n + widths + np.minimum(far, [len(b) for b in rights])
    fwd = lm.sequence_logprob(rows, n, ends_f)
    rev = lm.sequence_logprob(rows, np.maximum(0, n - far), n + widths, reverse=True)
    return fwd, rev


def _widths(query: object, max_letters: int) -> tuple[list[int], int | None]:
    letters = getattr(query, "letters", None)
    if letters:
        return list(range(int(letters), int(letters) + 4)), int(letters)
    widths = getattr(query, "widths", None)
    return (list(range(1, max_letters + 1)) if widths is None else [int(w) for w in widths]), None


def kn_restore(lm: KneserNeyLM, queries: Sequence[object], *, beam: int = 20, far: int = 10,
               max_letters: int = 10, max_width: int = 64) -> list[list[KnCandidate]]:
    """The union of both directions' beams for every query, best ``fwd + rev`` first."""
    c = lm.order - 1
    sides = [gap_symbols(q) for q in queries]
    jobs: list[tuple[int, int]] = []
    for qi, q in enumerate(queries):
        ws, _ = _widths(q, max_letters)
        jobs += [(qi, w) for w in ws if w <= max_width]
    found: list[dict[tuple[int, ...], None]] = [{} for _ in queries]
    if jobs:
        widths = np.array([w for _, w in jobs])
        for reverse in (False, True):
            ctx = np.full((len(jobs), c), UNK, np.int64)
            far_sym = np.empty(len(jobs), np.int64)
            for j, (qi, _) in enumerate(jobs):
                left, right = sides[qi]
                near = right[:c] if reverse else left[::-1][:c]
                ctx[j, : len(near)] = near
                other = left[-1:] if reverse else right[:1]
                far_sym[j] = other[0] if len(other) else UNK
            fills, score = _beam(lm, ctx, far_sym, widths, beam, reverse)
            for j, (qi, w) in enumerate(jobs):
                for b in np.flatnonzero(np.isfinite(score[j])):
                    seq = fills[j, b, :w]
                    found[qi][tuple((seq[::-1] if reverse else seq).tolist())] = None
    per_query: list[list[np.ndarray]] = []
    for qi, q in enumerate(queries):
        _, n_letters = _widths(q, max_letters)
        cands = [np.array(k, np.int64) for k in found[qi]]
        if n_letters is not None:
            cands = [s for s in cands if int((s != SPACE).sum()) == n_letters]
        per_query.append(cands)
    # every candidate of every query rescored in one batched lookup per direction
    owner = [qi for qi, cands in enumerate(per_query) for _ in cands]
    flat = [s for cands in per_query for s in cands]
    lefts = [sides[qi][0] for qi in owner]
    rights = [sides[qi][1] for qi in owner]
    fwd, rev = score_texts(lm, lefts, rights, flat, far)
    out: list[list[KnCandidate]] = [[] for _ in queries]
    for qi, s, f, r in zip(owner, flat, fwd, rev, strict=True):
        right = sides[qi][1]
        out[qi].append(KnCandidate(render(s, int(right[0]) if len(right) else UNK), len(s), float(f), float(r)))
    return [sorted(items, key=lambda x: -x.score) for items in out]
