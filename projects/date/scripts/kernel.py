"""Fit a :class:`stoicheia_spacy.dating_text.TextDateModel` on dated texts, every choice inside the data given.

The vocabulary and idf come from ``texts``; the ridge prior's strength is chosen by efficient
leave-one-out (``RidgeCV``), and its out-of-sample estimates for the kernel's tuning come from
5-fold cross-validation; the kernel's ``tau``, ``k`` and ``lam`` are the grid point with the
least leave-one-out MAE over ``texts`` (each text dated from the others), and the residuals
(the interval and histogram) are those leave-one-out errors at that point. The ridge alone (``k = 0``,
scored by its 5-fold out-of-fold MAE) competes with the kernel, so the model family is chosen
inside the data given too. Called once per
training part by ``evaluate.py`` and on all of PaDoC by ``train.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import KFold, cross_val_predict

from stoicheia_spacy.dating_text import TextDateModel, fit_vocabulary, kernel_dates, vectorize

ALPHAS = np.logspace(-4, 4, 17)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.4)
KS = (5, 10, 20, 40)
LAMS = (50.0, 100.0, 200.0, 400.0, 800.0, 1600.0, float("inf"))


def fit_text_model(texts: list[str], y: np.ndarray) -> tuple[TextDateModel, dict]:
    """The fitted model and what was chosen (``alpha``, ``tau``, ``k``, ``lam``, the leave-one-out MAE)."""
    vocab, idf = fit_vocabulary(texts)
    x = vectorize(texts, vocab, idf)
    ridge = RidgeCV(alphas=ALPHAS).fit(x, y)
    prior = cross_val_predict(RidgeCV(alphas=ALPHAS), x, y, cv=KFold(5, shuffle=True, random_state=0))
    similarity = (x @ x.T).toarray()
    np.fill_diagonal(similarity, -np.inf)  # leave one out
    scores = {(tau, k, lam): float(np.mean(np.abs(kernel_dates(similarity, y, prior, tau, k, lam) - y)))
              for tau, k, lam in itertools.product(TAUS, KS, LAMS)}
    scores[(1.0, 0, float("inf"))] = float(np.mean(np.abs(prior - y)))  # the ridge alone (5-fold)
    tau, k, lam = min(scores, key=scores.__getitem__)
    residuals = y - kernel_dates(similarity, y, prior, tau, k, lam)
    model = TextDateModel(vocab, idf, x, np.asarray(y, dtype=np.float64), ridge.coef_.astype(np.float32),
                          float(ridge.intercept_), tau, k, lam, residuals)
    return model, {"alpha": float(ridge.alpha_), "tau": tau, "k": k, "lam": lam,
                   "loo_mae": scores[(tau, k, lam)], "n_features": len(vocab)}
