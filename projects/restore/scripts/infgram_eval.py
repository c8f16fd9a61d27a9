"""Run 13: unbounded-context ("∞-gram") candidates and evidence from the parallels index (issue 43).

    python scripts/infgram_eval.py --index training/parallels --kn training/kn_lm8.npz \\
        --samples samples/fold_3 --domain papyrus --out infgram_papyri.json

For every frozen gap (known width) the 8-gram pair's two-sided beam (``kn_restore``, beam 20)
proposes candidates, and the parallels index proposes the letters it holds between the longest
matches of the gap's left and right context (``stoicheia_spacy.restore.infgram``; the sample's own
document and its duplicates left out); the union is scored by both n-gram directions and

    ``fwd + rev_w · rev + a · context + b · log(1 + docs)``

with ``context`` the best occurrence's left + right match (each capped at 16 letters) and ``docs``
the documents holding the candidate with 4 letters matched on each side. ``rev_w``, ``a``, ``b``
are fitted on the dev gaps per width bucket (best CER, then top-1; ties to the smaller weights)
and the test gaps are scored once with them, beside the ``ngram8`` arm (``fwd + rev``, its own
beam) and the shipped default of the domain where it needs no backbone (papyri: the default
config's ``kn_weights`` and the parallels rerank ``score + 8 · log(1 + attested)``): CER / top-1 /
top-20, McNemar on top-1, CPU seconds per gap. Per-gap features are cached (``--cache``) so the
grid is refitted without searching again.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from restore_eval import bare, correct_top1, load_split, query, score
from stoicheia_lab.scoring import mcnemar_exact

from stoicheia_spacy.parallels.index import ParallelIndex, letters_of
from stoicheia_spacy.parallels.search import attest, leave_out
from stoicheia_spacy.restore import width_bucket
from stoicheia_spacy.restore.calibration import (
    fit_confidence,
    fit_temperatures,
    fit_threshold,
    top_confidence,
    top_probability,
)
from stoicheia_spacy.restore.infgram import infgram_features, occurrences
from stoicheia_spacy.restore.kn_beam import gap_symbols, kn_restore, score_texts, text_to_symbols
from stoicheia_spacy.restore.kneser_ney import load_kn

_LOST = re.compile(r"[-?]")
REV = (0.5, 1.0, 1.5, 2.0)
A = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6)
B = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0)
EXTRA = 30  # ∞-gram candidates added to the n-gram's beam, best evidence first


def lost_letters(text: str) -> np.ndarray:
    return letters_of(_LOST.sub("\x00", text))


def fold(t: str) -> str:
    return t.replace("ς", "σ")


def default_weights(config: Path) -> dict[str, list[float]]:
    from thinc.api import Config

    cfg = Config().from_disk(config, interpolate=False)
    return {str(k): [float(x) for x in v]
            for k, v in dict(cfg["components"]["stoicheia_restorer"]["settings"]["kn_weights"]).items()}


def features(index: ParallelIndex, lm, records: list[dict], parallels: bool, dweights: dict) -> dict:
    """Per gap: the union's candidates with their n-gram scores and ∞-gram evidence, and (papyri)
    the parallels counts of the default's 20 candidates."""
    t0 = time.process_time()
    queries = [query(r, "known", 2) for r in records]
    beams = kn_restore(lm, queries, beam=20, far=10)
    decode_s = time.process_time() - t0
    inf_s = par_s = 0.0
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
        texts, lmt, rmt, docs = occurrences(index, left, right, L, space_before=before, space_after=after, exclude=ex)
        feats = infgram_features(texts, lmt, rmt, docs)
        table = {fold(c.text): [c.text, c.fwd, c.rev, True] for c in beam}
        extra = [x for x in sorted(feats, key=lambda x: (-feats[x].context, -feats[x].docs, -feats[x].occurrences, x))
                 if x not in table][:EXTRA]
        if extra:
            lsym, rsym = gap_symbols(q)
            fwd, rev = score_texts(lm, lsym, rsym, [text_to_symbols(x) for x in extra], 10)
            for x, f, b in zip(extra, fwd, rev, strict=True):
                table[x] = [x, float(f), float(b), False]
        cands = [{"text": v[0], "fwd": v[1], "rev": v[2], "beam": v[3],
                  "ctx": feats[k].context if k in feats else 0, "docs": feats[k].docs if k in feats else 0}
                 for k, v in table.items()]
        inf_s += time.process_time() - t
        row = {"L": L, "cands": cands}
        if parallels:
            t = time.process_time()
            w = dweights.get(width_bucket((L,)), dweights["default"])
            top = sorted([c for c in cands if c["beam"]], key=lambda c: -(w[1] * c["fwd"] + w[2] * c["rev"]))[:20]
            row["default"] = [(c["text"], w[1] * c["fwd"] + w[2] * c["rev"],
                               attest(index, left, letters_of(c["text"]), right, context=4, n=1, exclude=ex).attested)
                              for c in top]
            par_s += time.process_time() - t
        rows.append(row)
    n = max(1, len(records))
    return {"rows": rows, "decode_cpu_s_per_gap": decode_s / n, "infgram_cpu_s_per_gap": inf_s / n,
            "parallels_cpu_s_per_gap": par_s / n}


def ranked(row: dict, rev: float, a: float, b: float, union: bool = True) -> list[str]:
    cs = row["cands"] if union else [c for c in row["cands"] if c["beam"]]
    key = [c["fwd"] + rev * c["rev"] + a * c["ctx"] + b * math.log1p(c["docs"]) for c in cs]
    return [cs[i]["text"] for i in sorted(range(len(cs)), key=lambda i: -key[i])][:20]


def keyed(row: dict, rev: float, a: float, b: float) -> tuple[str, np.ndarray]:
    """The top candidate of the infgram arm and its top-20 scores, best first (the softmax's keys:
    one known width, so the width prior shifts them all alike)."""
    key = np.array([c["fwd"] + rev * c["rev"] + a * c["ctx"] + b * math.log1p(c["docs"]) for c in row["cands"]])
    order = np.argsort(-key, kind="stable")[:20]
    return row["cands"][int(order[0])]["text"], key[order]


def attested(index: ParallelIndex, records: list[dict], rows: list[dict], weights: dict) -> list[list[tuple[str, float, int]]]:
    """The infgram arm's 20 candidates per gap with their scores and the parallels rerank's
    attestation counts (4 letters a side, the default config's parallels block)."""
    out, excluded = [], {}
    for r, x in zip(records, rows, strict=True):
        s, L = r["start"], r["L"]
        if r["id"] not in excluded:
            excluded[r["id"]] = leave_out(index, lost_letters(r["text"]), r["id"], min_letters=0)
        left, right = lost_letters(r["text"][:s]), lost_letters(r["text"][s + L:])
        rev, a, b = weights.get(width_bucket((L,)), weights["default"])
        key = [c["fwd"] + rev * c["rev"] + a * c["ctx"] + b * math.log1p(c["docs"]) for c in x["cands"]]
        top = sorted(range(len(key)), key=lambda i: -key[i])[:20]
        out.append([(x["cands"][i]["text"], key[i],
                     attest(index, left, letters_of(x["cands"][i]["text"]), right, context=4, n=1,
                            exclude=excluded[r["id"]]).attested) for i in top])
    return out


def ece(c: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over ``bins`` equal-width bins."""
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(c, edges) - 1, 0, bins - 1)
    return float(sum(abs(c[idx == i].mean() - y[idx == i].mean()) * (idx == i).mean() for i in range(bins) if (idx == i).any()))


Table = Callable[[list[dict], list[dict]], tuple[list, np.ndarray, list]]


def fit_calibration(table: Table, dev: list[dict], dev_rows: list[dict], test: list[dict] | None,
                    test_rows: list[dict] | None) -> dict:
    """Temperatures and Platt confidence per width bucket and the ``confident`` threshold (90 %
    precision) fitted on the dev gaps' scores as ``table`` ranks them (top-20 score keys, top-1
    right, width bucket per gap); ECE and the confident gaps' precision on test."""

    keys, ok, buckets = table(dev, dev_rows)
    temps = fit_temperatures(keys, ok, buckets)
    probs = np.array([top_probability(k, temps.get(b, temps["default"])) for k, b in zip(keys, buckets, strict=True)])
    slopes, biases = {}, {}
    for b in sorted(set(buckets)):
        sel = np.array([x == b for x in buckets])
        slopes[b], biases[b] = fit_confidence(probs[sel], ok[sel])
    conf = np.array([top_confidence(p, slopes[b], biases[b]) for p, b in zip(probs, buckets, strict=True)])
    above = fit_threshold(conf, ok)
    out: dict = {"temperatures": temps, "confidence_slopes": slopes, "confidence_biases": biases,
                 "confident_above": above, "dev_ece": ece(conf, ok.astype(float))}
    if test is not None and test_rows is not None:
        tk, tok, tb = table(test, test_rows)
        tp = np.array([top_probability(k, temps.get(b, temps["default"])) for k, b in zip(tk, tb, strict=True)])
        tc = np.array([top_confidence(p, slopes.get(b, 1.0), biases.get(b, 0.0)) for p, b in zip(tp, tb, strict=True)])
        out["test_ece"] = ece(tc, tok.astype(float))
        out["test_ece_by_bucket"] = {b: ece(tc[np.array(tb) == b], tok[np.array(tb) == b].astype(float))
                                     for b in sorted(set(tb))}
        sel = tc >= above
        out["test_confident_share"] = 100 * float(sel.mean())
        out["test_confident_precision"] = 100 * float(tok[sel].mean()) if sel.any() else None
    return out


def calibration(dev: list[dict], dev_rows: list[dict], test: list[dict] | None, test_rows: list[dict] | None,
                weights: dict) -> dict:
    """:func:`fit_calibration` on the ∞-gram rescoring's ranking."""
    def table(records: list[dict], rows: list[dict]) -> tuple[list, np.ndarray, list]:
        keys, ok, buckets = [], [], []
        for r, x in zip(records, rows, strict=True):
            bucket = width_bucket((r["L"],))
            top, k = keyed(x, *weights.get(bucket, weights["default"]))
            keys.append(k)
            ok.append(bare(top) == bare(r["gold"]))
            buckets.append(bucket)
        return keys, np.array(ok), buckets

    return fit_calibration(table, dev, dev_rows, test, test_rows)


def ngram8(row: dict) -> list[str]:
    return ranked(row, 1.0, 0.0, 0.0, union=False)


def default_arm(row: dict) -> list[str]:
    d = row["default"]
    key = [s + 8.0 * math.log1p(k) for _, s, k in d]
    return [d[i][0] for i in sorted(range(len(d)), key=lambda i: -key[i])]


def fit(records: list[dict], rows: list[dict]) -> tuple[dict, list]:
    """Per width bucket (and ``default`` pooled): (rev, a, b) of the best dev CER, then top-1."""
    buckets = sorted({width_bucket((r["L"],)) for r in records})
    grid = []
    best: dict[str, list[float]] = {}
    for name in [*buckets, "default"]:
        sel = [i for i, r in enumerate(records) if name == "default" or width_bucket((r["L"],)) == name]
        recs = [records[i] for i in sel]
        results = []
        for rev, a, b in itertools.product(REV, A, B):
            o = score(recs, [ranked(rows[i], rev, a, b) for i in sel])["overall"]
            results.append((round(o["cer"], 9), -round(o["top1"], 9), a, b, abs(rev - 1.0), rev, o))
            grid.append({"bucket": name, "rev": rev, "a": a, "b": b, "cer": o["cer"], "top1": o["top1"],
                         "top20": o["top20"]})
        c = min(results, key=lambda x: x[:5])
        best[name] = [c[5], c[2], c[3]]
    return best, grid


def evaluate(records: list[dict], rows: list[dict], weights: dict, parallels: bool,
             counts: list | None = None) -> dict:
    def w(r: dict) -> list[float]:
        return weights.get(width_bucket((r["L"],)), weights["default"])

    arms = {"infgram": [ranked(x, *w(r)) for r, x in zip(records, rows, strict=True)],
            "ngram8": [ngram8(x) for x in rows],
            "union_ngram_only": [ranked(x, 1.0, 0.0, 0.0) for x in rows]}
    if parallels:
        arms["default"] = [default_arm(x) for x in rows]
    if counts is not None:
        arms["infgram_rerank"] = [default_arm({"default": c}) for c in counts]
    out: dict = {name: score(records, tops) for name, tops in arms.items()}
    ok = {name: correct_top1(records, tops) for name, tops in arms.items()}
    out["mcnemar_top1"] = {}
    for other in [a for a in arms if a != "infgram"]:
        mc = mcnemar_exact(ok["infgram"], ok[other])
        out["mcnemar_top1"][f"infgram_vs_{other}"] = {"infgram_only": mc.a_only, "other_only": mc.b_only, "p": mc.pvalue}
    out["gold_in_union_share"] = 100 * float(np.mean(
        [any(bare(c["text"]) == bare(r["gold"]) for c in x["cands"]) for r, x in zip(records, rows, strict=True)]))
    out["gold_in_ngram_beam_share"] = 100 * float(np.mean(
        [any(bare(c["text"]) == bare(r["gold"]) for c in x["cands"] if c["beam"]) for r, x in zip(records, rows, strict=True)]))
    return out


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="infgram_eval.py")
    ap.add_argument("--index", required=True)
    ap.add_argument("--kn", required=True)
    ap.add_argument("--samples", default="samples/fold_3")
    ap.add_argument("--domain", choices=("papyrus", "inscription"), default="papyrus")
    ap.add_argument("--config", default="../../assets/models/grc_stoicheia_doc_clean/config.cfg")
    ap.add_argument("--dev-per-length", type=int, default=None)
    ap.add_argument("--test-per-length", type=int, default=None)
    ap.add_argument("--no-test", action="store_true", help="fit and score on dev only")
    ap.add_argument("--rerank", action="store_true",
                    help="also score the infgram arm followed by the parallels rerank (score + 8 log(1 + attested))")
    ap.add_argument("--cache", default=None, help="folder for the per-gap features")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0 = time.process_time()
    index, lm = ParallelIndex(a.index), load_kn(a.kn)
    dweights = default_weights(Path(a.config))
    parallels = a.domain == "papyrus"
    dev = load_split(Path(a.samples), "dev", a.dev_per_length)
    cache = Path(a.cache) if a.cache else None
    tag = Path(a.samples).name
    fd = cached(cache / f"{tag}_dev_{a.dev_per_length}.pkl" if cache else None,
                lambda: features(index, lm, dev, parallels, dweights))
    weights, grid = fit(dev, fd["rows"])
    dc = cached(cache / f"{tag}_dev_{a.dev_per_length}_counts.pkl" if cache else None,
                lambda: attested(index, dev, fd["rows"], weights)) if a.rerank else None
    out = {"command": "python scripts/infgram_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "domain": a.domain, "index": index.info, "weights": weights,
           "weights_order": ["rev", "a (context letters)", "b (log(1 + docs))"],
           "dev": {"gaps": len(dev), **evaluate(dev, fd["rows"], weights, parallels, dc), "grid": grid,
                   **{k: v for k, v in fd.items() if k != "rows"}}}
    halves = []  # the fit's honesty on dev: fitted on one half of the dev gaps, scored on the other
    for k in (0, 1):
        fit_i = [i for i in range(len(dev)) if i % 2 == k]
        held = [i for i in range(len(dev)) if i % 2 != k]
        wk, _ = fit([dev[i] for i in fit_i], [fd["rows"][i] for i in fit_i])
        ev = evaluate([dev[i] for i in held], [fd["rows"][i] for i in held], wk, parallels)
        halves.append({"fitted_on": f"dev gaps i % 2 == {k}", "weights": wk,
                       **{arm: ev[arm]["overall"] for arm in ev if isinstance(ev[arm], dict) and "overall" in ev[arm]},
                       "mcnemar_top1": ev["mcnemar_top1"]})
    out["dev"]["held_out_halves"] = halves
    if not a.no_test:
        test = load_split(Path(a.samples), "test", a.test_per_length)
        ft = cached(cache / f"{tag}_test_{a.test_per_length}.pkl" if cache else None,
                    lambda: features(index, lm, test, parallels, dweights))
        tc = cached(cache / f"{tag}_test_{a.test_per_length}_counts.pkl" if cache else None,
                    lambda: attested(index, test, ft["rows"], weights)) if a.rerank else None
        out["test"] = {"gaps": len(test), **evaluate(test, ft["rows"], weights, parallels, tc),
                       **{k: v for k, v in ft.items() if k != "rows"}}
        out["calibration"] = calibration(dev, fd["rows"], test, ft["rows"], weights)
        # the first 30 test gaps per L: the subset of the hidden-width figures (metrics_run11_modes.json)
        sub = [i for L in range(1, 11) for i in [j for j, r in enumerate(test) if r["L"] == L][:30]]
        ev = evaluate([test[i] for i in sub], [ft["rows"][i] for i in sub], weights, parallels)
        out["test"]["first_30_per_L_known"] = {arm: ev[arm]["overall"] for arm in ev
                                              if isinstance(ev[arm], dict) and "overall" in ev[arm]}
    out["cpu_s"] = time.process_time() - cpu0
    Path(a.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    brief = {k: v for k, v in out.items() if k not in ("index",)}
    brief["dev"] = {k: v for k, v in out["dev"].items() if k != "grid"}
    print(json.dumps(brief, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
