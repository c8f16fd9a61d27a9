"""Paired significance tests as used in the paper's design section.

* :func:`sign_flip_test` - exact sign-flip permutation test on paired differences
  (all 2^n sign assignments for n <= 20, seeded Monte Carlo above), two-sided, with
  the resolution floor 2/2^n reported.
* :func:`paired_t_test` - paired t-test (``scipy.stats.ttest_rel``) with Cohen's d_z.
* :func:`mcnemar_exact` - McNemar's exact test on paired binary outcomes
  (``scipy.stats.binomtest`` on the discordant pairs).
* :func:`bootstrap_ci` - bootstrap confidence interval (``scipy.stats.bootstrap``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from stoicheia_spacy.errors import ScoringError

#: Largest n for which the sign-flip test enumerates all 2^n assignments.
EXACT_MAX_N = 20


def _differences(a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    if b is not None:
        y = np.asarray(b, dtype=np.float64).reshape(-1)
        if x.shape != y.shape:
            raise ScoringError(f"paired samples differ in length: {x.size} vs {y.size}")
        x = x - y
    if x.size == 0:
        raise ScoringError("no pairs to test")
    if not np.isfinite(x).all():
        raise ScoringError("paired differences must be finite")
    return x


@dataclass(frozen=True)
class SignFlipResult:
    """Result of :func:`sign_flip_test`."""

    mean_difference: float
    pvalue: float
    n: int
    exact: bool
    floor: float  # smallest attainable two-sided p, 2 / 2^n (exact test only)

    @property
    def at_floor(self) -> bool:
        """True when p equals the resolution limit 2/2^n (all signs agree)."""
        return self.exact and self.pvalue <= self.floor * (1 + 1e-9)


def sign_flip_test(
    a: np.ndarray,
    b: np.ndarray | None = None,
    *,
    n_resamples: int = 100_000,
    seed: int = 0,
) -> SignFlipResult:
    """Two-sided sign-flip permutation test of mean(a - b) = 0 (or mean(a) = 0 if ``b`` is None).

    For n <= 20 pairs all 2^n sign assignments are enumerated, so p is exact and
    cannot fall below ``2 / 2**n`` (0.0625 at n = 5). Above that, ``n_resamples``
    seeded random assignments give ``p = (1 + hits) / (1 + n_resamples)``.
    """
    d = _differences(a, b)
    n = d.size
    observed = abs(d.sum())
    tol = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if n <= EXACT_MAX_N:
        sums = np.zeros(1)
        for value in d:  # 2^n signed sums, built by doubling
            sums = np.concatenate([sums + value, sums - value])
        pvalue = float(np.mean(np.abs(sums) >= observed - tol))
        return SignFlipResult(float(d.mean()), pvalue, n, True, 2.0 / 2**n)
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = 10_000
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(size, n))
        hits += int((np.abs(signs @ d) >= observed - tol).sum())
    pvalue = (1 + hits) / (1 + n_resamples)
    return SignFlipResult(float(d.mean()), pvalue, n, False, 1.0 / (1 + n_resamples))


@dataclass(frozen=True)
class PairedTResult:
    """Result of :func:`paired_t_test`."""

    mean_difference: float
    statistic: float
    pvalue: float
    cohens_dz: float  # mean difference / sd of differences (ddof 1)
    n: int


def cohens_dz(a: np.ndarray, b: np.ndarray | None = None) -> float:
    """Cohen's d_z: mean of the paired differences over their standard deviation (ddof 1).

    ``inf`` (signed) when all differences are equal and non-zero, 0 when all are zero.
    """
    d = _differences(a, b)
    if d.size < 2:
        raise ScoringError("d_z needs at least two pairs")
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if sd == 0.0:
        return 0.0 if mean == 0.0 else float(np.copysign(np.inf, mean))
    return mean / sd


def paired_t_test(a: np.ndarray, b: np.ndarray) -> PairedTResult:
    """Two-sided paired t-test (``scipy.stats.ttest_rel``) with Cohen's d_z."""
    d = _differences(a, b)
    if d.size < 2:
        raise ScoringError("a paired t-test needs at least two pairs")
    result = stats.ttest_rel(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return PairedTResult(
        float(d.mean()), float(result.statistic), float(result.pvalue), cohens_dz(d), d.size
    )


@dataclass(frozen=True)
class McNemarResult:
    """Result of :func:`mcnemar_exact`: discordant counts and the exact p-value."""

    a_only: int  # pairs where only system A is right
    b_only: int  # pairs where only system B is right
    pvalue: float


def mcnemar_exact(a_correct: np.ndarray, b_correct: np.ndarray) -> McNemarResult:
    """McNemar's exact test on paired binary outcomes (two-sided binomial test on discordant pairs)."""
    a = np.asarray(a_correct)
    b = np.asarray(b_correct)
    if a.shape != b.shape or a.ndim != 1:
        raise ScoringError("paired outcomes must be two 1-d arrays of the same length")
    if not (np.isin(a, (0, 1)).all() and np.isin(b, (0, 1)).all()):
        raise ScoringError("paired outcomes must be binary (bool or 0/1)")
    a = a.astype(bool)
    b = b.astype(bool)
    return mcnemar_from_counts(int((a & ~b).sum()), int((b & ~a).sum()))


def mcnemar_from_counts(a_only: int, b_only: int) -> McNemarResult:
    """McNemar's exact test from the two discordant counts; p = 1 when there are none."""
    if a_only < 0 or b_only < 0:
        raise ScoringError("discordant counts must be non-negative")
    total = a_only + b_only
    pvalue = 1.0 if total == 0 else float(stats.binomtest(a_only, total, 0.5).pvalue)
    return McNemarResult(a_only, b_only, pvalue)


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.mean(x, axis=axis))


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with its bootstrap interval."""

    estimate: float
    low: float
    high: float
    confidence: float


def bootstrap_ci(
    *samples: np.ndarray,
    statistic: Callable[..., np.ndarray] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 9_999,
    paired: bool = True,
    method: str = "BCa",
    seed: int = 0,
) -> ConfidenceInterval:
    """Bootstrap confidence interval of ``statistic(*samples)`` (default: mean of one sample,
    or mean paired difference of two), resampling pairs together when ``paired``.

    ``statistic`` must accept an ``axis`` keyword, as in ``scipy.stats.bootstrap``.
    """
    if not samples:
        raise ScoringError("bootstrap_ci needs at least one sample")
    arrays = [np.asarray(s, dtype=np.float64).reshape(-1) for s in samples]
    if any(a.size < 2 for a in arrays):
        raise ScoringError("bootstrap needs at least two observations per sample")
    if paired and len({a.size for a in arrays}) != 1:
        raise ScoringError("paired samples differ in length")
    if not 0 < confidence < 1:
        raise ScoringError(f"confidence must be in (0, 1), got {confidence}")
    stat: Callable[..., np.ndarray] = _mean if statistic is None else statistic
    if statistic is None:
        if len(arrays) == 2 and paired:
            arrays = [arrays[0] - arrays[1]]  # mean paired difference
        elif len(arrays) != 1:
            raise ScoringError("give a statistic for unpaired or more than two samples")
    estimate = float(stat(*arrays, axis=-1))
    if all(np.ptp(a) == 0 for a in arrays):
        return ConfidenceInterval(estimate, estimate, estimate, confidence)
    result = stats.bootstrap(
        tuple(arrays),
        stat,
        paired=paired,
        vectorized=True,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method=method,
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return ConfidenceInterval(estimate, float(ci.low), float(ci.high), confidence)
