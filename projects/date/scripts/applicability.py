"""Fit when the dater applies, and ship it with the dater's weights.

Two tests, both fitted on texts the dater never saw, written into the dater's ``model``
(:class:`stoicheia_spacy.date.text.Register`) and reported in ``metrics/applicability.json``:

* **register**: a logistic regression over word unigrams (binary TF-IDF rows) telling documentary
  papyri from literary texts. Documentary: DDbDP papyri of the duke-nlp token file (REGULARIZED
  words), PaDoC's TM numbers (the dater's training papyri) excluded. Literary: passages of the
  Perseus (CLTK) and First1K works, of the same word counts as the papyri. Each text goes by a
  hash of its document (a work for literature) to *train* (the regression), *val* (the
  probability threshold: the best balanced accuracy) or *test* (the metrics).
* **length**: the dater's interval is calibrated on whole papyri. Each PaDoC papyrus is cut to its
  first ``n`` words and dated leaving itself out of the neighbours (word similarity and word prior;
  the ridge was fitted with it, so errors are optimistic, equally at every length). ``widen``: for
  each ``n``, the factor on the residuals at which the 90 % interval covers as many cut papyri as it
  covers whole ones in the same protocol; ``min_words``: the fewest words at which that widened
  interval is narrower than the span of the dated papyri (below it, no date is given).

    spacy project run applicability projects/date
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import lzma
import random
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from stoicheia_spacy.date.dater import packaged_weights
from stoicheia_spacy.date.text import (
    Register,
    TextDateModel,
    fit_vocabulary,
    kernel_dates,
    vectorize,
)
from stoicheia_spacy.textnorm import word_keys

LENGTHS = (1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 200)
SPLITS = ("train", "val", "test")


def split(ident: str) -> str:
    return SPLITS[hashlib.sha1(ident.encode()).digest()[0] % 3]


def padoc(mirror: Path) -> list[dict[str, str]]:
    with lzma.open(mirror / "papyri/padoc/padoc389.csv.xz", "rt", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def documents(mirror: Path, skip: set[str], every: int, limit: int) -> list[tuple[str, str]]:
    """(file id, text) of every ``every``-th DDbDP papyrus with Greek words, PaDoC's excluded."""
    out: list[tuple[str, str]] = []
    ident, tm, words, n_docs = "", "", [], 0

    def flush() -> None:
        if words and tm not in skip and n_docs % every == 0 and word_keys(" ".join(words)):
            out.append((ident, " ".join(words)))

    with lzma.open(mirror / "papyri/duke_nlp_2018_ddbdp_tokens.tsv.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# newdoc"):
                flush()
                if len(out) >= limit:
                    return out
                n_docs += 1
                parts = line.split()
                ident = parts[parts.index("file") + 2]
                tm = parts[parts.index("TM") + 2] if "TM" in parts else ""
                words = []
            elif not line.startswith("#"):
                cols = line.rstrip("\n").split("\t")
                if len(cols) > 4:
                    words.append(cols[4])
    flush()
    return out


def works(mirror: Path) -> list[tuple[str, list[str]]]:
    """(urn, words) of the literary works with at least 100 words."""
    found = []
    with lzma.open(mirror / "text/perseus_cltk_grc.jsonl.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            found.append((row["urn"], " ".join(s["text"] for s in row["segments"]).split()))
    with lzma.open(mirror / "text/first1k_opp_from_LemmatizedAncientGreekXML.jsonl.xz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            found.append((row["urn"], " ".join(row["sentences"]).split()))
    return [(urn, words) for urn, words in found if len(words) >= 100]


def passages(corpus: list[tuple[str, list[str]]], lengths: list[int], seed: int) -> list[tuple[str, str]]:
    """One passage per length, of a random work at a random place (its id: the work's urn)."""
    rng = random.Random(seed)
    out = []
    for n in lengths:
        urn, words = corpus[rng.randrange(len(corpus))]
        start = rng.randrange(max(1, len(words) - n))
        out.append((urn, " ".join(words[start:start + n])))
    return out


def balanced(p: np.ndarray, y: np.ndarray, threshold: float) -> float:
    return float(((p[y == 1] >= threshold).mean() + (p[y == 0] < threshold).mean()) / 2)


def fit_register(texts: list[str], y: np.ndarray, c: float) -> Register:
    vocab, idf = fit_vocabulary(texts, min_df=2)
    vocab_1 = [g for g in vocab if " " not in g]
    keep = np.array([" " not in g for g in vocab])
    idf = idf[keep]
    x = vectorize(texts, vocab_1, idf)
    lr = LogisticRegression(C=c, max_iter=5000).fit(x, y)
    return Register(vocab_1, idf, lr.coef_[0].astype(np.float32), float(lr.intercept_[0]), 0.5, 1)


def widening(curve: dict[str, dict[str, float]], errors: dict[str, np.ndarray], residuals: np.ndarray,
             level: float, span: float) -> tuple[tuple[tuple[int, float], ...], int]:
    """The residual factor per cut length that restores the whole papyri's coverage, and the
    fewest words whose widened interval is narrower than ``span``."""
    tail = (1.0 - level) / 2
    lo_r, hi_r = np.quantile(residuals, [tail, 1.0 - tail])
    target = curve["whole"]["coverage"]
    pairs = []
    for n in LENGTHS:
        err = errors[str(n)]
        factor = next((f for f in np.arange(1.0, 20.01, 0.1)
                       if ((-err >= f * lo_r) & (-err <= f * hi_r)).mean() >= target), 20.0)
        pairs.append((n, round(float(factor), 1)))
        curve[str(n)]["widen"] = round(float(factor), 1)
    min_words = next((n for n, f in pairs if f * (hi_r - lo_r) < span), LENGTHS[-1])
    return tuple(p for p in pairs if p[0] >= min_words), min_words


def length_curve(model: TextDateModel, rows: list[dict[str, str]],
                 level: float) -> tuple[dict[str, dict[str, float]], dict[str, np.ndarray]]:
    """Coverage of the ``level`` interval and MAE of PaDoC papyri cut to their first n words, each
    dated without itself among the neighbours."""
    texts = [r["text_raw"] for r in rows]
    years = model.years
    whole = model.features(texts)
    own = np.asarray((whole @ model.train.T).toarray().argmax(axis=1)).ravel()
    truth = years[own]
    tail = (1.0 - level) / 2
    lo_r, hi_r = np.quantile(model.residuals, [tail, 1.0 - tail])
    out, errors = {}, {}
    for n in (*LENGTHS, None):
        cut = [" ".join(word_keys(t)[:n]) if n else t for t in texts]
        keep = np.array([n is None or len(word_keys(t)) >= n for t in texts])
        x = model.features([c for c, k in zip(cut, keep, strict=True) if k])
        s = model.similarity(x)
        s[np.arange(len(s)), own[keep]] = -np.inf
        point = kernel_dates(s, years, model.prior(x), model.tau, model.k, model.lam)
        err = point - truth[keep]
        errors["whole" if n is None else str(n)] = err
        out["whole" if n is None else str(n)] = {
            "n": int(keep.sum()), "coverage": float(((err + lo_r <= 0) & (0 <= err + hi_r)).mean()),
            "mae": float(np.abs(err).mean())}
    return out, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mirror", type=Path)
    parser.add_argument("--out", type=Path, default=Path("projects/date/metrics/applicability.json"))
    parser.add_argument("--weights", type=Path, default=None, help="The dater folder to write into "
                        "(default: the shipped one, assets/models/grc_stoicheia_doc_clean/dater)")
    parser.add_argument("--every", type=int, default=20, help="Take every n-th DDbDP papyrus")
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--c", type=float, default=10.0, help="Inverse regularisation of the regression")
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    folder = args.weights or packaged_weights()
    model = TextDateModel.from_bytes((folder / "model").read_bytes())
    rows = padoc(args.mirror)
    docs = documents(args.mirror, {r["tm"].strip() for r in rows}, args.every, args.limit)
    lits = passages(works(args.mirror), [len(word_keys(t)) for _, t in docs], args.seed)
    data = [(i, t, 1) for i, t in docs] + [(i, t, 0) for i, t in lits]
    part = {name: [(t, y) for i, t, y in data if split(i) == name] for name in SPLITS}
    texts = {k: [t for t, _ in v] for k, v in part.items()}
    ys = {k: np.array([y for _, y in v]) for k, v in part.items()}
    register = fit_register(texts["train"], ys["train"], args.c)
    p_val = register.documentary(texts["val"])
    grid = np.round(np.arange(0.05, 0.96, 0.01), 2)
    scores = [balanced(p_val, ys["val"], t) for t in grid]
    register.threshold = float(grid[int(np.argmax(scores))])
    curve, errors = length_curve(model, rows, 0.9)
    span = float(model.years.max() - model.years.min())
    register.widen, register.min_words = widening(curve, errors, model.residuals, 0.9, span)
    p_test, y_test = register.documentary(texts["test"]), ys["test"]
    n_test = np.array([len(word_keys(t)) for t in texts["test"]])
    by_length = {}
    for lo, hi in ((1, 2), (3, 7), (8, 19), (20, 49), (50, 10**9)):
        sel = (n_test >= lo) & (n_test <= hi)
        if (y_test[sel] == 1).any() and (y_test[sel] == 0).any():
            by_length[f"{lo}-{hi if hi < 10**9 else ''}"] = {
                "n": int(sel.sum()), "balanced_accuracy": balanced(p_test[sel], y_test[sel], register.threshold)}
    model.register = register
    (folder / "model").write_bytes(model.to_bytes())
    result = {
        "command": "spacy project run applicability projects/date (python scripts/applicability.py MIRROR --out metrics/applicability.json --weights ../../assets/models/grc_stoicheia_doc_clean/dater)",
        "register": {
            "model": f"logistic regression (C={args.c}) over binary word-unigram TF-IDF rows, {len(register.vocab)} words",
            "documentary": f"DDbDP (duke-nlp 2018 tokens, REGULARIZED), every {args.every}th papyrus, PaDoC's TM numbers excluded",
            "literary": f"Perseus (CLTK) and First1K passages of the papyri's word counts, seed {args.seed}",
            "split": "by a hash of the papyrus file / the work's urn: train / val (threshold) / test",
            "n": {k: {"documentary": int((ys[k] == 1).sum()), "literary": int((ys[k] == 0).sum())} for k in SPLITS},
            "threshold": register.threshold,
            "val_balanced_accuracy": max(scores),
            "test": {"documentary_accepted": float((p_test[y_test == 1] >= register.threshold).mean()),
                     "literary_refused": float((p_test[y_test == 0] < register.threshold).mean()),
                     "balanced_accuracy": balanced(p_test, y_test, register.threshold),
                     "by_word_count": by_length},
        },
        "length": {
            "protocol": "PaDoC papyri cut to their first n Greek words, dated leaving themselves out of the "
                        "neighbours (word similarity and word prior, no states); the 90% interval's coverage",
            "min_words": register.min_words, "span_of_dated_papyri": span, "widen": [list(p) for p in register.widen],
            "by_first_n_words": curve,
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
