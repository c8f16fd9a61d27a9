"""Calibration: expected calibration error, reliability-diagram data, temperature
scaling, and accuracy at a given coverage (selective prediction).

Confidences are the probabilities the model assigns to its own prediction;
``correct`` says whether that prediction was right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from stoicheia_spacy.errors import ScoringError


def _check(confidences: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    conf = np.asarray(confidences, dtype=np.float64).reshape(-1)
    corr = np.asarray(correct).reshape(-1)
    if conf.shape != corr.shape:
        raise ScoringError(f"{conf.size} confidences but {corr.size} outcomes")
    if conf.size == 0:
        raise ScoringError("no predictions")
    if not np.isfinite(conf).all() or conf.min() < 0 or conf.max() > 1:
        raise ScoringError("confidences must be probabilities in [0, 1]")
    if not np.isin(corr, (0, 1)).all():
        raise ScoringError("outcomes must be binary (bool or 0/1)")
    return conf, corr.astype(np.float64)


@dataclass(frozen=True)
class ReliabilityData:
    """Per-bin data of a reliability diagram (equal-width bins over [0, 1]).

    Empty bins have count 0 and NaN confidence/accuracy.
    """

    edges: np.ndarray  # (n_bins + 1,)
    count: np.ndarray  # (n_bins,)
    confidence: np.ndarray  # mean confidence per bin
    accuracy: np.ndarray  # accuracy per bin

    @property
    def ece(self) -> float:
        """Expected calibration error: count-weighted mean |accuracy - confidence|."""
        used = self.count > 0
        gaps = np.abs(self.accuracy[used] - self.confidence[used])
        return float((gaps * self.count[used]).sum() / self.count.sum())


def reliability_diagram(
    confidences: np.ndarray, correct: np.ndarray, n_bins: int = 15
) -> ReliabilityData:
    """Bin predictions by confidence into ``n_bins`` equal-width bins (right-closed,
    0 falls in the first) and return counts, mean confidence and accuracy per bin."""
    if n_bins < 1:
        raise ScoringError(f"n_bins must be >= 1, got {n_bins}")
    conf, corr = _check(confidences, correct)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)
    count = np.bincount(bins, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(bins, weights=conf, minlength=n_bins) / count
        accuracy = np.bincount(bins, weights=corr, minlength=n_bins) / count
    return ReliabilityData(edges, count.astype(np.int64), mean_conf, accuracy)


def expected_calibration_error(
    confidences: np.ndarray, correct: np.ndarray, n_bins: int = 15
) -> float:
    """ECE with ``n_bins`` equal-width bins (see :func:`reliability_diagram`)."""
    return reliability_diagram(confidences, correct, n_bins).ece


def confidence_and_correct(probs: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max-probability confidences and correctness of argmax predictions from (N, C) probabilities."""
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64).reshape(-1)
    if p.ndim != 2 or p.shape[0] != y.size:
        raise ScoringError("probs must be (N, C) with one label per row")
    if y.size and (y.min() < 0 or y.max() >= p.shape[1]):
        raise ScoringError("labels out of range")
    return p.max(axis=1), p.argmax(axis=1) == y


def _nll(logits: np.ndarray, labels: np.ndarray, temperature: float) -> float:
    logp = special.log_softmax(logits / temperature, axis=1)
    return float(-logp[np.arange(labels.size), labels].mean())


def fit_temperature(
    logits: np.ndarray, labels: np.ndarray, *, bounds: tuple[float, float] = (0.05, 20.0)
) -> float:
    """Temperature T > 0 minimising the NLL of ``softmax(logits / T)`` on held-out data
    (bounded scalar search over log T)."""
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64).reshape(-1)
    if z.ndim != 2 or z.shape[0] != y.size or y.size == 0:
        raise ScoringError("logits must be (N, C) with one label per row, N >= 1")
    if not np.isfinite(z).all():
        raise ScoringError("logits must be finite")
    if y.min() < 0 or y.max() >= z.shape[1]:
        raise ScoringError("labels out of range")
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    result = optimize.minimize_scalar(
        lambda log_t: _nll(z, y, float(np.exp(log_t))), bounds=(lo, hi), method="bounded"
    )
    return float(np.exp(result.x))


def apply_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Probabilities ``softmax(logits / temperature)`` over the last axis."""
    if not temperature > 0:
        raise ScoringError(f"temperature must be > 0, got {temperature}")
    return special.softmax(np.asarray(logits, dtype=np.float64) / temperature, axis=-1)


@dataclass(frozen=True)
class CoveragePoint:
    """Accuracy on the most confident ``coverage`` fraction of predictions."""

    coverage: float
    n_kept: int
    accuracy: float
    threshold: float  # lowest confidence kept


def coverage_accuracy(
    confidences: np.ndarray,
    correct: np.ndarray,
    coverages: Sequence[float] = (0.5, 0.8, 1.0),
) -> list[CoveragePoint]:
    """Accuracy when answering only the ``ceil(c * N)`` most confident predictions.

    Ties in confidence are broken by input order (stable sort), so results are
    deterministic.
    """
    conf, corr = _check(confidences, correct)
    order = np.argsort(-conf, kind="stable")
    cum = np.cumsum(corr[order])
    points = []
    for c in coverages:
        if not 0 < c <= 1:
            raise ScoringError(f"coverage must be in (0, 1], got {c}")
        kept = max(1, int(np.ceil(c * conf.size - 1e-9)))
        points.append(
            CoveragePoint(float(c), kept, float(cum[kept - 1] / kept), float(conf[order][kept - 1]))
        )
    return points
