"""Attributing a document (genre, dialect): calibrated linear label models.

Two kinds, each a ridge classifier with a softmax temperature fitted on out-of-fold scores
grouped by author, so that its probabilities are calibrated:

* :class:`TextLabelModel` (the method the ``stoicheia_attributor`` ships): character 1-4-gram
  TF-IDF of the text (sublinear term frequency, L2-normalised rows, as scikit-learn's
  ``TfidfVectorizer(analyzer="char")``), computed here with numpy alone. It beats the pooled
  states on accuracy, macro-F1 and log loss in ``projects/date`` (``metrics/attribute_eval.json``; its
  ECE is 0.01 higher, both calibrated).
* :class:`LabelModel`: linear scores over standardised pooled backbone states
  (:func:`stoicheia_spacy.date.dating.pool_states`), kept for weights fitted that way.

Fitting is done by ``projects/date`` (``scripts/attribute.py``); this module only stores and
applies the result. :func:`label_model_from_bytes` reads either kind.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from .dating import as_features
from .results import LabelEstimate


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


_WHITE_SPACES = re.compile(r"\s\s+")


def char_ngrams(text: str, low: int = 1, high: int = 4) -> Counter[str]:
    """Counts of the ``low``-``high`` character n-grams of ``text`` after scikit-learn's
    ``analyzer="char"`` preprocessing (lowercased, runs of white space one space)."""
    text = _WHITE_SPACES.sub(" ", text.lower())
    counts: Counter[str] = Counter()
    for n in range(low, min(high, len(text)) + 1):
        counts.update(text[i:i + n] for i in range(len(text) - n + 1))
    return counts


def _softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


@dataclass
class TextLabelModel:
    """Softmax over ridge scores of a text's character n-gram TF-IDF (module doc);
    ``temperature`` divides the logits, ``vocabulary`` and ``idf`` are the fitted feature map."""

    labels: list[str]
    vocabulary: list[str]
    idf: np.ndarray  # (n_features,)
    coef: np.ndarray  # (n_labels, n_features)
    intercept: np.ndarray  # (n_labels,)
    temperature: float = 1.0
    ngram_range: tuple[int, int] = (1, 4)
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.vocabulary)
        if self.idf.shape != (n,) or self.coef.shape != (len(self.labels), n) or self.intercept.shape != (len(self.labels),):
            raise ConfigError(f"text label model shapes disagree: {len(self.labels)} labels, {n} n-grams, "
                              f"idf {self.idf.shape}, coef {self.coef.shape}, intercept {self.intercept.shape}")
        if not self.temperature > 0:
            raise ConfigError(f"label model temperature must be positive, got {self.temperature}")
        self._index = {gram: i for i, gram in enumerate(self.vocabulary)}

    def features(self, text: str) -> np.ndarray:
        """The TF-IDF row of ``text`` (float64, L2-normalised; zeros without a known n-gram)."""
        row = np.zeros(len(self.vocabulary))
        for gram, count in char_ngrams(text, *self.ngram_range).items():
            j = self._index.get(gram)
            if j is not None:
                row[j] = (1.0 + math.log(count)) * float(self.idf[j])
        norm = float(np.linalg.norm(row))
        return row / norm if norm > 0 else row

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Calibrated label probabilities (texts x labels)."""
        x = np.stack([self.features(t) for t in texts]) if texts else np.zeros((0, len(self.vocabulary)))
        logits = (x @ self.coef.T.astype(np.float64) + self.intercept) / self.temperature
        return _softmax(logits)

    def estimate(self, text: str) -> LabelEstimate:
        """The label distribution of one text."""
        probs = self.predict_proba([text])[0]
        best = int(np.argmax(probs))
        return LabelEstimate(self.labels[best], float(probs[best]),
                             {label: float(p) for label, p in zip(self.labels, probs, strict=True)})

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, kind=np.array("text"), labels=np.array(self.labels, dtype=str),
                            vocabulary=np.array(self.vocabulary, dtype=str), idf=self.idf.astype(np.float32),
                            coef=self.coef.astype(np.float16), intercept=self.intercept.astype(np.float32),
                            temperature=np.float32(self.temperature), ngram_range=np.array(self.ngram_range))
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> TextLabelModel:
        with np.load(io.BytesIO(data)) as arrays:
            low, high = (int(v) for v in arrays["ngram_range"])
            return cls([str(v) for v in arrays["labels"]], [str(v) for v in arrays["vocabulary"]],
                       arrays["idf"].astype(np.float64), arrays["coef"].astype(np.float32),
                       arrays["intercept"].astype(np.float64), float(arrays["temperature"]), (low, high))


def label_model_from_bytes(data: bytes) -> LabelModel | TextLabelModel:
    """A :class:`TextLabelModel` or a :class:`LabelModel`, whichever ``data`` holds."""
    with np.load(io.BytesIO(data)) as arrays:
        is_text = "vocabulary" in arrays.files
    return TextLabelModel.from_bytes(data) if is_text else LabelModel.from_bytes(data)


__all__ = ["LabelEstimate", "LabelModel", "TextLabelModel", "char_ngrams", "label_model_from_bytes"]
