"""Run 18: minimum-expected-CER choice of the first candidate (issue 43).

    python scripts/mbr_eval.py --cache results/insc16 --metrics metrics_run16_hidden_inscriptions.json \\
        --samples samples/inscriptions --mode hidden --out metrics_run18_mbr_inscriptions_hidden.json

The restorer ranks a gap's candidates by their combined score and puts the best first: the most
probable text. CER charges a wrong width heavily (a five-letter fill for a one-letter gap is
CER 4), so the text with the least *expected* CER under the candidates' posterior can be a
better first answer than the most probable one. Here each gap's best ``k`` candidates
(softmax of the shipped keys at temperature ``T``) are scored

    ``risk(j) = Σ_i p_i · lev(c_j, c_i) / len(c_i)``

and the least risky goes first; the others keep their order, so the top-20 set changes only when
the pick came from beyond it. ``T`` and ``k`` are fitted on the dev gaps (best CER, then top-1),
checked on held-out dev halves, and the test gaps scored once. The features are the cached rows
of ``insc_eval.py`` (``--mode hidden``: ``hidden_*.pkl``; ``known``: ``dev_*.pkl``) or
``hidden_eval.py`` (``--script hidden_eval``), ranked by the weights the shipped default uses
(``--metrics``: that run's JSON). McNemar on top-1 against the most probable first.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

sys.path.insert(0, str(Path(__file__).resolve().parent))
from insc_eval import FEATURES, bucket_of, weight_vector
from restore_eval import bare, load_split
from stoicheia_lab.scoring import mcnemar_exact

from stoicheia_spacy.restore import width_bucket

TEMPERATURES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)
KS = (1, 3, 5, 10, 20, 40)


def mbr_index(texts: list[str], keys: np.ndarray, temperature: float, k: int) -> np.ndarray:
    """The ranking of ``texts`` by ``keys`` with the least expected CER among the best ``k`` first."""
    idx = np.argsort(-keys, kind="stable")
    if k <= 1 or len(idx) < 2:
        return idx
    top = idx[:k]
    z = keys[top] / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    cands = [bare(texts[i]) for i in top]
    lengths = np.array([max(1, len(c)) for c in cands], dtype=float)
    dist = cdist(cands, cands, scorer=Levenshtein.distance, dtype=np.int32, workers=1).astype(float)
    risk = dist @ (p / lengths)  # risk[j] = Σ_i p_i · lev(c_j, c_i) / len(c_i)
    best = int(np.argmin(risk))
    return np.concatenate([[top[best]], np.delete(idx, best)])


def keys_of(records: list[dict], rows: list[dict], weights: dict) -> list[np.ndarray]:
    out = []
    for r, x in zip(records, rows, strict=True):
        w = weights.get(bucket_of(r, x), weights["default"])
        out.append(x["F"] @ weight_vector(w, x["F"].shape[1]))
    return out


def figures(rows: list[dict], orders: list[np.ndarray], records: list[dict]) -> dict:
    cer = np.array([x["cer"][o[0]] for x, o in zip(rows, orders, strict=True)])
    ok = np.array([bool(x["ok"][o[0]]) for x, o in zip(rows, orders, strict=True)])
    t20 = np.array([bool(x["ok"][o[:20]].any()) for x, o in zip(rows, orders, strict=True)])
    Ls = np.array([r["L"] for r in records])
    per_L = {int(L): {"cer": 100 * float(cer[Ls == L].mean()), "top1": 100 * float(ok[Ls == L].mean())}
             for L in sorted(set(Ls.tolist()))}
    width_right = np.array([len(bare(x["texts"][o[0]])) == len(bare(r["gold"]))
                            for x, o, r in zip(rows, orders, records, strict=True)])
    return {"n": len(rows), "cer": 100 * float(cer.mean()), "top1": 100 * float(ok.mean()),
            "top20": 100 * float(t20.mean()), "width_right_share": 100 * float(width_right.mean()),
            "per_L": per_L, "_ok": ok}


def fit(rows: list[dict], keys: list[np.ndarray], records: list[dict]) -> tuple[float, int, dict]:
    best = None
    grid = []
    for k in KS:
        for t in (TEMPERATURES if k > 1 else (1.0,)):
            f = figures(rows, [mbr_index(x["texts"], kk, t, k) for x, kk in zip(rows, keys, strict=True)], records)
            grid.append({"k": k, "temperature": t, "cer": f["cer"], "top1": f["top1"]})
            key = (round(f["cer"], 9), -round(f["top1"], 9), k, t)
            if best is None or key < best[0]:
                best = (key, t, k)
    assert best is not None
    return best[1], best[2], {"grid": grid}


def clean(f: dict) -> dict:
    return {k: v for k, v in f.items() if not k.startswith("_")}


def compare(rows: list[dict], keys: list[np.ndarray], records: list[dict], t: float, k: int) -> dict:
    base = figures(rows, [np.argsort(-kk, kind="stable") for kk in keys], records)
    mbr = figures(rows, [mbr_index(x["texts"], kk, t, k) for x, kk in zip(rows, keys, strict=True)], records)
    mc = mcnemar_exact(mbr["_ok"], base["_ok"])
    return {"most_probable_first": clean(base), "least_risk_first": clean(mbr),
            "mcnemar_top1": {"least_risk_only": mc.a_only, "most_probable_only": mc.b_only, "p": mc.pvalue}}


def load_rows(path: Path) -> list[dict]:
    with path.open("rb") as f:
        return pickle.load(f)["rows"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="mbr_eval.py")
    ap.add_argument("--cache", required=True, help="the folder of insc_eval.py's per-gap rows")
    ap.add_argument("--metrics", required=True, help="the run's metrics JSON: the shipped weights")
    ap.add_argument("--weights-key", default="weights", help="which weights of --metrics rank the candidates")
    ap.add_argument("--samples", required=True)
    ap.add_argument("--mode", choices=("hidden", "known"), default="hidden")
    ap.add_argument("--no-test", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0 = time.process_time()
    weights = json.loads(Path(a.metrics).read_text(encoding="utf-8"))[a.weights_key]
    prefix = "hidden_" if a.mode == "hidden" else ""
    dev = load_split(Path(a.samples), "dev", None)
    drows = load_rows(Path(a.cache) / f"{prefix}dev_None.pkl")
    dkeys = keys_of(dev, drows, weights)
    t, k, grid = fit(drows, dkeys, dev)
    out: dict = {"command": "python scripts/mbr_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                 "features": list(FEATURES) + (["width"] if a.mode == "hidden" else []), "weights": weights,
                 "temperature": t, "k": k, "dev": {**compare(drows, dkeys, dev, t, k), **grid}}
    halves = []
    for h in (0, 1):
        fi = [i for i in range(len(dev)) if i % 2 == h]
        hi = [i for i in range(len(dev)) if i % 2 != h]
        th, kh, _ = fit([drows[i] for i in fi], [dkeys[i] for i in fi], [dev[i] for i in fi])
        halves.append({"fitted_on": f"dev gaps i % 2 == {h}", "temperature": th, "k": kh,
                       **compare([drows[i] for i in hi], [dkeys[i] for i in hi], [dev[i] for i in hi], th, kh)})
    out["dev"]["held_out_halves"] = halves
    if not a.no_test:
        test = load_split(Path(a.samples), "test", None)
        trows = load_rows(Path(a.cache) / f"{prefix}test_None.pkl")
        out["test"] = compare(trows, keys_of(test, trows, weights), test, t, k)
    out["width_buckets"] = sorted({width_bucket((r["L"],)) for r in dev})
    out["cpu_s"] = time.process_time() - cpu0
    Path(a.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    brief = {s: {arm: {m: v for m, v in out[s][arm].items() if m != "per_L"} if isinstance(out[s][arm], dict) else out[s][arm]
                 for arm in ("most_probable_first", "least_risk_first", "mcnemar_top1")} for s in ("dev", "test") if s in out}
    print(json.dumps({"temperature": t, "k": k, **brief,
                      "halves": [{x: h[x] for x in ("temperature", "k")} | {"cer": (h["most_probable_first"]["cer"], h["least_risk_first"]["cer"])}
                                 for h in halves]}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
