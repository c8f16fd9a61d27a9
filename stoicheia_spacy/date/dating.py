"""Dating a document from pooled backbone states: ridge mean + cross-validated residuals.

:func:`pool_states` turns the encoder's ``doc._.stoicheia.hidden`` stack into one vector
(mean over letters of the chosen layers, concatenated). :class:`DateModel` is a fitted
ridge regressor on those vectors (standardised inputs, years as target) that carries the
out-of-fold residuals of its training run: a prediction is the ridge mean shifted by that
residual sample, which gives the 90 % interval (residual quantiles) and a histogram over
fixed-width year bins (:class:`DateEstimate`). Fitting (choice of the ridge strength,
residuals) is done by ``projects/date``; this module only stores and applies the result.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..encoder.states import StateNeed, missing, prefix_letters, state_key
from ..errors import ConfigError
from .results import DateEstimate

#: Default layers pooled: the middle and the last block output (indices into ``hidden``).
DEFAULT_LAYERS: tuple[int, ...] = (3, 6)
#: Width of the histogram bins in years.
BIN_YEARS = 25


def pool_states(hidden: np.ndarray, layers: tuple[int, ...] = DEFAULT_LAYERS) -> np.ndarray:
    """Mean over letters of ``hidden[layer]`` for each layer, concatenated (float32).

    ``hidden`` is the (depth + 1, n_letters, d_model) stack of ``doc._.stoicheia``."""
    hidden = np.asarray(hidden, dtype=np.float32)
    if hidden.ndim != 3 or hidden.shape[1] == 0:
        raise ConfigError(f"cannot pool hidden states of shape {hidden.shape}: the document has no letters")
    if max(layers) >= hidden.shape[0] or min(layers) < -hidden.shape[0]:
        raise ConfigError(f"layers {layers} do not fit a backbone with {hidden.shape[0]} hidden states")
    return np.concatenate([hidden[layer].mean(axis=0) for layer in layers]).astype(np.float32)


def doc_vector(doc: Any, component: str, layers: tuple[int, ...] = DEFAULT_LAYERS, *,
               max_chars: int | None = None, required: bool = True) -> np.ndarray | None:
    """Pooled states of ``doc._.stoicheia`` for ``component``, over the letters of the first
    ``max_chars`` characters of the text (None: every letter). None: no letters there, or
    (``required=False``) no states to read (no encoder before it, ``store_hidden = false``)."""
    data = getattr(doc._, "stoicheia", None)  # None also where no encoder registered the extension
    need = layers_need(tuple(layers), max_chars)
    if data is not None and data.hidden is None and data.states:  # the layers the encoder's forward kept
        wanted = prefix_letters(data.planes.offsets, max_chars)
        family = need.key.rsplit("/", 1)[0] + "/"  # the same layers of a letter span at least as long
        for key, kept in data.states.items():
            if key.startswith(family) and kept.shape[1] >= wanted:
                kept = np.asarray(kept)[:, :wanted]
                return pool_states(kept, tuple(range(len(layers)))) if wanted else None
        missing([data], need.key)
    if data is None or data.hidden is None:
        if not required:
            return None
        raise ConfigError(f"{component} needs a 'stoicheia_encoder' pipe before it with store_hidden = true")
    hidden = np.asarray(data.hidden)
    if max_chars is not None:  # the letters before the first one at or past max_chars
        beyond = np.flatnonzero(np.asarray(data.planes.offsets) >= max_chars)
        hidden = hidden[:, : int(beyond[0]) if len(beyond) else hidden.shape[1]]
    return pool_states(hidden, tuple(layers)) if hidden.shape[1] else None


def layers_need(layers: tuple[int, ...], max_chars: int | None = None) -> StateNeed:
    """What :func:`doc_vector` reads of the encoder's stack (:mod:`stoicheia_spacy.encoder.states`):
    the ``layers`` of the letters before character ``max_chars``, ``(len(layers), k, d)``."""
    index = list(layers)

    def letters(stack: np.ndarray) -> np.ndarray:
        return stack[index]

    key = f"{state_key('layers', np.asarray(index, dtype=np.int64))}/{max_chars}"
    return StateNeed(key, letters, max_chars=max_chars)


def as_features(x: np.ndarray, n_in: int, what: str) -> np.ndarray:
    """``x`` as float32 rows of ``n_in`` pooled features, or a ConfigError naming ``what``."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    if x.shape[1] != n_in:
        raise ConfigError(f"the {what} model expects {n_in} pooled features, got {x.shape[1]}")
    return x


def residual_estimate(estimate: float, residuals: np.ndarray, level: float = 0.9,
                      estimator: str = "ridge mean") -> DateEstimate:
    """The distribution ``estimate + residuals``: its ``level`` interval (residual quantiles)
    and its histogram over :data:`BIN_YEARS`-year bins; ``mean`` is ``estimate`` (named ``estimator``)."""
    sample = estimate + np.asarray(residuals, dtype=np.float64)
    tail = (1.0 - level) / 2
    low, high = np.quantile(sample, [tail, 1.0 - tail])
    bins = np.floor(sample / BIN_YEARS).astype(int) * BIN_YEARS
    starts, counts = np.unique(bins, return_counts=True)
    histogram = tuple((int(s), float(c) / len(sample)) for s, c in zip(starts, counts, strict=True))
    return DateEstimate(estimate, float(low), float(high), level, histogram, estimator)


@dataclass
class DateModel:
    """Ridge weights over standardised pooled states + out-of-fold residuals (years)."""

    coef: np.ndarray
    intercept: float
    center: np.ndarray
    scale: np.ndarray
    residuals: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, alpha: float, residuals: np.ndarray) -> DateModel:
        """Closed-form ridge on standardised ``x``; ``residuals`` come from cross-validation."""
        center = x.mean(axis=0)
        scale = x.std(axis=0) + 1e-6
        z = (x - center) / scale
        mean_y = float(y.mean())
        coef = np.linalg.solve(z.T @ z + alpha * np.eye(z.shape[1]), z.T @ (y - mean_y))
        return cls(coef.astype(np.float32), mean_y, center.astype(np.float32), scale.astype(np.float32),
                   np.sort(np.asarray(residuals, dtype=np.float32)))

    @property
    def n_in(self) -> int:
        return int(self.coef.shape[0])

    def predict_mean(self, x: np.ndarray) -> np.ndarray:
        """Ridge means (years) of the rows of ``x``."""
        x = as_features(x, self.n_in, "dating")
        return ((x - self.center) / self.scale) @ self.coef + self.intercept

    def estimate(self, vector: np.ndarray, level: float = 0.9) -> DateEstimate:
        """The date distribution of one pooled vector."""
        return residual_estimate(float(self.predict_mean(vector)[0]), self.residuals, level)

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, coef=self.coef, intercept=np.float32(self.intercept), center=self.center,
                 scale=self.scale, residuals=self.residuals)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> DateModel:
        with np.load(io.BytesIO(data)) as arrays:
            return cls(arrays["coef"], float(arrays["intercept"]), arrays["center"], arrays["scale"],
                       arrays["residuals"])


__all__ = ["BIN_YEARS", "DEFAULT_LAYERS", "DateEstimate", "DateModel", "pool_states", "residual_estimate"]
