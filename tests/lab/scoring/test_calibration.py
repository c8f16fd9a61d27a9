"""ECE, reliability bins, temperature scaling and coverage/accuracy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from stoicheia_lab.scoring.calibration import (
    apply_temperature,
    confidence_and_correct,
    coverage_accuracy,
    expected_calibration_error,
    fit_temperature,
    reliability_diagram,
)

from stoicheia_spacy.errors import ScoringError


def test_hand_computed_ece() -> None:
    conf = np.array([0.05, 0.15, 0.95, 0.95, 0.55, 0.55])
    correct = np.array([0, 0, 1, 0, 1, 1])
    data = reliability_diagram(conf, correct, n_bins=10)
    assert data.count.tolist() == [1, 1, 0, 0, 0, 2, 0, 0, 0, 2]
    assert data.accuracy[9] == pytest.approx(0.5) and data.confidence[9] == pytest.approx(0.95)
    assert np.isnan(data.accuracy[2])
    expected = (1 * 0.05 + 1 * 0.15 + 2 * 0.45 + 2 * 0.45) / 6
    assert expected_calibration_error(conf, correct, n_bins=10) == pytest.approx(expected)


def test_bin_edges_are_right_closed() -> None:
    data = reliability_diagram(np.array([0.0, 0.5, 0.5000001, 1.0]), np.ones(4), n_bins=2)
    assert data.count.tolist() == [2, 2]


def test_perfectly_calibrated_sample_has_small_ece() -> None:
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.3, 1.0, size=200_000)
    correct = rng.random(conf.size) < conf
    assert expected_calibration_error(conf, correct) < 0.01
    overconfident = np.clip(conf + 0.2, 0, 1)
    assert expected_calibration_error(overconfident, correct) > 0.1


def test_temperature_scaling_recovers_the_true_temperature() -> None:
    rng = np.random.default_rng(1)
    true_logits = rng.normal(scale=2.0, size=(4000, 5))
    labels = np.array([rng.choice(5, p=p) for p in special.softmax(true_logits, axis=1)])
    overconfident = true_logits * 3.0  # a model 3x too sharp
    temperature = fit_temperature(overconfident, labels)
    assert temperature == pytest.approx(3.0, rel=0.1)
    before = expected_calibration_error(
        *confidence_and_correct(special.softmax(overconfident, axis=1), labels)
    )
    after = expected_calibration_error(
        *confidence_and_correct(apply_temperature(overconfident, temperature), labels)
    )
    assert after < before / 2
    assert np.allclose(apply_temperature(overconfident, temperature).sum(axis=1), 1.0)


def test_coverage_accuracy() -> None:
    conf = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05])
    correct = np.array([1, 1, 1, 1, 0, 1, 0, 0, 1, 0])
    points = coverage_accuracy(conf, correct)
    assert [p.coverage for p in points] == [0.5, 0.8, 1.0]
    assert [p.n_kept for p in points] == [5, 8, 10]
    assert [p.accuracy for p in points] == pytest.approx([4 / 5, 5 / 8, 6 / 10])
    assert points[0].threshold == pytest.approx(0.5)
    assert coverage_accuracy(conf, correct, coverages=[0.01])[0].n_kept == 1


@pytest.mark.parametrize(
    "conf,correct",
    [
        (np.array([0.5, 1.5]), np.array([1, 0])),
        (np.array([0.5]), np.array([1, 0])),
        (np.array([]), np.array([])),
        (np.array([0.5]), np.array([2])),
        (np.array([np.nan]), np.array([1])),
    ],
)
def test_bad_inputs_raise(conf: np.ndarray, correct: np.ndarray) -> None:
    with pytest.raises(ScoringError):
        expected_calibration_error(conf, correct)


def test_bad_temperature_inputs_raise() -> None:
    with pytest.raises(ScoringError):
        fit_temperature(np.zeros((3, 2)), np.array([0, 1, 2]))
    with pytest.raises(ScoringError):
        apply_temperature(np.zeros((3, 2)), 0.0)
    with pytest.raises(ScoringError):
        coverage_accuracy(np.array([0.5]), np.array([1]), coverages=[0.0])
