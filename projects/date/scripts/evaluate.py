"""PaDoC dating: repeated K-fold cross-validation grouped by TM number, one arm per run.

* ``tfidf``: character 1-4-gram TF-IDF of the edited text + ridge (scikit-learn).
* ``pretrained`` / ``random-init``: ridge over mean-pooled backbone states (``embed.py``
  caches), the layers the ``stoicheia_dater`` pools (:data:`stoicheia_spacy.date.dating.DEFAULT_LAYERS`);
  ``random-init`` is a backbone of the same shape with random weights.
* ``stacked``: the ``tfidf`` and ``pretrained`` ridges combined by a linear regression on their
  5-fold out-of-fold predictions, all inside the training part (its interval comes from the
  residuals of those stacked out-of-fold predictions).

* ``kernel-states`` / ``kernel-random``: the word n-gram kernel offered the pooled states of
  the shipped / random-init backbone too (``kernel.fit_text_model``: state-ridge and stacked
  priors, state similarity), its leave-one-out inside each training part choosing among them.

Every fold chooses the ridge strength by efficient leave-one-out on its training part
(``RidgeCV``) and takes the 90 % interval from the 5th/95th percentiles of 5-fold
out-of-fold residuals of that training part, so no test papyrus informs its own interval.
Reported per arm: MAE and median absolute error in years, 90 % interval coverage and
width (mean over repeats, with the spread over repeats). The in-the-wild papyri are dated
by each arm fitted on all of PaDoC and scored only against their upper date limit
(``Date_notAfter``): the share of estimates (and of interval low ends) not after it.
Each arm also keeps its per-document absolute errors (mean over repeats, PaDoC row order) for
the paired tests of ``report.py``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from kernel import fit_text_model
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LinearRegression, RidgeCV
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from stoicheia_spacy.date.dating import DEFAULT_LAYERS

ALPHAS = np.logspace(-2, 5, 15)
LEVEL = 0.9
GREEK = "[\u0370-\u03ff\u1f00-\u1fff]"
PUBLISHED_MAE = 54.0  # Pavlopoulos et al. (ACL 2023), leave-one-out over PaDoC


def years(frame: pd.DataFrame) -> np.ndarray:
    """PaDoC dates are in centuries (quarter steps): years = 100 x date."""
    return frame["date"].to_numpy(dtype=float) * 100.0


def upper_limit(value: object) -> float:
    """Year of ``Date_notAfter`` ('0153-01-31', '-0044', '0212')."""
    text = str(value).strip()
    sign = -1 if text.startswith("-") else 1
    return sign * float(text.lstrip("-").split("-")[0])


class StackedRegressor(RegressorMixin, BaseEstimator):
    """TF-IDF ridge + pooled-state ridge, combined on their out-of-fold predictions.

    ``x`` is a list of ``(text, pooled vector)`` pairs."""

    def fit(self, x: list, y: np.ndarray) -> StackedRegressor:
        texts, pooled = [t for t, _ in x], np.stack([v for _, v in x])
        cv = KFold(5, shuffle=True, random_state=0)
        oof = np.column_stack([cross_val_predict(make_model("tfidf"), texts, y, cv=cv),
                               cross_val_predict(make_model("pretrained"), pooled, y, cv=cv)])
        self.combiner_ = LinearRegression().fit(oof, y)
        self.residuals_ = y - self.combiner_.predict(oof)
        self.tfidf_ = make_model("tfidf").fit(texts, y)
        self.states_ = make_model("pretrained").fit(pooled, y)
        return self

    def predict(self, x: list) -> np.ndarray:
        texts, pooled = [t for t, _ in x], np.stack([v for _, v in x])
        return self.combiner_.predict(np.column_stack([self.tfidf_.predict(texts), self.states_.predict(pooled)]))


class TextKernelRegressor(RegressorMixin, BaseEstimator):
    """Weighted median of similar dated texts (word 1-3-gram TF-IDF), tuned inside its training
    data (``kernel.fit_text_model``); ``x`` is a list of texts, or of ``(text, pooled vector)``
    pairs (the states offered too)."""

    def fit(self, x: list, y: np.ndarray) -> TextKernelRegressor:
        texts, states = split_pairs(x)
        self.model_, self.chosen_ = fit_text_model(texts, np.asarray(y, dtype=float), states)
        self.residuals_ = self.model_.residuals
        return self

    def predict(self, x: list) -> np.ndarray:
        return self.model_.predict_mean(*split_pairs(x))


def split_pairs(x: list) -> tuple[list[str], np.ndarray | None]:
    """Texts and pooled vectors of ``(text, vector)`` pairs (a list of texts: no vectors)."""
    if x and isinstance(x[0], tuple):
        return [t for t, _ in x], np.stack([v for _, v in x])
    return list(x), None


def make_model(arm: str) -> Pipeline | StackedRegressor | TextKernelRegressor:
    if arm == "stacked":
        return StackedRegressor()
    if arm in ("text-kernel", "kernel-states", "kernel-random"):
        return TextKernelRegressor()
    if arm == "tfidf":
        return make_pipeline(TfidfVectorizer(analyzer="char", ngram_range=(1, 4), sublinear_tf=True,
                                             lowercase=True, min_df=2), RidgeCV(alphas=ALPHAS))
    return make_pipeline(StandardScaler(), RidgeCV(alphas=ALPHAS))


def features(arm: str, frame: pd.DataFrame, cache: Path | None) -> object:
    if arm in ("tfidf", "text-kernel"):
        return frame["text_raw"].fillna("").astype(str).tolist()
    assert cache is not None
    if arm in ("stacked", "kernel-states", "kernel-random"):
        texts = features("tfidf", frame, None)
        return list(zip(texts, features("pretrained", frame, cache), strict=True))  # type: ignore[call-overload]
    with np.load(cache) as data:
        pooled = data["layers"][:, list(DEFAULT_LAYERS)].reshape(len(data["ids"]), -1)
        by_id = dict(zip(data["ids"].tolist(), pooled, strict=True))
    id_column = "tm" if "tm" in frame else "TM_Number"
    return np.stack([by_id[int(i)] for i in frame[id_column]])


def take(x: object, index: np.ndarray) -> object:
    return [x[i] for i in index] if isinstance(x, list) else x[index]  # type: ignore[index]


def fold_interval(arm: str, x: object, y: np.ndarray, seed: int, fitted: object = None) -> tuple[float, float]:
    """5th / 95th percentile of 5-fold out-of-fold residuals (y - prediction) on ``x``
    (the stacked arm: those its ``fitted`` model kept)."""
    if isinstance(fitted, StackedRegressor | TextKernelRegressor):
        residuals = fitted.residuals_
    else:
        residuals = y - cross_val_predict(make_model(arm), x, y, cv=KFold(5, shuffle=True, random_state=seed))
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(residuals, [tail, 1 - tail])
    return float(low), float(high)


def cross_validate(arm: str, x: object, y: np.ndarray, groups: np.ndarray, folds: int, repeats: int) -> dict:
    per_repeat, errors, chosen = [], [], []
    for repeat in range(repeats):
        unique = np.unique(groups)
        order = np.random.default_rng(repeat).permutation(len(unique))
        fold_of_group = {g: k % folds for k, g in enumerate(unique[order])}
        fold = np.array([fold_of_group[g] for g in groups])
        pred, low, high = np.zeros_like(y), np.zeros_like(y), np.zeros_like(y)
        for k in range(folds):
            test, train = np.where(fold == k)[0], np.where(fold != k)[0]
            model = make_model(arm).fit(take(x, train), y[train])
            pred[test] = model.predict(take(x, test))
            if hasattr(model, "chosen_"):
                chosen.append(model.chosen_)
            r_low, r_high = fold_interval(arm, take(x, train), y[train], seed=repeat, fitted=model)
            low[test], high[test] = pred[test] + r_low, pred[test] + r_high
        err = np.abs(pred - y)
        errors.append(err)
        per_repeat.append({"mae": float(err.mean()), "median_ae": float(np.median(err)),
                           "coverage": float(np.mean((y >= low) & (y <= high))),
                           "width": float(np.mean(high - low))})
        print(arm, repeat, per_repeat[-1], flush=True)
    summary: dict = {key: float(np.mean([r[key] for r in per_repeat])) for key in per_repeat[0]}
    summary["mae_sd_over_repeats"] = float(np.std([r["mae"] for r in per_repeat]))
    summary["repeats"] = per_repeat
    summary["per_document_abs_error"] = [round(float(e), 2) for e in np.mean(errors, axis=0)]
    if chosen:
        summary["chosen_per_fold"] = chosen
    return summary


def in_the_wild(arm: str, x: object, y: np.ndarray, wild_x: object, limits: np.ndarray) -> dict:
    if isinstance(wild_x, np.ndarray):  # a papyrus whose letters the codec did not read: left out
        keep = np.isfinite(wild_x).all(axis=1)
        wild_x, limits = wild_x[keep], limits[keep]
    elif arm in ("stacked", "kernel-states", "kernel-random"):
        keep = np.array([np.isfinite(v).all() for _, v in wild_x])  # type: ignore[attr-defined]
        wild_x, limits = take(wild_x, np.where(keep)[0]), limits[keep]
    model = make_model(arm).fit(x, y)
    pred = model.predict(wild_x)
    r_low, _ = fold_interval(arm, x, y, seed=0, fitted=model)
    return {"n": int(len(limits)), "estimate_not_after_limit": float(np.mean(pred <= limits)),
            "interval_low_not_after_limit": float(np.mean(pred + r_low <= limits)),
            "mean_years_before_limit": float(np.mean(limits - pred))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("padoc", type=Path)
    parser.add_argument("wild", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--pretrained", type=Path)
    parser.add_argument("--random-init", type=Path)
    parser.add_argument("--pretrained-wild", type=Path, help="Cached states of the in-the-wild papyri")
    parser.add_argument("--random-init-wild", type=Path, help="Without it the random-init arm skips the wild set")
    parser.add_argument("--arms", default="tfidf,pretrained,random-init,stacked")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    frame = pd.read_csv(args.padoc)
    wild = pd.read_csv(args.wild)
    wild = wild[wild["text_raw"].fillna("").str.contains(GREEK)].reset_index(drop=True)  # letters to read
    caches = {"pretrained": (args.pretrained, args.pretrained_wild),
              "random-init": (args.random_init, args.random_init_wild), "tfidf": (None, None),
              "stacked": (args.pretrained, args.pretrained_wild), "text-kernel": (None, None),
              "kernel-states": (args.pretrained, args.pretrained_wild),
              "kernel-random": (args.random_init, args.random_init_wild)}
    y, groups = years(frame), frame["tm"].to_numpy()
    limits = np.array([upper_limit(v) for v in wild["Date_notAfter"]])
    arms = {}
    for arm in args.arms.split(","):
        x = features(arm, frame, caches[arm][0])
        arms[arm] = cross_validate(arm, x, y, groups, args.folds, args.repeats)
        if arm in ("tfidf", "text-kernel") or caches[arm][1] is not None:
            arms[arm]["in_the_wild"] = in_the_wild(arm, x, y, features(arm, wild, caches[arm][1]), limits)
    metrics = {"command": "spacy project run date-eval", "n_documents": int(len(frame)),
               "protocol": f"{args.repeats}x repeated {args.folds}-fold CV grouped by TM number",
               "level": LEVEL, "layers": list(DEFAULT_LAYERS), "arms": arms,
               "published": {"padoc_text_regression_mae": PUBLISHED_MAE,
                             "protocol": "leave-one-out (Pavlopoulos et al., ACL 2023)"}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
