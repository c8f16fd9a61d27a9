"""Attributing a document (genre, dialect) from pooled backbone states.

:class:`LabelModel` holds linear label scores over standardised pooled states
(:func:`stoicheia_spacy.dating.pool_states`; a ridge classifier) and a softmax temperature
fitted on out-of-fold scores grouped by author, so that its probabilities are calibrated. Fitting is done by
``projects/date`` (``scripts/attribute.py``); this module only stores and applies the result.
"""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .dating import as_features
from .errors import ConfigError


@dataclass
class LabelEstimate:
    """The most probable ``label``, its ``probability`` and all calibrated ``probabilities``."""

    label: str
    probability: float
    probabilities: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.label} ({self.probability:.0%})"


@dataclass
class LabelModel:
    """Softmax weights over standardised pooled states; ``temperature`` divides the logits."""

    labels: list[str]
    coef: np.ndarray  # (n_labels, n_in)
    intercept: np.ndarray  # (n_labels,)
    center: np.ndarray
    scale: np.ndarray
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.coef.shape != (len(self.labels), self.center.shape[0]) or self.intercept.shape != (len(self.labels),):
            raise ConfigError(f"label model shapes disagree: {len(self.labels)} labels, coef {self.coef.shape}, "
                              f"intercept {self.intercept.shape}, {self.center.shape[0]} inputs")
        if not self.temperature > 0:
            raise ConfigError(f"label model temperature must be positive, got {self.temperature}")

    @property
    def n_in(self) -> int:
        return int(self.coef.shape[1])

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """Calibrated label probabilities (rows of ``x`` x labels)."""
        x = as_features(x, self.n_in, "label")
        logits = (((x - self.center) / self.scale) @ self.coef.T + self.intercept) / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        return weights / weights.sum(axis=1, keepdims=True)

    def estimate(self, vector: np.ndarray) -> LabelEstimate:
        """The label distribution of one pooled vector."""
        probs = self.predict_proba(vector)[0]
        best = int(np.argmax(probs))
        return LabelEstimate(self.labels[best], float(probs[best]),
                             {label: float(p) for label, p in zip(self.labels, probs, strict=True)})

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, labels=np.array(self.labels, dtype=str), coef=self.coef, intercept=self.intercept,
                 center=self.center, scale=self.scale, temperature=np.float32(self.temperature))
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> LabelModel:
        with np.load(io.BytesIO(data)) as arrays:
            return cls([str(v) for v in arrays["labels"]], arrays["coef"], arrays["intercept"],
                       arrays["center"], arrays["scale"], float(arrays["temperature"]))


__all__ = ["LabelEstimate", "LabelModel"]
