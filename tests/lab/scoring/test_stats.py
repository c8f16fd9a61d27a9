"""Paired tests against scipy, hand-computed cases and the paper's reported values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from stoicheia_lab.scoring.stats import (
    bootstrap_ci,
    cohens_dz,
    mcnemar_exact,
    mcnemar_from_counts,
    paired_t_test,
    sign_flip_test,
)

from stoicheia_spacy.errors import ScoringError


def test_floor_at_n5_when_all_differences_positive() -> None:
    result = sign_flip_test(np.array([0.4, 1.2, 0.1, 2.0, 0.7]))
    assert result.exact and result.n == 5
    assert result.pvalue == pytest.approx(0.0625)
    assert result.floor == pytest.approx(0.0625) and result.at_floor


@pytest.mark.parametrize(
    "n,floor", [(6, 0.03125), (8, 0.0078125), (9, 0.00390625), (10, 0.001953125)]
)
def test_paper_floors(n: int, floor: float) -> None:
    # e.g. Stoicheia vs PhilBERTa LAS over 5 folds x 2 seeds: all ten differences positive
    result = sign_flip_test(np.linspace(0.5, 1.5, n), np.zeros(n))
    assert result.pvalue == pytest.approx(floor) and result.at_floor


def test_hand_computed_case() -> None:
    # d = (1, 2, -3): signed sums with |sum| >= |0| = all 8 -> p = 1
    assert sign_flip_test(np.array([1.0, 2.0, -3.0])).pvalue == 1.0
    # d = (1, 2, 4): sums +-1+-2+-4; |sum| >= 7 only for all + / all - -> 2/8
    assert sign_flip_test(np.array([1.0, 2.0, 4.0])).pvalue == pytest.approx(0.25)
    # d = (3, 1, 1, -1): |sum| = 4; sums of (+-3 +-1 +-1 +-1) with |.| >= 4:
    signs = np.array(list(itertools.product([1, -1], repeat=4)))
    expected = np.mean(np.abs(signs @ np.array([3, 1, 1, -1])) >= 4)
    result = sign_flip_test(np.array([3.0, 1.0, 1.0, -1.0]))
    assert result.pvalue == pytest.approx(expected) and not result.at_floor


def test_exact_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=9), rng.normal(size=9) + 0.5
    ours = sign_flip_test(a, b)
    theirs = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=10**6,
        alternative="two-sided",
    )
    assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-9)


def test_monte_carlo_above_20_is_seeded_and_close_to_t_test() -> None:
    rng = np.random.default_rng(1)
    d = rng.normal(loc=0.3, size=40)
    first = sign_flip_test(d, n_resamples=20_000, seed=3)
    assert not first.exact
    assert first.pvalue == sign_flip_test(d, n_resamples=20_000, seed=3).pvalue
    assert first.pvalue == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, abs=0.03)
    assert sign_flip_test(np.ones(30), n_resamples=1000).pvalue == pytest.approx(1 / 1001)


def test_paired_t_and_dz() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(size=10) + 1.0
    b = rng.normal(size=10)
    ours = paired_t_test(a, b)
    ref = stats.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.pvalue == pytest.approx(ref.pvalue)
    d = a - b
    assert ours.cohens_dz == pytest.approx(d.mean() / d.std(ddof=1))
    # t = d_z * sqrt(n) for a paired design
    assert ours.statistic == pytest.approx(ours.cohens_dz * np.sqrt(10))
    assert cohens_dz(np.array([1.0, 1.0, 1.0])) == np.inf
    assert cohens_dz(np.zeros(4)) == 0.0


def test_mcnemar_reproduces_paper_values() -> None:
    # Stoicheia vs Ithaca top-1 on Ithaca's test split: 439 vs 93 discordant samples
    assert mcnemar_from_counts(439, 93).pvalue == pytest.approx(9.7e-55, rel=0.01)
    assert mcnemar_from_counts(415, 100).pvalue == pytest.approx(1.3e-46, rel=0.05)
    assert mcnemar_from_counts(197, 166).pvalue == pytest.approx(0.12, abs=0.005)
    assert mcnemar_from_counts(0, 0).pvalue == 1.0


def test_mcnemar_from_outcomes() -> None:
    a = np.array([1, 1, 1, 1, 1, 0, 0, 1, 0, 1], dtype=bool)
    b = np.array([0, 0, 0, 0, 1, 0, 1, 1, 0, 0], dtype=bool)
    result = mcnemar_exact(a, b)
    assert (result.a_only, result.b_only) == (5, 1)
    # exact two-sided binomial: P(X <= 1) * 2 with X ~ Bin(6, 1/2) = 2 * 7/64
    assert result.pvalue == pytest.approx(14 / 64)
    with pytest.raises(ScoringError):
        mcnemar_exact(a, b[:5])
    with pytest.raises(ScoringError):
        mcnemar_exact(np.array([0, 2]), np.array([0, 1]))


def test_bootstrap_ci() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(loc=2.0, size=200)
    ci = bootstrap_ci(x, n_resamples=2000)
    assert ci.low < x.mean() < ci.high
    assert ci.low < 2.0 < ci.high
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    assert ci.high - ci.low == pytest.approx(2 * half, rel=0.2)
    paired = bootstrap_ci(x, x - 1.0, n_resamples=500)
    assert paired.estimate == pytest.approx(1.0) and paired.low == paired.high == pytest.approx(1.0)
    with pytest.raises(ScoringError):
        bootstrap_ci(x, x[:10])


@pytest.mark.parametrize(
    "a,b", [(np.array([]), None), (np.array([1.0, np.nan]), None), (np.ones(3), np.ones(4))]
)
def test_bad_inputs_raise(a: np.ndarray, b: np.ndarray | None) -> None:
    with pytest.raises(ScoringError):
        sign_flip_test(a, b)
