"""Dating a document from its words: a similarity-weighted median of dated neighbours.

The text is folded to Greek word keys (:func:`stoicheia_spacy.textnorm.word_keys`:
case, diacritics and sigma forms folded, numerals, sigla and Latin dropped) and turned into
binary word 1-3-gram TF-IDF rows (smoothed idf, unit length). :class:`TextDateModel` keeps the
rows and years of its dated training documents: the date of a new text is the weighted median
year of its ``k`` most similar (cosine) documents, weighted by
``exp((s - s_max) / tau) * exp(-|year - prior| / lam)``, where ``prior`` is a ridge regression
over the same features (``k = 0``: the ridge alone). A model may also read the pooled backbone
states of the shared forward (:func:`~stoicheia_spacy.date.dating.pool_states`): ``state_model``, a
ridge over them, enters the prior as ``blend = (w_words, w_states, offset)`` (prior = w_words x
word ridge + w_states x state ridge + offset), and ``beta`` adds their cosine similarity
(standardised states) to the word similarity. Without states (a pipeline without the encoder)
such a model falls back to the word ridge prior and the word similarity alone. The formulae that date a papyrus (regnal and consular dating,
indictions, titles such as Αὐρήλιος or Φλάουιος) are word n-grams, so the nearest dated
documents share them. Fitting (vocabulary, ridge, the choice of ``tau``, ``k`` and ``lam``,
the residuals) is done by ``projects/date``; this module builds the features and applies the result.

A fit may carry a :class:`Register`: a logistic regression over word n-grams telling documentary
papyri from literary texts, with its probability threshold and the fewest Greek words a text
needs (both fitted on held-out texts, ``projects/date/scripts/applicability.py``). A text it
refuses gets a :class:`~stoicheia_spacy.date.results.DateEstimate` with ``applicable = False``, its
reason, and the interval widened to the span of the dated training papyri.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

import numpy as np
from scipy import sparse

from ..textnorm import word_keys
from .dating import DateEstimate, DateModel, as_features, residual_estimate

#: Longest word n-gram.
MAX_N = 3


def date_ngrams(text: str, max_n: int = MAX_N) -> list[str]:
    """Word 1..``max_n``-grams of the folded Greek words of ``text``."""
    keys = word_keys(text)
    return [" ".join(keys[i:i + n]) for n in range(1, max_n + 1) for i in range(len(keys) - n + 1)]


def fit_vocabulary(texts: Iterable[str], min_df: int = 2) -> tuple[list[str], np.ndarray]:
    """N-grams (:func:`date_ngrams`) in at least ``min_df`` of ``texts`` (sorted) and their
    smoothed idf, ``ln((1 + n) / (1 + df)) + 1``."""
    df: dict[str, int] = {}
    n = 0
    for text in texts:
        n += 1
        for gram in set(date_ngrams(text)):
            df[gram] = df.get(gram, 0) + 1
    vocab = sorted(g for g, c in df.items() if c >= min_df)
    counts = np.array([df[g] for g in vocab], dtype=np.float64)
    return vocab, (np.log((1 + n) / (1 + counts)) + 1).astype(np.float32)


def vectorize(texts: Iterable[str], vocab: Sequence[str] | Mapping[str, int], idf: np.ndarray) -> sparse.csr_matrix:
    """Binary n-gram presence x idf, each row of unit length (an all-zero row stays zero);
    ``vocab``: the n-grams in column order, or their column index."""
    index = vocab if isinstance(vocab, Mapping) else {g: i for i, g in enumerate(vocab)}
    indptr, indices = [0], []
    for text in texts:
        found = sorted({index[g] for g in date_ngrams(text) if g in index})
        indices.extend(found)
        indptr.append(len(indices))
    cols = np.asarray(indices, dtype=np.int32)
    return _unit_rows(sparse.csr_matrix((idf[cols].astype(np.float32), cols, np.asarray(indptr)),
                                        shape=(len(indptr) - 1, len(idf))))


def _unit_rows(x: sparse.csr_matrix) -> sparse.csr_matrix:
    """``x`` with each non-zero row scaled to unit length (float32)."""
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    scale = np.repeat(1.0 / np.where(norms > 0, norms, 1.0), np.diff(x.indptr))  # each entry's row's
    out = sparse.csr_matrix((x.data * scale, x.indices, x.indptr), shape=x.shape, dtype=np.float32)
    out.eliminate_zeros()  # as the product left them out
    return out


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise weighted median (the lower one at a tie) of ``values`` (n, k)."""
    order = np.argsort(values, axis=1)
    v, w = np.take_along_axis(values, order, 1), np.take_along_axis(weights, order, 1)
    cdf = np.cumsum(w, axis=1)
    return v[np.arange(len(v)), np.argmax(cdf >= 0.5 * cdf[:, -1:], axis=1)]


def kernel_dates(similarity: np.ndarray, years: np.ndarray, prior: np.ndarray, tau: float, k: int,
                 lam: float) -> np.ndarray:
    """The weighted median year of each row's ``k`` most similar documents (see the module doc);
    ``k = 0``: the ``prior`` alone."""
    if k == 0:
        return np.asarray(prior, dtype=np.float64)
    k = min(k, similarity.shape[1])
    idx = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
    s = np.take_along_axis(similarity, idx, 1)
    vals = years[idx]
    log_w = (s - s.max(axis=1, keepdims=True)) / tau
    if np.isfinite(lam):
        log_w = log_w - np.abs(vals - prior[:, None]) / lam
    return weighted_median(vals, np.exp(log_w - log_w.max(axis=1, keepdims=True)))


def unit_states(states: np.ndarray, model: DateModel) -> np.ndarray:
    """Pooled states standardised as ``model`` does, each row of unit length."""
    z = (as_features(states, model.n_in, "dating") - model.center) / model.scale
    return (z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)).astype(np.float32)


@dataclass
class Register:
    """Documentary vs literary: ``P(documentary) = sigmoid(x @ coef + intercept)`` over binary
    word n-gram TF-IDF rows (:func:`vectorize`, the register's own ``vocab`` and ``idf``); a text is
    dated when it has at least ``min_words`` Greek words and ``P >= threshold``. ``widen``:
    ``(words, factor)`` pairs, ascending: a text of at least ``words`` (and fewer than the next)
    Greek words gets its residuals, hence its interval, scaled by ``factor``."""

    vocab: list[str]
    idf: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float
    min_words: int
    widen: tuple[tuple[int, float], ...] = ()

    def factor(self, n_words: int) -> float:
        """How much wider the interval of a text of ``n_words`` Greek words is drawn."""
        return next((f for n, f in reversed(self.widen) if n_words >= n), 1.0)

    @cached_property
    def index(self) -> dict[str, int]:
        return {g: i for i, g in enumerate(self.vocab)}

    def documentary(self, texts: Iterable[str]) -> np.ndarray:
        """P(documentary) of each text."""
        z = np.asarray(vectorize(texts, self.index, self.idf) @ self.coef, dtype=np.float64).ravel() + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def refusal(self, text: str) -> tuple[str | None, float]:
        """Why ``text`` is outside the fit (None: it is not) and its P(documentary)."""
        p = float(self.documentary([text])[0])
        return self.refuse(len(word_keys(text)), p), p

    def refuse(self, n: int, p: float) -> str | None:
        """Why a text of ``n`` Greek words and P(documentary) ``p`` is outside the fit (None: it is not)."""
        if n < self.min_words:
            return (f"too short to date ({n} Greek word{'s' if n != 1 else ''}; the dater needs "
                    f"{self.min_words})")
        if p < self.threshold:
            return (f"reads as a literary text, not a documentary papyrus (P documentary {p:.2f}, "
                    f"below {self.threshold:.2f})")
        return None


@dataclass
class TextDateModel:
    """Vocabulary, idf, the training rows and years, the ridge prior, the kernel settings and
    the out-of-sample residuals (years) of a fit; optionally a pooled-state ridge with its
    ``blend`` into the prior and the weight ``beta`` of state similarity (see the module doc)."""

    vocab: list[str]
    idf: np.ndarray
    train: sparse.csr_matrix
    years: np.ndarray
    coef: np.ndarray
    intercept: float
    tau: float
    k: int
    lam: float
    residuals: np.ndarray
    state_model: DateModel | None = None
    blend: tuple[float, float, float] = (1.0, 0.0, 0.0)
    beta: float = 0.0
    train_states: np.ndarray | None = None
    register: Register | None = None

    @property
    def uses_states(self) -> bool:
        """Whether the fit reads pooled backbone states (in its prior or its similarity)."""
        return self.state_model is not None and (self.blend[1] != 0.0 or self.beta > 0.0)

    @cached_property
    def index(self) -> dict[str, int]:
        """Column of each n-gram."""
        return {g: i for i, g in enumerate(self.vocab)}

    def features(self, texts: Iterable[str]) -> sparse.csr_matrix:
        return vectorize(texts, self.index, self.idf)

    def prior(self, x: sparse.csr_matrix, states: np.ndarray | None = None) -> np.ndarray:
        """The prior (years) of the rows of ``x``: the word ridge, blended with the state ridge
        when the model has one and ``states`` are given."""
        words = np.asarray(x @ self.coef, dtype=np.float64).ravel() + self.intercept
        if states is None or not self.uses_states:
            return words
        assert self.state_model is not None
        w_words, w_states, offset = self.blend
        return w_words * words + w_states * self.state_model.predict_mean(states).astype(np.float64) + offset

    def similarity(self, x: sparse.csr_matrix, states: np.ndarray | None = None) -> np.ndarray:
        """Similarity of the rows of ``x`` to the training documents (word cosine, plus ``beta`` x
        state cosine when the model reads states and ``states`` are given)."""
        s = (x @ self.train.T).toarray()
        if states is not None and self.uses_states and self.beta > 0 and self.train_states is not None:
            assert self.state_model is not None
            s = s + self.beta * (unit_states(states, self.state_model) @ self.train_states.T)
        return s

    def predict_mean(self, texts: Iterable[str], states: np.ndarray | None = None) -> np.ndarray:
        """Point estimates (years) of ``texts``; ``states``: their pooled backbone states (rows),
        read only by a model that uses them (without them: the word-only fallback)."""
        x = self.features(texts)
        return kernel_dates(self.similarity(x, states), self.years, self.prior(x, states), self.tau, self.k, self.lam)

    def estimate(self, text: str, level: float = 0.9, states: np.ndarray | None = None) -> DateEstimate | None:
        """The date distribution of ``text`` (None: no Greek word to read); ``states``: its
        pooled backbone states, if any."""
        return self.estimate_many([text], level, [states])[0]

    def estimate_many(self, texts: Sequence[str], level: float = 0.9,
                      states: Sequence[np.ndarray | None] | None = None) -> list[DateEstimate | None]:
        """:meth:`estimate` of each of ``texts`` (with its ``states``, if any), the n-gram rows,
        similarities and register of all of them in one matrix product each (every row is
        computed on its own: the same estimates as one text at a time)."""
        given = list(states) if states is not None else [None] * len(texts)
        keys = [word_keys(t) for t in texts]
        points = np.zeros(len(texts))
        readable = [i for i, k in enumerate(keys) if k]
        for with_states in (False, True):  # texts with pooled states and those without, apart
            group = [i for i in readable if (given[i] is not None) == with_states]
            if group:
                rows = np.concatenate([np.atleast_2d(cast(np.ndarray, given[i])) for i in group]) if with_states else None
                points[group] = self.predict_mean([texts[i] for i in group], rows)
        documentary: list[float | None] = [None] * len(readable)
        if self.register is not None and readable:
            documentary = self.register.documentary([texts[i] for i in readable]).tolist()
        out: list[DateEstimate | None] = [None] * len(texts)
        for i, p in zip(readable, documentary, strict=True):
            out[i] = self._estimate(float(points[i]), level, len(keys[i]), p)
        return out

    def _estimate(self, point: float, level: float, n_words: int, p: float | None) -> DateEstimate:
        """The distribution around ``point`` of a text of ``n_words`` Greek words whose
        P(documentary) is ``p`` (None: the model has no register)."""
        estimator = "weighted median" if self.k > 0 else "ridge mean"
        estimate = residual_estimate(point, self.residuals, level, estimator)
        if self.register is None or p is None:
            return estimate
        reason = self.register.refuse(n_words, p)
        if reason is None:
            factor = self.register.factor(n_words)
            if factor > 1.0:
                estimate = residual_estimate(point, self.residuals * factor, level, estimator)
            return dataclasses.replace(estimate, documentary=p, widened=factor)
        wide = residual_estimate(float(np.median(self.years)), self.years - np.median(self.years), 1.0, estimator)
        return dataclasses.replace(estimate, low=float(self.years.min()), high=float(self.years.max()),
                                   histogram=wide.histogram, applicable=False, reason=reason, documentary=p)

    def to_bytes(self) -> bytes:
        """A compressed npz: the vocabulary as one UTF-8 text, the training rows as their columns
        (their values follow from ``idf``)."""
        buffer = io.BytesIO()
        extra: dict[str, Any] = {}
        if self.uses_states:
            assert self.state_model is not None
            extra = {"state_coef": self.state_model.coef, "state_intercept": np.float32(self.state_model.intercept),
                     "state_center": self.state_model.center, "state_scale": self.state_model.scale,
                     "blend": np.array(self.blend, dtype=np.float64), "beta": np.float64(self.beta)}
            if self.beta > 0 and self.train_states is not None:
                extra["train_states"] = self.train_states.astype(np.float16)
        if self.register is not None:
            r = self.register
            extra.update(register_vocab=np.frombuffer("\n".join(r.vocab).encode("utf-8"), dtype=np.uint8),
                         register_idf=r.idf.astype(np.float32), register_coef=r.coef.astype(np.float32),
                         register_settings=np.array([r.intercept, r.threshold, r.min_words], dtype=np.float64),
                         register_widen=np.array(r.widen, dtype=np.float64).reshape(-1, 2))
        np.savez_compressed(
            buffer, kind=np.array("text"), **extra, vocab=np.frombuffer("\n".join(self.vocab).encode("utf-8"), dtype=np.uint8),
            idf=self.idf.astype(np.float32), indices=self.train.indices.astype(np.uint32),
            indptr=self.train.indptr.astype(np.uint32), years=self.years.astype(np.float32),
            coef=self.coef.astype(np.float32), intercept=np.float32(self.intercept),
            settings=np.array([self.tau, self.k, self.lam], dtype=np.float64),
            residuals=np.sort(self.residuals.astype(np.float32)))
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> TextDateModel:
        with np.load(io.BytesIO(data)) as a:
            vocab = a["vocab"].tobytes().decode("utf-8").split("\n")
            idf = a["idf"]
            indices, indptr = a["indices"].astype(np.int32), a["indptr"].astype(np.int64)
            train = sparse.csr_matrix((idf[indices], indices, indptr), shape=(len(indptr) - 1, len(vocab)))
            train = _unit_rows(train)
            tau, k, lam = a["settings"].tolist()
            model = cls(vocab, idf, train, a["years"].astype(np.float64), a["coef"], float(a["intercept"]),
                        float(tau), int(k), float(lam), a["residuals"])
            if "state_coef" in a.files:
                model.state_model = DateModel(a["state_coef"], float(a["state_intercept"]), a["state_center"],
                                              a["state_scale"], np.zeros(0, dtype=np.float32))
                blend = a["blend"].tolist()
                model.blend = (float(blend[0]), float(blend[1]), float(blend[2]))
                model.beta = float(a["beta"])
                if "train_states" in a.files:
                    model.train_states = a["train_states"].astype(np.float32)
            if "register_coef" in a.files:
                intercept, threshold, min_words = a["register_settings"].tolist()
                model.register = Register(a["register_vocab"].tobytes().decode("utf-8").split("\n"),
                                          a["register_idf"], a["register_coef"], float(intercept), float(threshold),
                                          int(min_words), tuple((int(n), float(f)) for n, f in a["register_widen"]))
            return model


def load_date_model(data: bytes) -> DateModel | TextDateModel:
    """A :class:`TextDateModel` or a pooled-state :class:`~stoicheia_spacy.date.dating.DateModel` from its bytes."""
    with np.load(io.BytesIO(data)) as arrays:
        kind = str(arrays["kind"]) if "kind" in arrays.files else "states"
    return TextDateModel.from_bytes(data) if kind == "text" else DateModel.from_bytes(data)


__all__ = ["Register", "TextDateModel", "load_date_model", "date_ngrams", "fit_vocabulary", "kernel_dates", "unit_states", "vectorize",
           "weighted_median"]
