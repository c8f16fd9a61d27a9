"""Fit a :class:`stoicheia_spacy.date.text.TextDateModel` on dated texts, every choice inside the data given.

The vocabulary and idf come from ``texts``; the ridge prior's strength is chosen by efficient
leave-one-out (``RidgeCV``), and its out-of-sample estimates for the kernel's tuning come from
5-fold cross-validation; the kernel's ``tau``, ``k`` and ``lam`` are the grid point with the
least leave-one-out MAE over ``texts`` (each text dated from the others), and the residuals
(the interval and histogram) are those leave-one-out errors at that point. The ridge alone (``k = 0``,
scored by its 5-fold out-of-fold MAE) competes with the kernel, so the model family is chosen
inside the data given too.

Given the pooled backbone states of the texts (the shared forward's, ``embed.py``), the prior
has three candidates, each scored by the same leave-one-out: the word ridge, a ridge over the
standardised states, and the two stacked (a linear regression on their 5-fold out-of-fold
estimates; its own estimates for the tuning are 5-fold out-of-fold too); and the similarity
may add ``beta`` x the states' cosine similarity (``BETAS``; 0: words alone). The prior, ``beta``
and the kernel settings are chosen together. Called once per
training part by ``evaluate.py`` and on all of PaDoC by ``train.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
from sklearn.linear_model import LinearRegression, RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from stoicheia_spacy.date.dating import DateModel
from stoicheia_spacy.date.text import (
    TextDateModel,
    fit_vocabulary,
    kernel_dates,
    unit_states,
    vectorize,
)

ALPHAS = np.logspace(-4, 4, 17)
TAUS = (0.02, 0.05, 0.1, 0.2, 0.4)
KS = (5, 10, 20, 40)
LAMS = (50.0, 100.0, 200.0, 400.0, 800.0, 1600.0, float("inf"))
STATE_ALPHAS = np.logspace(-2, 5, 15)
BETAS = (0.0, 0.05, 0.1, 0.2)


def state_ridge(states: np.ndarray, y: np.ndarray) -> tuple[DateModel, float]:
    """Ridge over standardised pooled states, its strength chosen by efficient leave-one-out."""
    alpha = float(make_pipeline(StandardScaler(), RidgeCV(alphas=STATE_ALPHAS)).fit(states, y)[-1].alpha_)
    return DateModel.fit(states, y, alpha, np.zeros(0)), alpha


def fit_text_model(texts: list[str], y: np.ndarray, states: np.ndarray | None = None) -> tuple[TextDateModel, dict]:
    """The fitted model and what was chosen (``prior``, ``beta``, ``alpha``, ``tau``, ``k``, ``lam``,
    the leave-one-out MAE); ``states``: pooled backbone states of ``texts`` (rows), if offered."""
    vocab, idf = fit_vocabulary(texts)
    x = vectorize(texts, vocab, idf)
    ridge = RidgeCV(alphas=ALPHAS).fit(x, y)
    cv = KFold(5, shuffle=True, random_state=0)
    word_oof = cross_val_predict(RidgeCV(alphas=ALPHAS), x, y, cv=cv)
    priors = {"words": word_oof}
    word_similarity = (x @ x.T).toarray()
    state_similarity = np.zeros_like(word_similarity)
    state_model, state_alpha, stacker = None, None, None
    if states is not None:
        state_oof = cross_val_predict(make_pipeline(StandardScaler(), RidgeCV(alphas=STATE_ALPHAS)), states, y, cv=cv)
        both = np.column_stack([word_oof, state_oof])
        priors["states"] = state_oof
        priors["stacked"] = cross_val_predict(LinearRegression(), both, y, cv=cv)
        stacker = LinearRegression().fit(both, y)
        state_model, state_alpha = state_ridge(states, y)
        unit = unit_states(states, state_model)
        state_similarity = unit @ unit.T
    betas = BETAS if states is not None else (0.0,)
    scores: dict[tuple, float] = {}
    for name, prior in priors.items():
        scores[(name, 0.0, 1.0, 0, float("inf"))] = float(np.mean(np.abs(prior - y)))  # the prior alone (5-fold)
        for beta in betas:
            similarity = word_similarity + beta * state_similarity
            np.fill_diagonal(similarity, -np.inf)  # leave one out
            for tau, k, lam in itertools.product(TAUS, KS, LAMS):
                scores[(name, beta, tau, k, lam)] = float(np.mean(np.abs(
                    kernel_dates(similarity, y, prior, tau, k, lam) - y)))
    best = min(scores, key=scores.__getitem__)
    name, beta, tau, k, lam = best
    similarity = word_similarity + beta * state_similarity
    np.fill_diagonal(similarity, -np.inf)
    residuals = y - kernel_dates(similarity, y, priors[name], tau, k, lam)
    model = TextDateModel(vocab, idf, x, np.asarray(y, dtype=np.float64), ridge.coef_.astype(np.float32),
                          float(ridge.intercept_), tau, k, lam, residuals)
    if states is not None and (name != "words" or beta > 0):
        assert stacker is not None and state_model is not None
        model.state_model, model.beta = state_model, float(beta)
        model.blend = {"words": (1.0, 0.0, 0.0), "states": (0.0, 1.0, 0.0),
                       "stacked": (float(stacker.coef_[0]), float(stacker.coef_[1]), float(stacker.intercept_))}[name]
        if beta > 0:
            model.train_states = unit_states(states, state_model)
    best_per_prior = {p: min(v for key, v in scores.items() if key[0] == p) for p in priors}
    return model, {"prior": name, "beta": float(beta), "alpha": float(ridge.alpha_), "state_alpha": state_alpha,
                   "tau": tau, "k": k, "lam": lam, "loo_mae": scores[best], "loo_mae_per_prior": best_per_prior,
                   "n_features": len(vocab)}
