"""Run 15: gaps of hidden width (``[...]``: the extent unknown), issue 43's "hidden widths ≤ 1.3× known CER".

    python scripts/hidden_eval.py --index training/parallels --kn training/kn_lm8.npz \\
        --samples samples/fold_3 --domain papyrus --cache results/hidden --out metrics_run15_hidden_papyri.json

Every frozen gap is decoded with its width hidden. Candidates of every width 1…10 come from the
8-gram pair's two-sided beam (``kn_restore``, beam 20 per width and direction) and, new here, from
the parallels index: one search of the gap's context serves every width
(:func:`stoicheia_spacy.restore.infgram.occurrences` with all widths; the sample's own document and
its duplicates left out), the ``--extra`` best by evidence added to the union. Each candidate of
width ``w`` (characters) is scored

    ``fwd + rev_w · rev + a · context + b · log(1 + docs) + n · w + bias[w]``

(``bias``: one log prior per width, fitted on dev by coordinate ascent over ``BIAS`` starting at 0,
after the grid over ``rev_w, a, b, n``; best dev CER, then top-1). The **before** arm is today's
default of the domain (papyri: ``kn_domain_weights.papyrus.default`` ``fwd + 1.5 · rev``, the
width prior ``-0.7 · w`` of the config, its top 20 reordered by the parallels rerank
``score + 8 · log(1 + attested)``); the after arm is scored with and without that rerank on top.
Test gaps are scored once with the dev fit: CER / top-1 / top-20, the ratio to the known-width
CER of Run 13's combination on the same gaps (``--known``, its metrics JSON), McNemar on top-1,
CPU seconds per gap and per document of ``--doc-gaps`` gaps. Per-gap features are cached.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein

sys.path.insert(0, str(Path(__file__).resolve().parent))
from infgram_eval import EXTRA, lost_letters
from restore_eval import bare, correct_top1, load_split, query, score
from stoicheia_lab.scoring import mcnemar_exact

from stoicheia_spacy.parallels.index import ParallelIndex, letters_of
from stoicheia_spacy.parallels.search import attest, leave_out
from stoicheia_spacy.restore.calibration import (
    fit_confidence,
    fit_temperatures,
    top_confidence,
    top_probability,
)
from stoicheia_spacy.restore.combine import restore_combined
from stoicheia_spacy.restore.infgram import Evidence, final_sigma, infgram_features, occurrences
from stoicheia_spacy.restore.kn_beam import gap_symbols, kn_restore, score_texts, text_to_symbols
from stoicheia_spacy.restore.kneser_ney import load_kn
from stoicheia_spacy.restore.lexicon import Vocabulary, word_features
from stoicheia_spacy.restore.settings import RestorerSettings
from stoicheia_spacy.restore.widths import WidthPrior

MAX_LETTERS = 10
REV = (0.5, 1.0, 1.5, 2.0)
A = (0.0, 0.2, 0.5, 0.8, 1.2, 1.6)
B = (0.0, 2.0, 4.0, 8.0, 16.0)
N = (-2.0, -1.5, -1.0, -0.7, -0.4, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
BIAS = tuple(np.round(np.arange(-4.0, 4.01, 0.5), 2))
#: the word check's weights (``--vocabulary``, Run 16): words not attested / attested at the gap's edges
OOV = (0.0, -0.5, -1.0, -2.0, -4.0, -8.0)
KNOWN = (0.0, 0.5, 1.0, 2.0, 4.0)
#: today's default for a hidden papyrus gap (config: kn_domain_weights.papyrus.default, length_bonus)
BEFORE = {"rev": 1.5, "length_bonus": -0.7, "rerank": 8.0}


def features(index: ParallelIndex, lm, records: list[dict], extra: int, vocab: Vocabulary | None = None) -> dict:
    """Per gap: the union's candidates (every width) with n-gram scores and the index's evidence
    (``vocab``: and the word check's ``oov`` / ``known`` counts, :func:`~stoicheia_spacy.restore.lexicon.word_features`)."""
    t0 = time.process_time()
    queries = [query(r, "hidden", 2) for r in records]
    beams = kn_restore(lm, queries, beam=20, far=10, max_letters=MAX_LETTERS)
    decode_s = time.process_time() - t0
    inf_s = 0.0
    rows, excluded = [], {}
    for r, q, beam in zip(records, queries, beams, strict=True):
        s, L = r["start"], r["L"]
        t = time.process_time()
        if r["id"] not in excluded:
            excluded[r["id"]] = leave_out(index, lost_letters(r["text"]), r["id"], min_letters=0)
        ex = excluded[r["id"]]
        left, right = lost_letters(r["text"][:s]), lost_letters(r["text"][s + L:])
        before = s > 0 and not r["text"][s - 1].isspace()
        after = s + L < len(r["text"]) and not r["text"][s + L].isspace()
        texts, lmt, rmt, docs = occurrences(index, left, right, range(1, MAX_LETTERS + 1), space_before=before,
                                            space_after=after, exclude=ex)
        feats = {final_sigma(k, not after).replace("ς", "σ"): v for k, v in infgram_features(texts, lmt, rmt, docs).items()}
        table = {c.text.replace("ς", "σ"): [c.text, c.fwd, c.rev, True] for c in beam}
        added = [x for x in sorted(feats, key=lambda x: (-feats[x].context, -feats[x].docs, -feats[x].occurrences, x))
                 if x not in table][:extra]
        if added:
            lsym, rsym = gap_symbols(q)
            fwd, rev = score_texts(lm, lsym, rsym, [text_to_symbols(x) for x in added], 10)
            for x, f, b in zip(added, fwd, rev, strict=True):
                table[x] = [final_sigma(x, not after), float(f), float(b), False]
        g = bare(r["gold"])
        cands = [{"text": v[0], "w": len(v[0]), "fwd": v[1], "rev": v[2], "beam": v[3],
                  "ctx": feats[k].context if k in feats else 0, "docs": feats[k].docs if k in feats else 0,
                  "cer": Levenshtein.distance(bare(v[0]), g) / len(g), "ok": bare(v[0]) == g,
                  **(dict(zip(("oov", "known"), word_features(vocab, r["text"], s, L, str(v[0])), strict=True))
                     if vocab is not None else {})}
                 for k, v in table.items()]
        inf_s += time.process_time() - t
        rows.append({"L": L, "cands": cands, "left": left, "right": right, "exclude": ex})
    n = max(1, len(records))
    return {"rows": rows, "decode_cpu_s_per_gap": decode_s / n, "infgram_cpu_s_per_gap": inf_s / n}


class Table:
    """The candidates of many gaps as padded arrays: features (G, C, 6), CER and exact match (G, C)."""

    def __init__(self, rows: list[dict], union: bool = True) -> None:
        cs = [[c for c in x["cands"] if union or c["beam"]] for x in rows]
        G, C = len(cs), max(1, max(len(c) for c in cs))
        self.X = np.zeros((G, C, 7))
        self.w = np.zeros((G, C), np.int64)
        self.cer = np.ones((G, C))
        self.ok = np.zeros((G, C), bool)
        self.valid = np.zeros((G, C), bool)
        self.texts = [[c["text"] for c in row] for row in cs]
        for g, row in enumerate(cs):
            for j, c in enumerate(row):
                self.X[g, j] = (c["fwd"], c["rev"], c["ctx"], math.log1p(c["docs"]), c["w"],
                                c.get("oov", 0), c.get("known", 0))
                self.w[g, j] = c["w"]
                self.cer[g, j], self.ok[g, j], self.valid[g, j] = c["cer"], c["ok"], True

    def keys(self, rev: float, a: float, b: float, n: float, bias: np.ndarray | None = None,
             oov: float = 0.0, known: float = 0.0) -> np.ndarray:
        k = self.X @ np.array([1.0, rev, a, b, n, oov, known])
        if bias is not None:
            k = k + bias[np.clip(self.w, 1, MAX_LETTERS) - 1]
        return np.where(self.valid, k, -np.inf)

    def top1(self, keys: np.ndarray) -> tuple[float, float]:
        best = np.argmax(keys, axis=1)
        r = np.arange(len(best))
        return 100 * float(self.cer[r, best].mean()), 100 * float(self.ok[r, best].mean())

    def ranked(self, keys: np.ndarray, k: int = 20) -> list[list[str]]:
        order = np.argsort(-keys, axis=1, kind="stable")[:, :k]
        return [[self.texts[g][j] for j in order[g] if self.valid[g, j]] for g in range(len(order))]


def fit(table: Table) -> tuple[dict, list]:
    """``rev, a, b, n`` on the grid (best CER, then top-1; ties to the smaller weights)."""
    grid = []
    best = None
    for rev, a, b, n in itertools.product(REV, A, B, N):
        cer, top1 = table.top1(table.keys(rev, a, b, n))
        grid.append({"rev": rev, "a": a, "b": b, "n": n, "cer": cer, "top1": top1})
        cand = (round(cer, 9), -round(top1, 9), a, b, abs(n), abs(rev - 1.0))
        if best is None or cand < best[0]:
            best = (cand, [rev, a, b, n])
    assert best is not None
    rev, a, b, n = best[1]
    return {"rev": rev, "a": a, "b": b, "n": n, "bias": [0.0] * MAX_LETTERS}, grid


def fit_bias(table: Table, wt: dict) -> dict:
    """``wt`` with a per-width log prior fitted by coordinate ascent over ``BIAS`` (from 0)."""
    rev, a, b, n = wt["rev"], wt["a"], wt["b"], wt["n"]
    bias = np.zeros(MAX_LETTERS)
    current = table.top1(table.keys(rev, a, b, n, bias))
    for _ in range(3):
        moved = False
        for w in range(MAX_LETTERS):
            for v in BIAS:
                trial = bias.copy()
                trial[w] = v
                cer, top1 = table.top1(table.keys(rev, a, b, n, trial))
                if (round(cer, 9), -round(top1, 9)) < (round(current[0], 9), -round(current[1], 9)):
                    bias, current, moved = trial, (cer, top1), True
        if not moved:
            break
    bias -= bias.max()  # a log prior: the likeliest width at 0
    return {**wt, "bias": [float(x) for x in bias]}


def fit_words(table: Table, wt: dict) -> dict:
    """``wt`` with the word check's weights (:data:`OOV` x :data:`KNOWN`) and the width weight
    refitted beside them (:data:`N`; best dev CER, then top-1; ties to the smaller weights)."""
    best = None
    for o, k, n in itertools.product(OOV, KNOWN, N):
        cer, top1 = table.top1(table.keys(wt["rev"], wt["a"], wt["b"], n, None, o, k))
        cand = (round(cer, 9), -round(top1, 9), abs(o), abs(k), abs(n))
        if best is None or cand < best[0]:
            best = (cand, {**wt, "n": n, "oov": o, "known": k})
    assert best is not None
    return best[1]


def with_counts(index: ParallelIndex, rows: list[dict], tops: list[list[str]], scores: list[list[float]]) -> list:
    """The parallels rerank's attestation counts of each gap's top 20 (4 letters a side)."""
    out = []
    for x, t, s in zip(rows, tops, scores, strict=True):
        out.append([(c, k, attest(index, x["left"], letters_of(c), x["right"], context=4, n=1,
                                  exclude=x["exclude"]).attested) for c, k in zip(t, s, strict=True)])
    return out


def reranked(counts: list, weight: float) -> list[list[str]]:
    return [[c for c, _, _ in sorted(row, key=lambda z: -(z[1] + weight * math.log1p(z[2])))] for row in counts]


def before_arm(table: Table) -> tuple[list[list[str]], list[list[float]]]:
    """Today's default: top 20 by ``fwd + 1.5 rev - 0.7 w``, each with its raw score (the rerank's base)."""
    keys = table.keys(BEFORE["rev"], 0.0, 0.0, BEFORE["length_bonus"])
    raw = table.keys(BEFORE["rev"], 0.0, 0.0, 0.0)
    order = np.argsort(-keys, axis=1, kind="stable")[:, :20]
    tops = [[table.texts[g][j] for j in order[g] if table.valid[g, j]] for g in range(len(order))]
    scores = [[float(raw[g, j]) for j in order[g] if table.valid[g, j]] for g in range(len(order))]
    return tops, scores


def after_scores(table: Table, wt: dict) -> tuple[list[list[str]], list[list[float]]]:
    keys = table.keys(wt["rev"], wt["a"], wt["b"], wt["n"], np.array(wt["bias"]))
    order = np.argsort(-keys, axis=1, kind="stable")[:, :20]
    tops = [[table.texts[g][j] for j in order[g] if table.valid[g, j]] for g in range(len(order))]
    # the score the rerank adds to: the combination without the width terms (Candidate.score)
    raw = table.keys(wt["rev"], wt["a"], wt["b"], 0.0)
    scores = [[float(raw[g, j]) for j in order[g] if table.valid[g, j]] for g in range(len(order))]
    return tops, scores


def evaluate(index: ParallelIndex, records: list[dict], rows: list[dict], wt: dict, rerank: bool,
             bias: dict | None = None, words: dict | None = None) -> dict:
    table, beam_only = Table(rows), Table(rows, union=False)
    arms: dict[str, list[list[str]]] = {}
    bt, bs = before_arm(beam_only)
    arms["before_no_rerank"] = bt
    if rerank:
        arms["before"] = reranked(with_counts(index, rows, bt, bs), BEFORE["rerank"])
    at, as_ = after_scores(table, wt)
    arms["after"] = at
    if rerank:
        arms["after_rerank"] = reranked(with_counts(index, rows, at, as_), BEFORE["rerank"])
    if bias is not None:
        arms["after_width_bias"] = after_scores(table, bias)[0]
    if words is not None:
        keys = table.keys(words["rev"], words["a"], words["b"], words["n"], None, words["oov"], words["known"])
        arms["after_words"] = table.ranked(keys)
    arms["union_before_weights"] = before_arm(table)[0]
    out: dict = {name: score(records, tops) for name, tops in arms.items()}
    ok = {name: correct_top1(records, tops) for name, tops in arms.items()}
    base = "before" if rerank else "before_no_rerank"
    out["mcnemar_top1"] = {}
    for other in [a for a in arms if a != "after"]:
        mc = mcnemar_exact(ok["after"], ok[other])
        out["mcnemar_top1"][f"after_vs_{other}"] = {"after_only": mc.a_only, "other_only": mc.b_only, "p": mc.pvalue}
    out["base"] = base
    out["gold_in_union_share"] = 100 * float(table.ok.any(axis=1).mean())
    out["gold_in_ngram_beam_share"] = 100 * float(beam_only.ok.any(axis=1).mean())
    pred_w = np.array([len(t[0]) if t else 0 for t in at])
    gold_w = np.array([r["L"] for r in records])
    out["after_width_right_share"] = 100 * float((pred_w == gold_w).mean())
    out["before_width_right_share"] = 100 * float((np.array([len(t[0]) if t else 0 for t in arms[base]]) == gold_w).mean())
    return out


def calibration(dev: Table, wt: dict, test: Table | None = None) -> dict:
    """The ``unknown`` bucket's temperature and Platt confidence fitted on the dev gaps' new keys
    (the top 20, as the restorer's softmax); ECE on dev and test."""
    def table(t: Table) -> tuple[list[np.ndarray], np.ndarray]:
        keys = t.keys(wt["rev"], wt["a"], wt["b"], wt["n"])
        order = np.argsort(-keys, axis=1, kind="stable")[:, :20]
        ks = [keys[g, [j for j in order[g] if t.valid[g, j]]] for g in range(len(order))]
        return ks, t.ok[np.arange(len(order)), order[:, 0]]

    def ece(c: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
        edges = np.linspace(0, 1, bins + 1)
        idx = np.clip(np.digitize(c, edges) - 1, 0, bins - 1)
        return float(sum(abs(c[idx == i].mean() - y[idx == i].mean()) * (idx == i).mean()
                         for i in range(bins) if (idx == i).any()))

    keys, ok = table(dev)
    temp = fit_temperatures(keys, ok, ["unknown"] * len(keys))["unknown"]
    probs = np.array([top_probability(k, temp) for k in keys])
    slope, bias = fit_confidence(probs, ok)
    out = {"temperature": temp, "confidence_slope": slope, "confidence_bias": bias,
           "dev_ece": ece(np.asarray(top_confidence(probs, slope, bias)), ok.astype(float))}
    if test is not None:
        tk, tok = table(test)
        tp = np.array([top_probability(k, temp) for k in tk])
        out["test_ece"] = ece(np.asarray(top_confidence(tp, slope, bias)), tok.astype(float))
    return out


def restorer_path(index: ParallelIndex, lm, records: list[dict], rows: list[dict], wt: dict, cal: dict,
                  extra: int, doc_gaps: int) -> dict:
    """The first test gaps through the restorer's code path (``restore_combined`` with the
    settings this fit ships and the index's ``Evidence``): CPU seconds a gap (the n-gram's beam, the
    index's candidates, the scoring) and per document of ``doc_gaps`` hidden gaps, and how often its
    top candidate is the script's."""
    settings = RestorerSettings(max_letters=MAX_LETTERS, kn_weights={"default": [0.0, 1.0, 1.0, 0.0]},
                                kn_domain_weights={"papyrus": {"unknown": shipped_kn(wt)}},
                                infgram_weights={"papyrus": {"unknown": [wt["a"], wt["b"]]}})
    prior = WidthPrior("total", BEFORE["length_bonus"], tuple([math.log(0.1)] * MAX_LETTERS))
    queries = [query(r, "hidden", 2) for r in records]
    evidence = [Evidence(index, settings.infgram_weights["papyrus"], frozenset(x["exclude"]), extra) for x in rows]
    t0 = time.process_time()
    found = restore_combined(None, queries, settings, lm, prior=prior, temperature={"unknown": cal["temperature"]},
                             domains=["papyrus"] * len(queries), evidence=evidence)
    cpu = time.process_time() - t0
    table = Table(rows)
    script = [t[0] for t in after_scores(table, wt)[0]]
    tops = [[c.text for c in cands] for cands in found]
    same = float(np.mean([bool(t) and bare(t[0]) == bare(s) for t, s in zip(tops, script, strict=True)]))
    return {"gaps": len(records), "cpu_s_per_gap": cpu / max(1, len(records)),
            "cpu_s_per_document": doc_gaps * cpu / max(1, len(records)), "document_gaps": doc_gaps,
            "top1_agrees_with_script": 100 * same, **score(records, tops)["overall"]}


def shipped_kn(wt: dict) -> list[float]:
    """The ``unknown`` bucket's ``[backbone, fwd, rev, length]`` in ``kn_domain_weights``: the
    length weight less the config's ``length_bonus`` (which the ranking adds back)."""
    return [0.0, 1.0, float(wt["rev"]), round(float(wt["n"]) - BEFORE["length_bonus"], 6)]


def cached(path: Path | None, make):
    if path is not None and path.is_file():
        with path.open("rb") as f:
            return pickle.load(f)
    value = make()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as f:
            pickle.dump(value, f)
    return value


def overall(ev: dict) -> dict:
    return {arm: ev[arm]["overall"] for arm in ev if isinstance(ev[arm], dict) and "overall" in ev[arm]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hidden_eval.py")
    ap.add_argument("--index", required=True)
    ap.add_argument("--kn", required=True)
    ap.add_argument("--samples", default="samples/fold_3")
    ap.add_argument("--domain", choices=("papyrus", "inscription"), default="papyrus")
    ap.add_argument("--known", default=None, help="Run 13's metrics JSON: the known-width CER of the same gaps")
    ap.add_argument("--extra", type=int, default=EXTRA, help="index candidates added to the n-gram's union")
    ap.add_argument("--dev-per-length", type=int, default=None)
    ap.add_argument("--test-per-length", type=int, default=None)
    ap.add_argument("--no-test", action="store_true", help="fit and score on dev only")
    ap.add_argument("--rerank", action="store_true", help="score the parallels rerank (before and on top of after)")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--pipeline-gaps", type=int, default=200,
                    help="test gaps decoded through the restorer's code path (restore_combined): CPU and agreement")
    ap.add_argument("--doc-gaps", type=int, default=50, help="hidden-width gaps of the document CPU-s is given for")
    ap.add_argument("--vocabulary", default=None,
                    help="a word list (vocabulary.npy): also fit the word check's weights beside Run 15's (after_words)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0 = time.process_time()
    index, lm = ParallelIndex(a.index), load_kn(a.kn)
    cache = Path(a.cache) if a.cache else None
    tag = f"{Path(a.samples).name}_x{a.extra}" + ("_v" if a.vocabulary else "")
    vocab = Vocabulary.load(a.vocabulary) if a.vocabulary else None
    dev = load_split(Path(a.samples), "dev", a.dev_per_length)
    fd = cached(cache / f"{tag}_dev_{a.dev_per_length}.pkl" if cache else None, lambda: features(index, lm, dev, a.extra, vocab))
    wt, grid = fit(Table(fd["rows"]))
    wb = fit_bias(Table(fd["rows"]), wt)  # the per-width log prior, reported (not shipped unless it generalises)
    ww = fit_words(Table(fd["rows"]), wt) if vocab is not None else None
    out: dict = {"command": "python scripts/hidden_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "domain": a.domain, "index": index.info, "extra": a.extra, "weights": wt, "weights_width_bias": wb,
                 "weights_order": "fwd + rev * rev + a * context + b * log(1 + docs) + n * width + bias[width]",
                 "before": BEFORE}
    out["weights_words"] = ww
    out["dev"] = {"gaps": len(dev), **evaluate(index, dev, fd["rows"], wt, a.rerank, wb, ww),
                  "grid_best": sorted(grid, key=lambda g: (g["cer"], -g["top1"]))[:10],
                  **{k: v for k, v in fd.items() if k != "rows"}}
    halves = []  # the fit's honesty: fitted on one half of the dev gaps, scored on the other
    for k in (0, 1):
        fit_i = [i for i in range(len(dev)) if i % 2 == k]
        held = [i for i in range(len(dev)) if i % 2 != k]
        t_fit = Table([fd["rows"][i] for i in fit_i])
        wk, _ = fit(t_fit)
        ev = evaluate(index, [dev[i] for i in held], [fd["rows"][i] for i in held], wk, False, fit_bias(t_fit, wk),
                      fit_words(t_fit, wk) if vocab is not None else None)
        halves.append({"fitted_on": f"dev gaps i % 2 == {k}", "weights": wk, **overall(ev)})
    out["dev"]["held_out_halves"] = halves
    out["calibration"] = calibration(Table(fd["rows"]), wt)
    if not a.no_test:
        test = load_split(Path(a.samples), "test", a.test_per_length)
        ft = cached(cache / f"{tag}_test_{a.test_per_length}.pkl" if cache else None,
                    lambda: features(index, lm, test, a.extra, vocab))
        out["test"] = {"gaps": len(test), **evaluate(index, test, ft["rows"], wt, a.rerank, wb, ww),
                       **{k: v for k, v in ft.items() if k != "rows"}}
        out["calibration"] = calibration(Table(fd["rows"]), wt, Table(ft["rows"]))
        if a.known:
            known = json.loads(Path(a.known).read_text(encoding="utf-8"))
            k_cer = known["test"]["infgram"]["overall"]["cer"]
            out["test"]["known_cer"] = {"source": a.known, "arm": "test.infgram.overall", "cer": k_cer,
                                        "dev_cer": known["dev"]["infgram"]["overall"]["cer"]}
            out["test"]["ratio_to_known"] = {arm: out["test"][arm]["overall"]["cer"] / k_cer
                                             for arm in overall(out["test"])}
            out["dev"]["ratio_to_known"] = {arm: out["dev"][arm]["overall"]["cer"] / known["dev"]["infgram"]["overall"]["cer"]
                                            for arm in overall(out["dev"])}
        if a.pipeline_gaps:
            out["test"]["restorer_path"] = restorer_path(index, lm, test[: a.pipeline_gaps], ft["rows"][: a.pipeline_gaps],
                                                         wt, out["calibration"], a.extra, a.doc_gaps)
    out["cpu_s"] = time.process_time() - cpu0
    Path(a.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    brief = {k: v for k, v in out.items() if k != "index"}
    for split in ("dev", "test"):
        if split in brief:
            brief[split] = {k: (v["overall"] if isinstance(v, dict) and "overall" in v else v)
                            for k, v in brief[split].items() if k not in ("grid_best",)}
    print(json.dumps(brief, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
