"""Fitting the width prior and the per-bucket temperatures of the restorer on dev.

Works on decoded candidate lists ``[(text, logprob, width), ...]`` so that one decoding
of the dev gaps serves every setting: :func:`rerank` applies a
:class:`~.widths.WidthPrior`; :func:`fit_prior` picks the ranking rule and the length
bonus with the lowest dev CER (averaged over neighbouring bonuses) (the width prior itself is the dev widths' frequencies);
:func:`fit_temperatures` fits one temperature per width bucket by the binary NLL of the
top candidate's probability against top-1 correctness; :func:`fit_confidence` then maps that
probability through ``sigmoid(slope * logit(p) + bias)`` (Platt scaling, two numbers fitted on
dev), the top candidate's ``confidence``: its chance of being right, where one temperature per
bucket cannot bend the reliability curve (scores rescored by the n-gram LM are over-confident at
low probabilities and under-confident at high ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .widths import WidthPrior

__all__ = ["rerank", "top_probability", "top_confidence", "fit_confidence", "fit_prior", "fit_temperatures",
           "fit_threshold", "TEMPERATURE_GRID"]

Cands = Sequence[tuple[str, float, int]]
TEMPERATURE_GRID = np.exp(np.linspace(np.log(0.05), np.log(1000.0), 300))


def rerank(cands: Cands, prior: WidthPrior) -> list[tuple[str, float, int, float]]:
    """``(text, logprob, width, key)`` best first under ``prior``."""
    scored = [(t, lp, w, prior.key(lp, w)) for t, lp, w in cands]
    return sorted(scored, key=lambda c: -c[3])


def top_probability(keys: np.ndarray, temperature: float, scale: float = 1.0) -> float:
    """Probability of the first of ``keys`` under softmax(key × scale / T) over the set."""
    if len(keys) == 0:
        return 0.0
    z = keys * scale / temperature
    z = np.exp(z - z.max())
    return float(z[0] / z.sum())


def fit_prior(dev: Sequence[Cands], gold: Sequence[str], cer: Callable[[str, str], float], *,
              widths: Sequence[int], max_width: int = 10,
              bonuses: Sequence[float] = tuple(np.round(np.arange(-1.0, 3.01, 0.1), 2)),
              smooth: int = 1) -> tuple[WidthPrior, float]:
    """The (rank rule, length bonus) with the lowest mean dev CER, with the dev widths'
    log prior; returns the prior and its dev CER.

    Each bonus is judged by its dev CER averaged with its ``smooth`` neighbours on either
    side of the grid: the CER rises steeply once the bonus over-fills (a candidate longer
    than the gap costs more than 100 % CER), so a minimum right at that edge would not
    survive a change of sample; ``smooth = 0`` takes the raw minimum."""
    base = WidthPrior.fit(list(widths), max_width=max_width)
    best: tuple[float, float, WidthPrior] | None = None
    for rank in ("total", "mean"):
        errs = []
        for bonus in bonuses:
            prior = WidthPrior(rank, float(bonus), base.log_prior)
            errs.append(float(np.mean([cer(rerank(c, prior)[0][0] if c else "", g)
                                       for c, g in zip(dev, gold, strict=True)])))
        for i, bonus in enumerate(bonuses):
            score = float(np.mean(errs[max(0, i - smooth) : i + smooth + 1]))
            if best is None or score < best[0] - 1e-12:
                best = (score, errs[i], WidthPrior(rank, float(bonus), base.log_prior))
    assert best is not None
    return best[2], best[1]


def _nll(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit_temperatures(keys: Sequence[np.ndarray], correct: Sequence[bool], buckets: Sequence[str], *,
                     scales: Sequence[float] | None = None, min_count: int = 5) -> dict[str, float]:
    """One temperature per bucket (grid search on the binary NLL of the top candidate's
    probability); buckets with fewer than ``min_count`` gaps share the pooled ``default``."""
    y = np.asarray(correct, dtype=float)
    sc = np.ones(len(keys)) if scales is None else np.asarray(scales, dtype=float)

    def best(idx: np.ndarray) -> float:
        losses = [_nll(np.array([top_probability(keys[i], T, sc[i]) for i in idx]), y[idx]) for T in TEMPERATURE_GRID]
        return float(TEMPERATURE_GRID[int(np.argmin(losses))])

    out = {"default": best(np.arange(len(keys)))}
    names = np.asarray(buckets)
    for name in sorted(set(buckets)):
        idx = np.flatnonzero(names == name)
        if len(idx) >= min_count:
            out[name] = best(idx)
    return out


def fit_threshold(top_probs: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray, *,
                  precision: float = 0.9, min_count: int = 5) -> float:
    """The abstention threshold: the lowest calibrated top probability ``t`` such that the dev
    gaps with a top probability >= ``t`` (at least ``min_count`` of them) are right at least
    ``precision`` of the time. When no such set exists the threshold is 1.0: the restorer never
    calls a restoration confident (a reading an editor can trust is not on offer)."""
    p = np.asarray(top_probs, dtype=float)
    y = np.asarray(correct, dtype=bool)
    if p.shape != y.shape:
        raise ValueError("top_probs and correct must have the same length")
    order = np.argsort(-p, kind="stable")
    hits = np.cumsum(y[order])
    n = np.arange(1, len(p) + 1)
    best = 1.0
    for i in range(len(p)):
        # only where the next gap has a lower probability (a threshold cannot split ties)
        if i + 1 < len(p) and p[order[i + 1]] == p[order[i]]:
            continue
        if n[i] >= min_count and hits[i] / n[i] >= precision:
            best = float(p[order[i]])
    return best


def top_confidence(top_prob: float | np.ndarray, slope: float | np.ndarray = 1.0,
                   bias: float | np.ndarray = 0.0) -> float | np.ndarray:
    """``sigmoid(slope * logit(top_prob) + bias)``: the top candidate's calibrated chance of being
    right (slope 1, bias 0: the probability itself)."""
    p = np.clip(np.asarray(top_prob, dtype=float), 1e-9, 1 - 1e-9)
    out = 1.0 / (1.0 + np.exp(-(slope * (np.log(p) - np.log1p(-p)) + bias)))
    return float(out) if np.ndim(out) == 0 else out


def fit_confidence(top_probs: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray) -> tuple[float, float]:
    """The ``(slope, bias)`` of :func:`top_confidence` with the lowest binary NLL on dev (grid:
    slope 0.25-5, bias -4-4)."""
    p = np.asarray(top_probs, dtype=float)
    y = np.asarray(correct, dtype=float)
    best = (np.inf, 1.0, 0.0)
    for slope in np.round(np.arange(0.25, 5.001, 0.05), 2):
        for bias in np.round(np.arange(-4.0, 4.001, 0.05), 2):
            loss = _nll(np.asarray(top_confidence(p, float(slope), float(bias))), y)
            if loss < best[0]:
                best = (loss, float(slope), float(bias))
    return best[1], best[2]
