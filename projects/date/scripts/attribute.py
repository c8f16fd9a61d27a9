"""GLAUx attribution and literary dating: repeated 5-fold CV grouped by author, three arms.

Passages and pooled states come from ``glaux_embed.py``. Tasks: ``genre`` (labels held by at
least ``--min-authors`` authors among the passages; other passages sit out this task),
``dialect`` (labels of at least 3 authors) and ``date`` (the mid-point of GLAUx's date range, years).
Arms, each fitted on the training part of every fold only:

* ``majority``: the most frequent training label (dating: the training mean);
* ``tfidf``: character 1-4-gram TF-IDF + a ridge classifier with a temperature-scaled softmax over
  its scores (dating: ridge regression);
* ``shipped``: the ``tfidf`` arm with the vocabulary cut to the ``--max-features`` most frequent
  n-grams, as the ``stoicheia_attributor`` ships it (a small folder);
* ``pretrained``: standardised pooled states (the layers of the backbone) + the same.

Folds: ``StratifiedGroupKFold`` on the task's labels (dating uses the dialect folds), so no
author is in both training and test. The ridge strength is chosen by leave-one-out on the
training part, the softmax temperature (the calibration the ``stoicheia_attributor`` ships) on
3-fold author-grouped out-of-fold scores of the training part. Reported: accuracy, macro-F1, log loss and expected
calibration error (15 bins of top-label confidence); MAE / median absolute error in years;
Wilcoxon signed-rank tests of per-passage absolute errors between arms (dating).
``--ship`` fits the ``shipped`` arm on all passages and writes the attributor's weights (a
:class:`~stoicheia_spacy.date.attribution.TextLabelModel` per task: it beats the pooled states on
accuracy, macro-F1 and log loss; its ECE is about as low); ``--probe`` records what that fit says of passages of the *Iliad* and the
*Odyssey* (Perseus), which GLAUx does not hold: the reason the attributor is not in the
default pipeline when it calls them lyric.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax
from scipy.stats import wilcoxon
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import RidgeClassifier, RidgeClassifierCV, RidgeCV
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedGroupKFold
from sklearn.preprocessing import StandardScaler

from stoicheia_spacy.date.attribution import TextLabelModel
from stoicheia_spacy.date.attributor import StoicheiaAttributor
from stoicheia_spacy.date.dating import DEFAULT_LAYERS

ALPHAS = np.logspace(-2, 5, 15)
TASK_MIN_AUTHORS = {"dialect": 3}
#: Vocabulary of the shipped TF-IDF model (the most frequent n-grams; see ``shipped``).
MAX_FEATURES = 12000
#: Perseus works probed with the shipped fit: (urn prefix, name).
PROBES = (("urn:cts:greekLit:tlg0012.tlg001", "Iliad"), ("urn:cts:greekLit:tlg0012.tlg002", "Odyssey"))


def load(stem: Path, *, text_only: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    frame = pd.read_json(stem.with_suffix(".jsonl"), lines=True)
    if text_only:
        return frame, np.zeros((len(frame), 1), dtype=np.float32)
    with np.load(stem.with_suffix(".npz")) as data:
        pooled = data["layers"][:, list(DEFAULT_LAYERS)].reshape(len(frame), -1)
    return frame, pooled


def kept_labels(frame: pd.DataFrame, task: str, min_authors: int) -> np.ndarray:
    """Mask of passages whose ``task`` label is held by at least ``min_authors`` authors."""
    authors = frame.groupby(task)["author"].nunique()
    return frame[task].isin(authors[authors >= min_authors].index).to_numpy()


class Features:
    """Fit-on-train feature maps: TF-IDF of the text or standardised pooled states."""

    def __init__(self, arm: str) -> None:
        self.arm = arm
        self.text = arm in ("tfidf", "shipped")
        self.map: TfidfVectorizer | StandardScaler = (
            TfidfVectorizer(analyzer="char", ngram_range=(1, 4), sublinear_tf=True, min_df=2,
                            max_features=MAX_FEATURES if arm == "shipped" else None)
            if self.text else StandardScaler())

    def fit_transform(self, texts: list[str], pooled: np.ndarray) -> object:
        return self.map.fit_transform(texts if self.text else pooled)

    def transform(self, texts: list[str], pooled: np.ndarray) -> object:
        return self.map.transform(texts if self.text else pooled)


def take(values: list[str], index: np.ndarray) -> list[str]:
    return [values[i] for i in index]


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """The softmax temperature minimising the log loss of out-of-fold ``logits``."""
    def nll(log_t: float) -> float:
        return float(-log_softmax(logits / np.exp(log_t), axis=1)[np.arange(len(y)), y].mean())
    return float(np.exp(minimize_scalar(nll, bounds=(-3, 3), method="bounded").x))


def fit_classifier(arm: str, texts: list[str], pooled: np.ndarray, y: np.ndarray, groups: np.ndarray,
                   n_labels: int) -> tuple[Features, RidgeClassifier, float]:
    """Ridge classifier (strength by leave-one-out) and the softmax temperature of its scores,
    fitted on 3-fold author-grouped out-of-fold scores of the same strength."""
    feats = Features(arm)
    model = RidgeClassifierCV(alphas=ALPHAS).fit(feats.fit_transform(texts, pooled), y)
    alpha = float(model.alpha_)
    logits = np.zeros((len(y), n_labels))
    for train, test in StratifiedGroupKFold(3).split(pooled, y, groups):
        inner = Features(arm)
        fitted = RidgeClassifier(alpha=alpha).fit(inner.fit_transform(take(texts, train), pooled[train]), y[train])
        logits[test] = full_logits(fitted, inner.transform(take(texts, test), pooled[test]), n_labels)
    final = RidgeClassifier(alpha=alpha).fit(feats.transform(texts, pooled), y)
    return feats, final, fit_temperature(logits, y)


def _binary_logits(model: RidgeClassifier, x: object) -> np.ndarray:
    score = model.decision_function(x)
    return np.stack([np.zeros_like(score), score], axis=1)


def full_logits(model: RidgeClassifier, x: object, n_labels: int) -> np.ndarray:
    raw = _binary_logits(model, x) if len(model.classes_) == 2 else model.decision_function(x)
    raw = raw.reshape(raw.shape[0], -1)
    out = np.repeat(raw.min(axis=1, keepdims=True), n_labels, axis=1)  # labels unseen in training: the lowest score
    out[:, model.classes_] = raw
    return out


def ece(probs: np.ndarray, y: np.ndarray, bins: int = 15) -> float:
    """Expected calibration error of the top-label confidence."""
    conf, pred = probs.max(axis=1), probs.argmax(axis=1)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = (conf > low) & (conf <= high)
        if inside.any():
            total += inside.mean() * abs(float((pred[inside] == y[inside]).mean()) - float(conf[inside].mean()))
    return total


def classify(frame: pd.DataFrame, pooled: np.ndarray, task: str, repeats: int, fitted_arms: tuple[str, ...]) -> dict:
    labels = sorted(frame[task].unique())
    y = frame[task].map({label: i for i, label in enumerate(labels)}).to_numpy()
    groups, texts = frame["author"].to_numpy(), frame["text"].tolist()
    arms: dict[str, list[dict]] = {arm: [] for arm in ("majority", *fitted_arms)}
    for repeat in range(repeats):
        probs = {arm: np.zeros((len(y), len(labels))) for arm in arms}
        for train, test in StratifiedGroupKFold(5, shuffle=True, random_state=repeat).split(pooled, y, groups):
            counts = np.bincount(y[train], minlength=len(labels))
            probs["majority"][test] = (counts + 1e-3) / (counts + 1e-3).sum()
            for arm in fitted_arms:
                feats, model, temperature = fit_classifier(arm, take(texts, train), pooled[train], y[train],
                                                           groups[train], len(labels))
                logits = full_logits(model, feats.transform(take(texts, test), pooled[test]), len(labels))
                probs[arm][test] = np.exp(log_softmax(logits / temperature, axis=1))
        for arm, p in probs.items():
            pred = p.argmax(axis=1)
            arms[arm].append({"accuracy": float(accuracy_score(y, pred)),
                              "macro_f1": float(f1_score(y, pred, average="macro", labels=range(len(labels)))),
                              "log_loss": float(-np.log(np.clip(p[np.arange(len(y)), y], 1e-12, None)).mean()),
                              "ece": float(ece(p, y))})
            print(task, repeat, arm, arms[arm][-1], flush=True)
    return {"labels": labels, "n_passages": int(len(y)), "n_authors": int(len(set(groups))),
            "label_counts": {label: int((y == i).sum()) for i, label in enumerate(labels)},
            "arms": {arm: summarise(runs) for arm, runs in arms.items()}}


def summarise(runs: list[dict]) -> dict:
    out: dict = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
    out["sd_over_repeats"] = {key: float(np.std([r[key] for r in runs])) for key in runs[0]}
    out["repeats"] = runs
    return out


def date(frame: pd.DataFrame, pooled: np.ndarray, folds_on: np.ndarray, repeats: int) -> dict:
    y, groups, texts = frame["year"].to_numpy(dtype=float), frame["author"].to_numpy(), frame["text"].tolist()
    runs: dict[str, list[dict]] = {"majority": [], "tfidf": [], "pretrained": []}
    errors: dict[str, list[np.ndarray]] = {arm: [] for arm in runs}
    for repeat in range(repeats):
        pred = {arm: np.zeros_like(y) for arm in runs}
        for train, test in StratifiedGroupKFold(5, shuffle=True, random_state=repeat).split(pooled, folds_on, groups):
            pred["majority"][test] = y[train].mean()
            for arm in ("tfidf", "pretrained"):
                feats = Features(arm)
                model = RidgeCV(alphas=ALPHAS).fit(feats.fit_transform(take(texts, train), pooled[train]), y[train])
                pred[arm][test] = model.predict(feats.transform(take(texts, test), pooled[test]))
        for arm, p in pred.items():
            err = np.abs(p - y)
            errors[arm].append(err)
            runs[arm].append({"mae": float(err.mean()), "median_ae": float(np.median(err))})
            print("date", repeat, arm, runs[arm][-1], flush=True)
    mean_err = {arm: np.mean(e, axis=0) for arm, e in errors.items()}
    tests = {f"{a}_vs_{b}": {"wilcoxon_p": float(wilcoxon(mean_err[a], mean_err[b]).pvalue),
                             "mean_difference_years": float(np.mean(mean_err[a] - mean_err[b]))}
             for a, b in (("pretrained", "tfidf"), ("pretrained", "majority"), ("tfidf", "majority"))}
    return {"n_passages": int(len(y)), "arms": {arm: summarise(r) for arm, r in runs.items()},
            "paired_tests": tests}


def ship(frame: pd.DataFrame, pooled: np.ndarray, masks: dict[str, np.ndarray], out: Path) -> tuple[dict, dict]:
    """Fit the ``shipped`` arm of each task on all its passages; write the attributor folder."""
    models, report = {}, {}
    for task, mask in masks.items():
        sub, x = frame[mask], pooled[mask]
        labels = sorted(sub[task].unique())
        y = sub[task].map({label: i for i, label in enumerate(labels)}).to_numpy()
        texts = sub["text"].tolist()
        feats, model, temperature = fit_classifier("shipped", texts, x, y, sub["author"].to_numpy(), len(labels))
        vectorizer = feats.map
        assert isinstance(vectorizer, TfidfVectorizer)
        coef, intercept = model.coef_, model.intercept_
        if len(labels) == 2:
            coef, intercept = np.vstack([np.zeros_like(coef), coef]), np.concatenate([[0.0], intercept])
        vocabulary = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
        text_model = TextLabelModel(labels, vocabulary, vectorizer.idf_.astype(np.float32), coef.astype(np.float32),
                                    intercept.astype(np.float64), temperature)
        # the numpy feature map is scikit-learn's: same probabilities on the training passages
        reference = np.exp(log_softmax(full_logits(model, vectorizer.transform(texts[:50]), len(labels)) / temperature,
                                       axis=1))
        assert np.allclose(text_model.predict_proba(texts[:50]), reference, atol=2e-3), task
        models[task] = text_model
        report[task] = {"method": "char 1-4-gram TF-IDF + ridge, temperature-scaled softmax",
                        "labels": labels, "alpha": float(model.alpha), "temperature": temperature,
                        "n_passages": int(len(y)), "n_features": len(vocabulary)}
    for folder in [out]:
        folder.mkdir(parents=True, exist_ok=True)
        StoicheiaAttributor(layers=DEFAULT_LAYERS, models=models).to_disk(folder)
    return report, models


def probe(models: dict, perseus: Path, chars: int = 400, per_work: int = 10) -> dict:
    """What the shipped fit says of evenly spaced passages of the :data:`PROBES` works."""
    import lzma

    from glaux_embed import passages

    out: dict = {}
    with lzma.open(perseus, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            name = next((n for urn, n in PROBES if record["urn"].startswith(urn)), None)
            if name is None or name in out:
                continue
            body = " ".join(seg["text"] for seg in record["segments"])
            pieces = passages(body, chars, per_work)
            out[name] = {"passages": len(pieces)}
            for task, model in models.items():
                probs = model.predict_proba(pieces)
                mean = probs.mean(axis=0)
                top = [model.labels[i] for i in probs.argmax(axis=1)]
                out[name][task] = {"mean_probabilities": {lab: round(float(p), 4) for lab, p in zip(model.labels, mean, strict=True)},
                                   "top_labels": {lab: top.count(lab) for lab in sorted(set(top))}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cache", type=Path, help="Stem of glaux_embed.py's OUT.jsonl / OUT.npz")
    parser.add_argument("out", type=Path, help="Metrics JSON")
    parser.add_argument("--repeats", type=int, default=3, help="0: only fit and write the --ship weights")
    parser.add_argument("--min-authors", type=int, default=5, help="Genre labels held by fewer authors sit out")
    parser.add_argument("--ship", type=Path, nargs="*", default=[], help="Write the attributor weights here")
    parser.add_argument("--probe", type=Path, help="Perseus jsonl.xz of the mirror: the shipped fit on the Iliad and Odyssey")
    parser.add_argument("--text-only", action="store_true",
                        help="No pooled states (OUT.npz): the majority and TF-IDF arms only")
    args = parser.parse_args()
    frame, pooled = load(args.cache, text_only=args.text_only)
    fitted_arms = ("tfidf", "shipped") if args.text_only else ("tfidf", "shipped", "pretrained")
    masks = {"genre": kept_labels(frame, "genre", args.min_authors),
             "dialect": kept_labels(frame, "dialect", TASK_MIN_AUTHORS["dialect"])}
    metrics: dict = {"command": "spacy project run date-eval (attribute)",
                     "protocol": f"{args.repeats}x repeated 5-fold CV grouped by author (StratifiedGroupKFold)",
                     "layers": list(DEFAULT_LAYERS), "n_passages": int(len(frame)),
                     "n_texts": int(frame["text_id"].nunique()), "n_authors": int(frame["author"].nunique()),
                     "passage_chars": int(frame["text"].str.len().max()),
                     "in_pretraining": {"passages": int(frame["in_pretraining"].sum()),
                                        "texts": int(frame.loc[frame["in_pretraining"], "text_id"].nunique()),
                                        "texts_not_read": sorted(frame.loc[~frame["in_pretraining"], "tlg"].unique().tolist())},
                     "tasks": {}}
    for folder in args.ship:
        metrics["shipped"], models = ship(frame, pooled, masks, folder)
        if args.probe is not None:
            metrics["probe"] = probe(models, args.probe)
            print("probe", json.dumps(metrics["probe"], ensure_ascii=False), flush=True)
    if args.repeats == 0:
        return
    for task, mask in masks.items():
        metrics["tasks"][task] = classify(frame[mask].reset_index(drop=True), pooled[mask], task, args.repeats,
                                          fitted_arms)
    if not args.text_only:
        dialect = frame["dialect"].where(masks["dialect"], "other").to_numpy()
        metrics["tasks"]["date"] = date(frame, pooled, dialect, args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
