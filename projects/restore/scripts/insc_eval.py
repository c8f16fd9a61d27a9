"""Run 14: inscription-aware candidates and evidence for the inscriptions' gaps (issue 43).

    python scripts/insc_eval.py --index training/parallels --kn training/kn_lm8.npz \\
        --insc-index training/parallels_insc --insc-kn training/kn_insc8.npz \\
        --samples samples/inscriptions --run13 metrics_run13_infgram_inscriptions.json --out metrics_run14.json

Run 13's ∞-gram arm (the 8-gram pair's beam, the papyri index's candidates, ``fwd + rev_w · rev +
a · context + b · log(1 + docs)``) reads a 27 M-letter index of papyri and Perseus and an 8-gram of
whose 35 M letters 86 k are inscriptions. Here each known-width gap also gets:

* the candidates and evidence of the **inscriptions' own index** (``parallels_index.py
  --no-papyri --no-literary --inscriptions``: the training digits' certain letters, 1,481
  inscriptions; supplied letters are separators) and of their **own 8-gram pair**
  (``kn_lm.py build --no-papyri --literary-letters 0``): its beam, and both directions' scores of
  every candidate (``ifwd``, ``irev``);
* a **word check** (:func:`stoicheia_spacy.restore.lexicon.word_features`): the words the
  candidate completes with the letters at the gap's edges, looked up in the vocabulary of both
  indexes (papyri, Perseus, inscriptions; words with a supplied or lost letter never counted):
  ``oov`` (complete words not attested) and ``known`` (attested).

Every candidate of the union (the 8-gram beam, the inscription 8-gram's beam, the best
``EXTRA`` of each index by evidence) is scored by ``w · features`` (:data:`FEATURES`; ``fwd``'s
weight 1), the other weights fitted on the dev gaps per width bucket by coordinate ascent over
:data:`GRID` (best CER, then top-1; ties to the smaller weight), checked on held-out dev halves.
The test gaps are scored once with the fitted weights, beside the ``ngram8`` arm and Run 13's
arm (its weights read from ``--run13``, the union restricted to its candidates): CER / top-1 /
top-20, McNemar on top-1; calibration (temperatures, Platt, threshold) refitted on dev.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from thinc.api import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hidden_eval import reranked, with_counts
from infgram_eval import EXTRA, cached, ece, fit_calibration, fold, lost_letters
from restore_eval import bare, correct_top1, load_split, ours_cer, query, score
from stoicheia_lab.scoring import mcnemar_exact

from stoicheia_spacy.parallels.index import ParallelIndex
from stoicheia_spacy.parallels.search import doc_counts, leave_out
from stoicheia_spacy.restore import width_bucket
from stoicheia_spacy.restore.calibration import (
    fit_confidence,
    fit_temperatures,
    top_confidence,
    top_probability,
)
from stoicheia_spacy.restore.combine import restore_combined
from stoicheia_spacy.restore.domain_sources import load_domain_sources
from stoicheia_spacy.restore.infgram import Evidence, final_sigma, infgram_features, occurrences
from stoicheia_spacy.restore.kn_beam import gap_symbols, kn_restore, score_texts, text_to_symbols
from stoicheia_spacy.restore.kneser_ney import load_kn
from stoicheia_spacy.restore.lexicon import Vocabulary, word_features
from stoicheia_spacy.restore.settings import RestorerSettings
from stoicheia_spacy.restore.widths import WidthPrior

FEATURES = ("fwd", "rev", "ifwd", "irev", "ctx", "ldocs", "ictx", "lidocs", "oov", "known")
GRID = {
    "rev": (0.25, 0.5, 1.0, 1.5, 2.0, 3.0),
    "ifwd": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6, 2.0, 3.0),
    "irev": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6, 2.0, 3.0),
    "ctx": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6),
    "ldocs": (0.0, 1.0, 2.0, 4.0, 8.0, 16.0),
    "ictx": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6, 2.4, 3.2),
    "lidocs": (0.0, 1.0, 2.0, 4.0, 8.0, 16.0),
    "oov": (0.0, -0.5, -1.0, -2.0, -4.0, -8.0, -16.0),
    "known": (0.0, 0.5, 1.0, 2.0, 4.0),
}
PASSES = 3
MAX_LETTERS = 10
#: hidden widths: :data:`GRID` and the weight of the text's characters (the ranking's whole width term)
HIDDEN_GRID = {**GRID, "width": (-3.0, -2.0, -1.5, -1.0, -0.7, -0.4, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)}
#: the n-gram pair arm's grid (``ngram8_pair``): both 8-gram pairs' scores, searched exhaustively
PAIR_GRID = {
    "rev": (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0),
    "ifwd": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6, 2.0, 3.0, 4.0, 6.0),
    "irev": (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6, 2.0, 3.0, 4.0, 6.0),
}


def gap_rows(index: ParallelIndex, insc: ParallelIndex, lm, ilm, vocab: Vocabulary, records: list[dict],
             hidden: bool = False) -> dict:
    """Per gap: the union's texts, their feature matrix (:data:`FEATURES`; ``hidden``: the gaps'
    widths hidden, every width 1…:data:`MAX_LETTERS` from both beams and both indexes, and a last
    column, the text's characters), CER and rightness, and which candidates Run 13's arm had (its
    beam and the papyri index's extras)."""
    t0 = time.process_time()
    queries = [query(r, "hidden" if hidden else "known", 2) for r in records]
    widths_of = (lambda L: range(1, MAX_LETTERS + 1)) if hidden else (lambda L: L)
    beams = kn_restore(lm, queries, beam=20, far=10, max_letters=MAX_LETTERS)
    ibeams = kn_restore(ilm, queries, beam=20, far=10, max_letters=MAX_LETTERS)
    rows, excluded = [], {}
    for r, q, beam, ibeam in zip(records, queries, beams, ibeams, strict=True):
        s, L = r["start"], r["L"]
        if r["id"] not in excluded:
            lost = lost_letters(r["text"])
            excluded[r["id"]] = (leave_out(index, lost, r["id"], min_letters=0),
                                 leave_out(insc, lost, r["id"], min_letters=0))
        ex, iex = excluded[r["id"]]
        left, right = lost_letters(r["text"][:s]), lost_letters(r["text"][s + L:])
        before = s > 0 and not r["text"][s - 1].isspace()
        after = s + L < len(r["text"]) and not r["text"][s + L].isspace()
        feats = infgram_features(*occurrences(index, left, right, widths_of(L), space_before=before,
                                              space_after=after, exclude=ex))
        ifeats = infgram_features(*occurrences(insc, left, right, widths_of(L), space_before=before,
                                               space_after=after, exclude=iex))
        if hidden:  # the restorer's keys: folded texts with the final sigma (domain_sources.with_domain_sources)
            feats = {fold(final_sigma(k, not after)): v for k, v in feats.items()}
            ifeats = {fold(final_sigma(k, not after)): v for k, v in ifeats.items()}
        table: dict[str, str] = {}
        run13: set[str] = set()
        for c in beam:
            table.setdefault(fold(c.text), c.text)
            run13.add(fold(c.text))
        extra = [x for x in sorted(feats, key=lambda x: (-feats[x].context, -feats[x].docs, -feats[x].occurrences, x))
                 if x not in run13][:EXTRA]
        for x in extra:
            table.setdefault(x, final_sigma(x, not after) if hidden else x)
            run13.add(x)
        for c in ibeam:
            table.setdefault(fold(c.text), c.text)
        iextra = [x for x in sorted(ifeats, key=lambda x: (-ifeats[x].context, -ifeats[x].docs, -ifeats[x].occurrences, x))
                  if x not in table][:EXTRA]
        for x in iextra:
            table.setdefault(x, final_sigma(x, not after) if hidden else x)
        keys = list(table)
        texts = [table[k] for k in keys]
        lsym, rsym = gap_symbols(q)
        syms = [text_to_symbols(x) for x in texts]
        fwd, rev = score_texts(lm, lsym, rsym, syms, 10)
        ifwd, irev = score_texts(ilm, lsym, rsym, syms, 10)
        words = [word_features(vocab, r["text"], s, L, x) for x in texts]
        F = np.zeros((len(keys), len(FEATURES) + int(hidden)))
        for i, k in enumerate(keys):
            f, g = feats.get(k), ifeats.get(k)
            F[i, : len(FEATURES)] = (fwd[i], rev[i], ifwd[i], irev[i], f.context if f else 0,
                                     math.log1p(f.docs) if f else 0.0, g.context if g else 0,
                                     math.log1p(g.docs) if g else 0.0, words[i][0], words[i][1])
            if hidden:
                F[i, -1] = len(texts[i])
        gold = bare(r["gold"])
        extras = {"left": left, "right": right, "exclude": ex} if hidden else {}
        rows.append({**extras, "L": L, "texts": texts, "F": F, "cer": np.array([ours_cer(x, r["gold"]) for x in texts]),
                     "ok": np.array([bare(x) == gold for x in texts]), "run13": np.array([k in run13 for k in keys]),
                     "beam": np.array([k in {fold(c.text) for c in beam} for k in keys]),
                     "pair": np.array([k in {fold(c.text) for c in (*beam, *ibeam)} for k in keys])})
    return {"rows": rows, "cpu_s_per_gap": (time.process_time() - t0) / max(1, len(records))}


def weight_vector(w: dict[str, float], n: int = len(FEATURES)) -> np.ndarray:
    """``w`` over the first ``n`` features of :data:`FEATURES` and ``width`` (hidden widths: ``n`` 11)."""
    return np.array([1.0 if f == "fwd" else float(w.get(f, 0.0)) for f in (*FEATURES, "width")[:n]])


def ncols(rows: list[dict]) -> int:
    return int(rows[0]["F"].shape[1]) if rows else len(FEATURES)


def order(row: dict, w: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    key = row["F"] @ w
    if mask is not None:
        key = np.where(mask, key, -np.inf)
    idx = np.argsort(-key, kind="stable")
    return idx if mask is None else idx[: int(mask.sum())]


def quick(rows: list[dict], w: np.ndarray, restrict: str | None = None) -> tuple[float, float]:
    """Dev CER and top-1 of the union (or its ``restrict`` candidates) ranked by ``w`` (for the fit;
    the reported figures are :func:`score`'s)."""
    tops = [int(np.argmax(np.where(x[restrict], x["F"] @ w, -np.inf) if restrict else x["F"] @ w)) for x in rows]
    return (float(np.mean([x["cer"][t] for x, t in zip(rows, tops, strict=True)])),
            float(np.mean([x["ok"][t] for x, t in zip(rows, tops, strict=True)])))


def fit_bucket(rows: list[dict], start: dict[str, float]) -> dict[str, float]:
    """Coordinate ascent over :data:`GRID` (hidden widths: :data:`HIDDEN_GRID`) from ``start`` (module doc)."""
    n = ncols(rows)
    grid = HIDDEN_GRID if n > len(FEATURES) else GRID
    w = {f: float(start.get(f, 1.0 if f == "rev" else 0.0)) for f in grid}
    best = quick(rows, weight_vector(w, n))
    for _ in range(PASSES):
        moved = False
        for f, values in grid.items():
            for v in sorted(values, key=abs):
                trial = {**w, f: v}
                c, t1 = quick(rows, weight_vector(trial, n))
                if (round(c, 9), -round(t1, 9)) < (round(best[0], 9), -round(best[1], 9)):
                    best, w, moved = (c, t1), trial, True
        if not moved:
            break
    return w


def fit_risk(rows: list[dict], start: dict[str, float], l2: float = 1e-3) -> dict[str, float]:
    """The weights minimising the expected CER of the softmax over each gap's union (``fwd``'s
    weight free, then divided out), plus ``l2`` · |w|², from ``start`` (L-BFGS); the smooth
    counterpart of :func:`fit_bucket`."""
    from scipy.optimize import minimize

    Fs = [x["F"] for x in rows]
    cers = [x["cer"] for x in rows]
    w0 = weight_vector({f: float(start.get(f, 1.0 if f == "rev" else 0.0)) for f in GRID})

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros_like(w)
        for F, c in zip(Fs, cers, strict=True):
            s = F @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            r = float(p @ c)
            total += r
            grad += F.T @ (p * (c - r))
        n = max(1, len(Fs))
        return total / n + l2 * float(w @ w), grad / n + 2 * l2 * w

    res = minimize(objective, w0, jac=True, method="L-BFGS-B", options={"maxiter": 300})
    w = res.x / res.x[0] if res.x[0] > 0 else w0
    return {f: float(v) for f, v in zip(FEATURES, w, strict=True) if f != "fwd"}


def fit_pair(rows: list[dict], start: dict[str, float] | None = None) -> dict[str, float]:
    """The n-gram pair arm's weights (``rev``, ``ifwd``, ``irev``; ``fwd`` 1, nothing else) over
    every point of :data:`PAIR_GRID`, each gap ranking only the two 8-grams' own beams (best CER,
    then top-1; ties to the smaller weights)."""
    best: tuple | None = None
    n = ncols(rows)
    grid = {**PAIR_GRID, "width": HIDDEN_GRID["width"]} if n > len(FEATURES) else PAIR_GRID
    for values in itertools.product(*grid.values()):
        w = dict(zip(grid, values, strict=True))
        c, t1 = quick(rows, weight_vector(w, n), "pair")
        key = (round(c, 9), -round(t1, 9), w["ifwd"] + w["irev"], abs(w["rev"] - 1.0), abs(w.get("width", 0.0)))
        if best is None or key < best[0]:
            best = (key, w)
    assert best is not None
    return best[1]


FIT = {"grid": fit_bucket, "risk": fit_risk, "pair": fit_pair}


def fit(records: list[dict], rows: list[dict], start: dict[str, dict[str, float]],
        method: str = "grid") -> dict[str, dict[str, float]]:
    """Weights per width bucket of the records, and ``default`` fitted on them all."""
    out = {}
    for name in [*sorted({width_bucket((r["L"],)) for r in records}), "default"]:
        sel = [x for r, x in zip(records, rows, strict=True) if name == "default" or width_bucket((r["L"],)) == name]
        out[name] = FIT[method](sel, start.get(name, start.get("default", {})))
    return out


def run13_weights(path: Path) -> dict[str, dict[str, float]]:
    """Run 13's fitted ``[rev, a, b]`` per bucket as feature weights."""
    table = json.loads(path.read_text(encoding="utf-8"))["weights"]
    return {k: {"rev": v[0], "ctx": v[1], "ldocs": v[2]} for k, v in table.items()}


def bucket_of(record: dict, row: dict) -> str:
    """The record's width bucket (``unknown`` where its row was decoded with the width hidden)."""
    return "unknown" if row["F"].shape[1] > len(FEATURES) else width_bucket((record["L"],))


def arm_tops(records: list[dict], rows: list[dict], weights: dict, restrict: str | None = None) -> list[list[str]]:
    out = []
    for r, x in zip(records, rows, strict=True):
        w = weights.get(bucket_of(r, x), weights["default"])
        idx = order(x, weight_vector(w, x["F"].shape[1]), x[restrict] if restrict else None)[:20]
        out.append([x["texts"][i] for i in idx])
    return out


def evaluate(records: list[dict], rows: list[dict], arms_w: dict[str, tuple[dict, str | None]],
             main: str = "run14", more: dict[str, list[list[str]]] | None = None) -> dict:
    """Every arm's CER / top-1 / top-20 (``more``: arms given by their ranked texts) and McNemar
    on top-1 of ``main`` against each other arm."""
    tops = {name: arm_tops(records, rows, w, restrict) for name, (w, restrict) in arms_w.items()}
    tops.update(more or {})
    out: dict = {name: score(records, t) for name, t in tops.items()}
    ok = {name: correct_top1(records, t) for name, t in tops.items()}
    out["mcnemar_top1"] = {}
    for other in [a for a in tops if a != main]:
        mc = mcnemar_exact(ok[main], ok[other])
        out["mcnemar_top1"][f"{main}_vs_{other}"] = {f"{main}_only": mc.a_only, "other_only": mc.b_only, "p": mc.pvalue}
    out["gold_in_union_share"] = 100 * float(np.mean([x["ok"].any() for x in rows]))
    out["gold_in_run13_candidates_share"] = 100 * float(np.mean([(x["ok"] & x["run13"]).any() for x in rows]))
    return out


def calibration(dev: list[dict], dev_rows: list[dict], test: list[dict] | None, test_rows: list[dict] | None,
                weights: dict) -> dict:
    """``infgram_eval.fit_calibration`` on the dev gaps' Run 14 ranking; ECE and the confident share on test."""
    def table(records: list[dict], rows: list[dict]) -> tuple[list, np.ndarray, list]:
        keys, ok, buckets = [], [], []
        for r, x in zip(records, rows, strict=True):
            b = width_bucket((r["L"],))
            key = x["F"] @ weight_vector(weights.get(b, weights["default"]))
            idx = np.argsort(-key, kind="stable")[:20]
            keys.append(key[idx])
            ok.append(bool(x["ok"][idx[0]]))
            buckets.append(b)
        return keys, np.array(ok), buckets

    return fit_calibration(table, dev, dev_rows, test, test_rows)


def slices(insc: ParallelIndex, records: list[dict], rows: list[dict], arms_w: dict) -> dict:
    """The arms on slices of the gaps: by collection (IIP's Zoora tombstones apart: a third of the
    gaps, one formula) and by the document's largest share of 12-grams found in one training
    inscription (near-duplicates of a training text: share >= 0.5)."""
    share: dict[str, float] = {}
    for r in records:
        if r["id"] not in share:
            counts, _, total = doc_counts(insc, lost_letters(r["text"].replace("?", "-")))
            share[r["id"]] = max(counts.values()) / total if counts and total else 0.0
    groups = {"iospe": lambda r: r["id"].startswith("iospe:"),
              "iip_zoora": lambda r: r["id"].startswith("iip:zoor"),
              "iip_other": lambda r: r["id"].startswith("iip:") and not r["id"].startswith("iip:zoor"),
              "train_share_below_0.5": lambda r: share[r["id"]] < 0.5,
              "train_share_0.5_or_more": lambda r: share[r["id"]] >= 0.5}
    first = {i for L in range(1, 11) for i in [j for j, r in enumerate(records) if r["L"] == L][:15]}
    out = {}
    for name, keep in [*groups.items(), ("first_15_per_L", None)]:  # the last: Run 12's 150 gaps of the split
        sel = sorted(first) if keep is None else [i for i, r in enumerate(records) if keep(r)]
        if sel:
            ev = evaluate([records[i] for i in sel], [rows[i] for i in sel], arms_w)
            out[name] = {"gaps": len(sel), **{a: ev[a]["overall"] for a in arms_w},
                         "mcnemar_top1": ev["mcnemar_top1"]}
    return out


def settings_tables(weights: dict[str, dict[str, float]]) -> dict[str, dict[str, list[float]]]:
    """The fitted weights as the restorer's settings tables of the inscription domain:
    ``kn_domain_weights`` ``[backbone 0, fwd 1, rev, length 0]``, ``infgram_weights`` ``[ctx, ldocs]``
    and ``domain_source_weights`` ``[ifwd, irev, ictx, lidocs, oov, known]``."""
    r = lambda x: round(float(x), 4)  # noqa: E731
    return {"kn_domain_weights": {b: [0.0, 1.0, r(w["rev"]), 0.0] for b, w in weights.items()},
            "infgram_weights": {b: [r(w["ctx"]), r(w["ldocs"])] for b, w in weights.items()},
            "domain_source_weights": {b: [r(w[k]) for k in ("ifwd", "irev", "ictx", "lidocs", "oov", "known")]
                                      for b, w in weights.items()}}


def settings_block(config: Path) -> dict:
    """The restorer's settings block of ``config`` (uninterpolated, without its ``@misc``)."""
    block = dict(Config().from_disk(config, interpolate=False)["components"]["stoicheia_restorer"]["settings"])
    block.pop("@misc", None)
    return block


def combined_restore(records: list[dict], c, src, index: ParallelIndex, lm, mode: str,
                     temps: dict[str, float]) -> tuple[list, float, float]:
    """``restore_combined`` on ``records`` (``query(r, mode, 2)``, the inscription domain, each gap's
    own document left out of ``index`` and of the domain sources ``src``): each gap's candidates, the
    CPU seconds a gap of building the queries and evidence, and of ``restore_combined`` itself."""
    n = max(1, len(records))
    t0 = time.process_time()
    queries = [query(r, mode, 2) for r in records]
    evidence = []
    for r in records:
        lost = lost_letters(r["text"])
        evidence.append(Evidence(index, (c.infgram_weights or {})["inscription"], leave_out(index, lost, r["id"], min_letters=0),
                                 domain=dataclasses.replace(src, exclude=leave_out(src.index, lost, r["id"], min_letters=0))))
    t1 = time.process_time()
    found = restore_combined(None, queries, c, lm, prior=WidthPrior(c.rank, float(c.length_bonus), tuple(c.width_log_prior)),
                             temperature=temps, domains=["inscription"] * len(records), evidence=evidence)
    return found, (t1 - t0) / n, (time.process_time() - t1) / n


def restorer_check(records: list[dict], tops: list[list[str]], config: Path, sources: Path,
                   index: ParallelIndex, lm) -> dict:
    """The restorer's own code path (``restore_combined`` with :class:`Evidence` and
    :class:`DomainSources`, the settings of ``config``) on ``records``: its CER / top-1 / top-20
    and how often its top-1 agrees with this script's (``tops``)."""
    c = RestorerSettings.from_dict(settings_block(config))
    src = load_domain_sources(sources, (c.domain_source_weights or {})["inscription"])
    temps = {"default": float(c.temperature), **dict(c.temperatures or {})}
    found, prep, run = combined_restore(records, c, src, index, lm, "known", temps)
    cpu = prep + run
    ours = [[x.text for x in cs] for cs in found]
    agree = float(np.mean([bool(a) and bool(b) and bare(a[0]) == bare(b[0]) for a, b in zip(ours, tops, strict=True)]))
    return {"gaps": len(records), "config": str(config), "restorer": score(records, ours)["overall"],
            "script": score(records, tops)["overall"], "top1_agreement": 100 * agree, "cpu_s_per_gap": cpu}


def ablations(weights: dict, drop: tuple[str, ...]) -> dict:
    return {b: {k: (0.0 if k in drop else v) for k, v in w.items()} for b, w in weights.items()}


#: today's default for a hidden inscription gap (config: kn_domain_weights.inscription.default,
#: length_bonus; no index candidates; its top 20 reordered by the parallels rerank)
HIDDEN_BEFORE = {"rev": 1.0, "width": -0.7, "rerank": 8.0}
LENGTH_BONUS = -0.7


def hidden_settings_tables(w: dict[str, float]) -> dict[str, list[float]]:
    """The ``unknown`` bucket's rows of the inscription domain's settings tables (the kn length
    weight less the config's ``length_bonus``, which the ranking adds back)."""
    r = lambda x: round(float(x), 4)  # noqa: E731
    return {"kn_domain_weights": [0.0, 1.0, r(w["rev"]), r(w["width"] - LENGTH_BONUS)],
            "infgram_weights": [r(w["ctx"]), r(w["ldocs"])],
            "domain_source_weights": [r(w[k]) for k in ("ifwd", "irev", "ictx", "lidocs", "oov", "known")]}


def hidden_keys(row: dict, w: dict[str, float], restrict: str | None = None, width: bool = True) -> np.ndarray:
    v = weight_vector(w if width else {**w, "width": 0.0}, row["F"].shape[1])
    key = row["F"] @ v
    return np.where(row[restrict], key, -np.inf) if restrict else key


def before_hidden(index: ParallelIndex, rows: list[dict]) -> list[list[str]]:
    """Today's default at hidden widths: the 8-gram's beam by ``fwd + rev - 0.7 w``, its top 20
    reordered by ``score + 8 log(1 + attested)`` (the raw score, without the width term)."""
    w = {"rev": HIDDEN_BEFORE["rev"], "width": HIDDEN_BEFORE["width"]}
    tops, scores = [], []
    for x in rows:
        idx = order(x, weight_vector(w, x["F"].shape[1]), x["beam"])[:20]
        raw = hidden_keys(x, w, width=False)
        tops.append([x["texts"][i] for i in idx])
        scores.append([float(raw[i]) for i in idx])
    return reranked(with_counts(index, rows, tops, scores), HIDDEN_BEFORE["rerank"])


def hidden_calibration(dev_rows: list[dict], w: dict, test_rows: list[dict] | None) -> dict:
    """The ``unknown`` bucket's temperature and Platt confidence fitted on the dev gaps' keys
    (the top 20, width term included, as the restorer's softmax); ECE on dev and test."""
    def table(rows: list[dict]) -> tuple[list[np.ndarray], np.ndarray]:
        keys, ok = [], []
        for x in rows:
            k = hidden_keys(x, w)
            idx = np.argsort(-k, kind="stable")[:20]
            keys.append(k[idx])
            ok.append(bool(x["ok"][idx[0]]))
        return keys, np.array(ok)

    keys, ok = table(dev_rows)
    temp = fit_temperatures(keys, [bool(x) for x in ok], ["unknown"] * len(keys))["unknown"]
    probs = np.array([top_probability(k, temp) for k in keys])
    slope, bias = fit_confidence(probs, ok)
    out = {"temperature": temp, "confidence_slope": slope, "confidence_bias": bias,
           "dev_ece": ece(np.asarray(top_confidence(probs, slope, bias)), ok.astype(float))}
    if test_rows is not None:
        tk, tok = table(test_rows)
        tp = np.array([top_probability(k, temp) for k in tk])
        out["test_ece"] = ece(np.asarray(top_confidence(tp, slope, bias)), tok.astype(float))
    return out


def hidden_restorer_check(records: list[dict], tops: list[list[str]], config: Path, sources: Path,
                          index: ParallelIndex, lm, w: dict, cal: dict, doc_gaps: int = 50) -> dict:
    """The restorer's code path (``restore_combined``, the settings of ``config`` with the
    ``unknown`` rows of :func:`hidden_settings_tables` and ``cal``'s temperature) on hidden-width
    ``records``: CER / top-1 / top-20, CPU seconds a gap and per document of ``doc_gaps``, and how
    often its top-1 is this script's (``tops``)."""
    block = settings_block(config)
    rows = hidden_settings_tables(w)
    for table in ("kn_domain_weights", "infgram_weights", "domain_source_weights"):
        block[table] = {**dict(block[table]), "inscription": {**dict(block[table]["inscription"]), "unknown": rows[table]}}
    c = RestorerSettings.from_dict(block)
    src = load_domain_sources(sources, (c.domain_source_weights or {})["inscription"])
    temps = {"default": float(c.temperature), **dict(c.temperatures or {}), "unknown": float(cal["temperature"])}
    found, _, cpu = combined_restore(records, c, src, index, lm, "hidden", temps)
    ours = [[x.text for x in cs] for cs in found]
    agree = float(np.mean([bool(a) and bool(b) and bare(a[0]) == bare(b[0]) for a, b in zip(ours, tops, strict=True)]))
    return {"gaps": len(records), "config": str(config), "unknown_rows": rows, "restorer": score(records, ours)["overall"],
            "script": score(records, tops)["overall"], "top1_agreement": 100 * agree, "cpu_s_per_gap": cpu,
            "cpu_s_per_document": doc_gaps * cpu, "document_gaps": doc_gaps}


def hidden_run(a: argparse.Namespace, index: ParallelIndex, insc: ParallelIndex, lm, ilm, vocab: Vocabulary,
               cache: Path | None, out: dict) -> None:
    """``--hidden``: every gap decoded with its width hidden (module doc of Run 16): the union of
    every width scored with :data:`HIDDEN_GRID`'s weights fitted on dev (coordinate ascent from the
    known-width ``default`` weights and the config's width term), against today's default, the
    ``ngram8`` arm at the config's width term and the pair arm with its own width weight."""
    dev = load_split(Path(a.samples), "dev", a.dev_per_length)
    fd = cached(cache / f"hidden_dev_{a.dev_per_length}.pkl" if cache else None,
                lambda: gap_rows(index, insc, lm, ilm, vocab, dev, hidden=True))
    known = json.loads(Path(a.known).read_text(encoding="utf-8"))
    start = {**known["weights"]["default"], "width": HIDDEN_BEFORE["width"]}

    def fit_h(rows: list[dict]) -> tuple[dict, dict]:
        w = fit_bucket(rows, start)
        p = fit_pair(rows)
        return {"unknown": w, "default": w}, {"unknown": p, "default": p}

    wt, pair = fit_h(fd["rows"])
    ngram8 = {"default": {"rev": HIDDEN_BEFORE["rev"], "width": HIDDEN_BEFORE["width"]}}
    known_default = {"default": start}  # the known widths' default weights, the config's width term

    def arms(w: dict, p: dict) -> dict:
        return {"after": (w, None), "ngram8": (ngram8, "beam"), "ngram8_pair": (p, "pair"),
                "known_default_weights": (known_default, None)}

    def run(records: list[dict], rows: list[dict], w: dict, p: dict, rerank: bool) -> dict:
        more = {"before": before_hidden(index, rows)} if rerank else None
        ev = evaluate(records, rows, arms(w, p), main="after", more=more)
        tops = arm_tops(records, rows, w)
        pred = np.array([len(t[0]) if t else 0 for t in tops])
        gold = np.array([r["L"] for r in records])
        ev["after_width_right_share"] = 100 * float((pred == gold).mean())
        ev["gold_in_ngram_beam_share"] = 100 * float(np.mean([(x["ok"] & x["beam"]).any() for x in rows]))
        return ev

    out.update({"mode": "hidden", "hidden_grid": {k: list(v) for k, v in HIDDEN_GRID.items()}, "weights": wt,
                "pair_weights": pair, "start": start, "before": HIDDEN_BEFORE, "known": a.known,
                "settings_tables_unknown": hidden_settings_tables(wt["unknown"])})
    out["dev"] = {"gaps": len(dev), **run(dev, fd["rows"], wt, pair, True), "cpu_s_per_gap": fd["cpu_s_per_gap"]}
    halves = []
    for k in (0, 1):
        fi = [i for i in range(len(dev)) if i % 2 == k]
        hi = [i for i in range(len(dev)) if i % 2 != k]
        wk, pk = fit_h([fd["rows"][i] for i in fi])
        ev = run([dev[i] for i in hi], [fd["rows"][i] for i in hi], wk, pk, False)
        halves.append({"fitted_on": f"dev gaps i % 2 == {k}", "weights": wk["unknown"], "pair_weights": pk["unknown"],
                       **{arm: ev[arm]["overall"] for arm in arms(wk, pk)}, "mcnemar_top1": ev["mcnemar_top1"]})
    out["dev"]["held_out_halves"] = halves
    k_dev = known["dev"]["run14"]["overall"]["cer"]
    out["dev"]["ratio_to_known"] = {arm: out["dev"][arm]["overall"]["cer"] / k_dev
                                    for arm in out["dev"] if isinstance(out["dev"][arm], dict) and "overall" in out["dev"][arm]}
    if a.no_test:
        out["calibration"] = hidden_calibration(fd["rows"], wt["unknown"], None)
        return
    test = load_split(Path(a.samples), "test", a.test_per_length)
    ft = cached(cache / f"hidden_test_{a.test_per_length}.pkl" if cache else None,
                lambda: gap_rows(index, insc, lm, ilm, vocab, test, hidden=True))
    out["test"] = {"gaps": len(test), **run(test, ft["rows"], wt, pair, True), "cpu_s_per_gap": ft["cpu_s_per_gap"]}
    k_test = known["test"]["run14"]["overall"]["cer"]
    out["test"]["known_cer"] = {"source": a.known, "arm": "test.run14.overall", "cer": k_test, "dev_cer": k_dev}
    out["test"]["ratio_to_known"] = {arm: out["test"][arm]["overall"]["cer"] / k_test
                                     for arm in out["test"] if isinstance(out["test"][arm], dict) and "overall" in out["test"][arm]}
    out["calibration"] = hidden_calibration(fd["rows"], wt["unknown"], ft["rows"])
    if a.check_config:
        n = a.pipeline_gaps
        out["test"]["restorer_check"] = hidden_restorer_check(
            test[:n], arm_tops(test[:n], ft["rows"][:n], wt), Path(a.check_config), Path(a.sources), index, lm,
            wt["unknown"], out["calibration"])


def done_when(split: dict, default: str = "run14") -> dict:
    """Issue 43's done-when of ``default`` against each n-gram arm of ``split`` (:func:`evaluate`'s
    output): CER at least 5 points below, top-20 at least 5 above, McNemar p < 0.01 on top-1."""
    out = {}
    d = split[default]["overall"]
    for arm in ("ngram8", "ngram8_pair"):
        o, mc = split[arm]["overall"], split["mcnemar_top1"][f"{default}_vs_{arm}"]
        cer, top20 = o["cer"] - d["cer"], d["top20"] - o["top20"]
        out[arm] = {"cer_below": cer, "top20_above": top20, "top1_above": d["top1"] - o["top1"],
                    "mcnemar_p": mc["p"], "met": bool(cer >= 5 and top20 >= 5 and mc["p"] < 0.01 and mc["run14_only"] > mc["other_only"])}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="insc_eval.py")
    ap.add_argument("--index", required=True, help="the parallels index (papyri, Perseus)")
    ap.add_argument("--kn", required=True, help="the default's 8-gram pair")
    ap.add_argument("--insc-index", required=True)
    ap.add_argument("--insc-kn", required=True)
    ap.add_argument("--samples", default="samples/inscriptions")
    ap.add_argument("--run13", required=True, help="Run 13's metrics JSON (its fitted weights)")
    ap.add_argument("--dev-per-length", type=int, default=None)
    ap.add_argument("--test-per-length", type=int, default=None)
    ap.add_argument("--no-test", action="store_true", help="fit and score on dev only")
    ap.add_argument("--fit", choices=tuple(FIT), default="grid",
                    help="grid: coordinate ascent on dev CER; risk: the expected CER minimised (L-BFGS)")
    ap.add_argument("--cache", default=None, help="folder for the per-gap features")
    ap.add_argument("--check-config", default=None,
                    help="a pipeline config.cfg with the fitted tables: also run the restorer's code path on the test gaps")
    ap.add_argument("--sources", default="training/domains/inscription", help="the domain's sources folder (--check-config)")
    ap.add_argument("--hidden", action="store_true",
                    help="decode every gap with its width hidden (Run 16), fit the unknown bucket on dev")
    ap.add_argument("--known", default=None, help="--hidden: the known-width metrics JSON (its weights and CER)")
    ap.add_argument("--pipeline-gaps", type=int, default=200, help="--hidden: test gaps through the restorer's code path")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0 = time.process_time()
    index, insc = ParallelIndex(a.index), ParallelIndex(a.insc_index)
    lm, ilm = load_kn(a.kn), load_kn(a.insc_kn)
    t = time.process_time()
    vocab = Vocabulary.from_indexes([index, insc])
    vocab_s = time.process_time() - t
    r13 = run13_weights(Path(a.run13))
    cache = Path(a.cache) if a.cache else None
    if a.hidden:
        out_h: dict = {"command": "python scripts/insc_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                       "features": (*FEATURES, "width"), "index": index.info, "insc_index": insc.info}
        hidden_run(a, index, insc, lm, ilm, vocab, cache, out_h)
        out_h["cpu_s"] = time.process_time() - cpu0
        Path(a.out).write_text(json.dumps(out_h, indent=1, ensure_ascii=False), encoding="utf-8")
        print(json.dumps({k: ({m: (v["overall"] if isinstance(v, dict) and "overall" in v else v)
                               for m, v in out_h[k].items()} if k in ("dev", "test") else out_h[k])
                          for k in ("weights", "pair_weights", "dev", "test", "calibration") if k in out_h},
                         indent=1, ensure_ascii=False))
        return 0
    dev = load_split(Path(a.samples), "dev", a.dev_per_length)
    fd = cached(cache / f"dev_{a.dev_per_length}.pkl" if cache else None,
                lambda: gap_rows(index, insc, lm, ilm, vocab, dev))
    weights = fit(dev, fd["rows"], r13, a.fit)
    pair = fit(dev, fd["rows"], {}, "pair")  # the strongest pure n-gram arm: both 8-gram pairs, their beams
    ngram8 = {"default": {"rev": 1.0}}
    arms = {"run14": (weights, None), "ngram8": (ngram8, "beam"), "ngram8_pair": (pair, "pair"), "run13": (r13, "run13"),
            "run14_no_words": (ablations(weights, ("oov", "known")), None),
            "run14_no_insc_lm": (ablations(weights, ("ifwd", "irev")), None),
            "run14_no_insc_index": (ablations(weights, ("ictx", "lidocs")), None)}
    out: dict = {"command": "python scripts/insc_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "features": FEATURES, "grid": {k: list(v) for k, v in GRID.items()}, "weights": weights,
                 "pair_grid": {k: list(v) for k, v in PAIR_GRID.items()}, "pair_weights": pair,
                 "settings_tables": settings_tables(weights), "run13_weights": r13, "index": index.info, "insc_index": insc.info,
                 "vocabulary_words": len(vocab), "vocabulary_cpu_s": vocab_s,
                 "dev": {"gaps": len(dev), **evaluate(dev, fd["rows"], arms), "cpu_s_per_gap": fd["cpu_s_per_gap"]}}
    halves = []  # the fit's honesty on dev: fitted on one half, scored on the other
    for k in (0, 1):
        fi = [i for i in range(len(dev)) if i % 2 == k]
        hi = [i for i in range(len(dev)) if i % 2 != k]
        wk = fit([dev[i] for i in fi], [fd["rows"][i] for i in fi], r13, a.fit)
        pk = fit([dev[i] for i in fi], [fd["rows"][i] for i in fi], {}, "pair")
        ev = evaluate([dev[i] for i in hi], [fd["rows"][i] for i in hi],
                      {"run14": (wk, None), "ngram8": (ngram8, "beam"), "ngram8_pair": (pk, "pair"), "run13": (r13, "run13")})
        halves.append({"fitted_on": f"dev gaps i % 2 == {k}", "weights": wk, "pair_weights": pk,
                       **{arm: ev[arm]["overall"] for arm in ("run14", "ngram8", "ngram8_pair", "run13")},
                       "mcnemar_top1": ev["mcnemar_top1"]})
    out["dev"]["held_out_halves"] = halves
    main_arms = {k: arms[k] for k in ("run14", "ngram8", "ngram8_pair", "run13")}
    out["dev"]["slices"] = slices(insc, dev, fd["rows"], main_arms)
    if not a.no_test:
        test = load_split(Path(a.samples), "test", a.test_per_length)
        ft = cached(cache / f"test_{a.test_per_length}.pkl" if cache else None,
                    lambda: gap_rows(index, insc, lm, ilm, vocab, test))
        out["test"] = {"gaps": len(test), **evaluate(test, ft["rows"], arms), "cpu_s_per_gap": ft["cpu_s_per_gap"],
                       "slices": slices(insc, test, ft["rows"], main_arms)}
        out["calibration"] = calibration(dev, fd["rows"], test, ft["rows"], weights)
        if a.check_config:
            out["test"]["restorer_check"] = restorer_check(test, arm_tops(test, ft["rows"], weights), Path(a.check_config),
                                                           Path(a.sources), index, lm)
    out["done_when"] = {split: done_when(out[split]) for split in ("dev", "test") if split in out}
    out["cpu_s"] = time.process_time() - cpu0
    Path(a.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    brief = {k: out[k] for k in ("weights", "dev", "test") if k in out}
    for split in ("dev", "test"):
        if split in brief:
            brief[split] = {k: (v["overall"] if isinstance(v, dict) and "overall" in v else v)
                            for k, v in brief[split].items()}
    print(json.dumps(brief, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
