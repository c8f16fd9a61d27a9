"""Scorers and significance tests shared by the restorer, parser and scanner (numpy/scipy)."""

from __future__ import annotations

from .calibration import (
    ReliabilityData,
    apply_temperature,
    coverage_accuracy,
    expected_calibration_error,
    fit_temperature,
    reliability_diagram,
)
from .cer import RestorationSample, RestorationScores, cer, fold_sigma, score_restorations
from .conll import Score, read_conllu, score_conll
from .stats import (
    bootstrap_ci,
    cohens_dz,
    mcnemar_exact,
    mcnemar_from_counts,
    paired_t_test,
    sign_flip_test,
)

__all__ = [
    "ReliabilityData",
    "RestorationSample",
    "RestorationScores",
    "Score",
    "apply_temperature",
    "bootstrap_ci",
    "cer",
    "cohens_dz",
    "coverage_accuracy",
    "expected_calibration_error",
    "fit_temperature",
    "fold_sigma",
    "mcnemar_exact",
    "mcnemar_from_counts",
    "paired_t_test",
    "read_conllu",
    "reliability_diagram",
    "score_conll",
    "score_restorations",
    "sign_flip_test",
]
