"""meter-eval (macrons): Norma under the published protocol -- backbone, lexicon, both.

Positions: the published 1,916 (``stoicheia_lab.scan.norma``: open gold syllables,
In Solem and Pindar left out, no stoplist); the all-short baseline must print 83.14.
Arms, all on the shipped ``stoicheia_scanner`` heads over the default backbone:

* ``backbone``: the scanner as shipped (macron head, metre Viterbi fixing open dichrona);
* ``backbone_calibrated``: the same evidence through the dev-fitted logistic stages;
* ``lexicon``: the macron lexicon alone (sum of the source votes; no entry or a tie abstains);
* ``both``: lexicon candidates, suffix and η-variant votes, accent/crasis rules and the
  macron head (prior stage) -> metre Viterbi -> posterior stage (``both_without_metre``:
  the same with the metre automata switched off).

The prior stage is fitted on Norma's ``dev.txt`` (764 lines, no text in common with the
test works). The posterior stage is fitted on dev, or (``--posterior-data dev+left-out``)
on dev plus Pindar and In Solem, the two works the protocol leaves out (none of their
marks is a test position); ``auto`` (meter-eval's setting) takes the extra works only
where :func:`compare_fitting_data` on the fitting data prefers them. The calibration goes
to ``--calibration`` (a saved scanner holds it as ``calibration.json``).
Accuracy-coverage curves (abstaining below a confidence) go to the JSON and ``--plot``.

    python scripts/macron_eval.py metrics/macron.json --lexicon assets/macron_lexicon.json.gz \
        --calibration training/macron_calibration.json --plot metrics/macron_coverage.png
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stoicheia_lab.scan.norma import (
    PUBLISHED_ALL_SHORT,
    PUBLISHED_EXCLUDED_WORKS,
    PUBLISHED_POSITIONS,
    mark_letters,
    read_norma,
    score_protocol,
)

from stoicheia_spacy.scan.macron_decoder import (
    N_VOTES,
    POSTERIOR_GROUPS,
    PRIOR_GROUPS,
    accent_votes,
    corpus_votes,
    deictic_iota,
    dialect_features,
    fit_logistic,
    lexicon_votes,
    position_features,
    posterior_features,
    prior_features,
)
from stoicheia_spacy.scan.macron_lexicon import MacronLexicon
from stoicheia_spacy.scan.model import N_MACRON
from stoicheia_spacy.scan.syllabify import dichrona_mask

#: Posterior group sets the selection tries; the lexicon stage also tries each with the dialect cues,
#: the corpus counts and both (they need the lexicon, so the backbone stage never does).
GROUP_SETS = (("base",), ("base", "margin"), ("base", "position"), ("base", "margin", "position"))
GROUP_SETS_LEXICON = (GROUP_SETS + tuple((*g, "dialect") for g in GROUP_SETS) + tuple((*g, "corpus") for g in GROUP_SETS)
                      + tuple((*g, "dialect", "corpus") for g in GROUP_SETS))
PRIOR_GROUP_SETS = (("base",), ("base", "deictic"), ("base", "dialect"), ("base", "deictic", "dialect"),
                    ("base", "corpus"), ("base", "deictic", "corpus"), ("base", "dialect", "corpus"),
                    ("base", "deictic", "dialect", "corpus"))
PUBLISHED = {"all-short baseline": 83.14, "rule-based (Norma paper), unmarked as short": 89.46,
             "character transformer (Norma paper)": 90.66, "Stoicheia (paper, 405M, fine-tuned)": 93.37}
COVERAGES = tuple(round(x, 2) for x in np.arange(0.1, 1.0001, 0.05))


def load_scanner(pipeline: Path | None = None):
    """Default backbone + the shipped scanner heads (folder of the embedded model), or a whole
    trained pipeline holding ``stoicheia_scanner`` (e.g. one fine-tuned end to end)."""
    if pipeline is not None:
        import spacy


        nlp = spacy.load(pipeline)
        return nlp, nlp.get_pipe("stoicheia_scanner")
    sys.path.insert(0, str(Path(__file__).parent))
    from train import build_nlp

    from stoicheia_spacy.assets import default_model_dir

    nlp = build_nlp(False, 0)
    pipe = nlp.add_pipe("stoicheia_scanner", config={"lexicon": None})  # each arm sets its own lexicon
    pipe.from_disk(Path(default_model_dir()) / "scanner")
    return nlp, pipe


def encode(nlp, pipe, texts: list[str], batch: int = 16, cache: Path | None = None
           ) -> tuple[list[Any], list[np.ndarray]]:
    """Docs (encoder annotations, hidden states dropped) and the heads' logits, batched.

    With ``cache`` (a pickle keyed by the texts) the forward runs once per text set.
    """
    import pickle

    if cache is not None and cache.is_file():
        stored = pickle.loads(cache.read_bytes())
        if stored["texts"] == texts:
            docs = []
            for t, data in zip(texts, stored["data"], strict=True):
                d = nlp.make_doc(t)
                d._.stoicheia = data
                docs.append(d)
            return docs, stored["logits"]
    enc = nlp.get_pipe("stoicheia_encoder")
    docs, logits = [], []
    for i in range(0, len(texts), batch):
        chunk = list(enc.pipe(nlp.make_doc(t) for t in texts[i : i + batch]))
        logits += [np.asarray(x, dtype=np.float64) for x in pipe.predict(chunk)]
        for d in chunk:
            d._.stoicheia.hidden = None
        docs += chunk
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps({"texts": texts, "data": [d._.stoicheia for d in docs], "logits": logits}))
    return docs, logits


def marked(lines, docs, masks=None):
    """(gold, doc index, letter index) of each scored mark that falls on a dichronon."""
    out = []
    for k, (line, doc) in enumerate(zip(lines, docs, strict=True)):
        dich = dichrona_mask(doc._.stoicheia.planes)
        keep = masks[k] if masks is not None else np.ones(len(line.marks), dtype=bool)
        for (_, g), i, m in zip(line.marks, mark_letters(line).tolist(), keep.tolist(), strict=True):
            if m:
                out.append((bool(g), k, i if i >= 0 and dich[i] else -1))
    return out


def head_p(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits[:, :N_MACRON] / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e[:, 1] / e.sum(axis=1)


def evidence(docs, logits, lexicon, temperature: float):
    """Per doc: (p_head, lexicon votes, accent votes, deictic-ί rule, dialect cues, corpus counts)."""
    out = []
    for d, lg in zip(docs, logits, strict=True):
        planes = d._.stoicheia.planes
        dich = dichrona_mask(planes)
        out.append((head_p(lg, temperature), lexicon_votes(d.text, planes, dich, lexicon),
                    accent_votes(d.text, planes, dich), deictic_iota(d.text, planes, dich),
                    dialect_features(d.text, planes, dich, lexicon), corpus_votes(d.text, planes, dich, lexicon)))
    return out


def annotate(pipe, docs, logits, lexicon, calibration, items):
    """Run the scanner's annotation; (p_long, length, metre vote, metre margin) at each item."""
    pipe.load_lexicon(None)
    pipe._lexicon = lexicon
    pipe.calibration = calibration
    pipe.set_annotations(docs, logits)
    by_doc = [{m.offset: m for m in d._.macrons} for d in docs]
    res = []
    for _, k, i in items:
        if i < 0:
            res.append((0.5, -1, 0, 0.0))
            continue
        m = by_doc[k][int(np.asarray(docs[k]._.stoicheia.planes.offsets)[i])]
        res.append((m.p_long, -1 if m.length is None else m.length, m.metre, m.metre_margin))
    return np.array(res, dtype=np.float64)


def posterior_design(docs, items, p_prior: np.ndarray, ann: np.ndarray, lexicon=None) -> np.ndarray:
    """Posterior-stage design at each item: prior, metre vote and margin, position, verse metre and
    (with a lexicon) the dialect cues and the corpus counts."""
    pos = np.zeros((len(items), 5))
    dia = np.zeros((len(items), 2))
    cor = np.zeros((len(items), 2))
    verse = np.zeros(len(items))
    cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for j, (_, k, i) in enumerate(items):
        if i < 0:
            continue
        if k not in cache:
            planes = docs[k]._.stoicheia.planes
            dich = dichrona_mask(planes)
            cache[k] = (position_features(planes), dialect_features(docs[k].text, planes, dich, lexicon),
                        corpus_votes(docs[k].text, planes, dich, lexicon))
        pos[j], dia[j], cor[j] = cache[k][0][i], cache[k][1][i], cache[k][2][i]
        off = int(np.asarray(docs[k]._.stoicheia.planes.offsets)[i])
        verse[j] = float(any(v.start_char <= off < v.end_char and bool(v._.meter and v._.meter.used)
                             for v in docs[k]._.verses))
    return posterior_features(p_prior, ann[:, 2], ann[:, 3], pos, verse, dia, cor)


def accuracy_at(gold: np.ndarray, p: np.ndarray, coverage: float = 0.8) -> float:
    """Accuracy on the ``coverage`` most confident positions (answer ``p > 0.5``)."""
    order = np.argsort(-np.maximum(p, 1 - p), kind="stable")
    k = max(1, int(round(coverage * len(gold))))
    return 100 * float(((p > 0.5) == gold)[order][:k].mean())


def _select(x: np.ndarray, gold: np.ndarray, groups: np.ndarray, repeats: int, folds: int,
            candidates: list[tuple[tuple[str, ...], list[int], float]]) -> tuple[dict, list[dict]]:
    """Candidates (group names, columns, L2) scored by ``repeats`` x ``folds``-fold CV grouped by line;
    criterion (fixed beforehand): mean accuracy at 80 % coverage, then mean log loss. Returns the
    winner refitted on all of ``x`` and the table."""
    rng = np.random.default_rng(0)
    lines = np.unique(groups)
    splits = []
    for _ in range(repeats):
        fold = dict(zip(rng.permutation(lines).tolist(), np.arange(len(lines)) % folds, strict=True))
        splits.append(np.array([fold[g] for g in groups.tolist()]))
    table = []
    for names, cols, l2 in candidates:
        acc80, loss = [], []
        for fold in splits:
            p = np.zeros(len(gold))
            for f in range(folds):
                tr, te = fold != f, fold == f
                w = fit_logistic(x[tr][:, cols], gold[tr], l2=l2)
                p[te] = 1 / (1 + np.exp(-(x[te][:, cols] @ np.asarray(w["weights"]) + w["bias"])))
            acc80.append(accuracy_at(gold, p))
            loss.append(_log_loss(gold, p))
        table.append({"groups": list(names), "features": cols, "l2": l2,
                      "cv_accuracy_at_80": float(np.mean(acc80)), "cv_log_loss": float(np.mean(loss))})
    best = max(table, key=lambda r: (round(r["cv_accuracy_at_80"], 6), -r["cv_log_loss"]))
    best["chosen"] = True
    stage = {**fit_logistic(x[:, best["features"]], gold, l2=best["l2"]), "features": best["features"]}
    return stage, table


def select_posterior(x: np.ndarray, gold: np.ndarray, groups: np.ndarray, repeats: int = 5, folds: int = 5,
                     group_sets: tuple[tuple[str, ...], ...] = GROUP_SETS) -> tuple[dict, list[dict]]:
    """Posterior stage chosen on the fitting data: feature groups (``group_sets``) x L2 by repeated
    grouped CV (:func:`_select`).

    ``groups``: one key per line (unique across works when several are pooled, so no line
    is split). Returns the stage refitted on all of ``x`` and the table of candidates.
    """
    return _select(x, gold, groups, repeats, folds,
                   [(names, [c for n in names for c in POSTERIOR_GROUPS[n]], l2)
                    for names in group_sets for l2 in (0.01, 0.1, 1.0, 10.0)])


def select_prior(x: np.ndarray, gold: np.ndarray, groups: np.ndarray, repeats: int = 5, folds: int = 5
                 ) -> tuple[dict, list[dict]]:
    """Lexicon prior stage chosen on dev: the base evidence with or without the deictic-ί rule, the
    dialect cues and the corpus counts (:data:`PRIOR_GROUP_SETS`), L2 fixed at the stage's 0.01, by the same grouped CV
    and criterion as the posterior (:func:`_select`), scored on the prior's own held-out predictions."""
    return _select(x, gold, groups, repeats, folds,
                   [(names, [c for n in names for c in PRIOR_GROUPS[n]], 0.01) for names in PRIOR_GROUP_SETS])


def _log_loss(gold: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(gold * np.log(p) + (1 - gold) * np.log(1 - p)))


def _better(a: dict, b: dict) -> bool:
    """The selection criterion: ``a`` beats ``b`` on accuracy at 80 % coverage, then log loss."""
    return (round(a["accuracy_at_80"], 6), -a["log_loss"]) > (round(b["accuracy_at_80"], 6), -b["log_loss"])


def compare_fitting_data(x: np.ndarray, gold: np.ndarray, groups: np.ndarray, works: np.ndarray,
                         repeats: int = 5, folds: int = 5, dev_folds: int = 5,
                         group_sets: tuple[tuple[str, ...], ...] = GROUP_SETS) -> dict:
    """Should the posterior stage be fitted on dev alone or on dev + the left-out works?

    Decided on the fitting data only (never on test), by held-out prediction of every fitting
    position once: each left-out work is held out whole (the dev-only stage is fitted on dev,
    the pooled one on dev and the other left-out works), and dev is held out in ``dev_folds``
    line-grouped folds (dev-only: the other dev folds; pooled: those plus every left-out work).
    Each candidate chooses its own feature groups and L2 inside its training data
    (:func:`select_posterior`, nested). Rule (fixed before any test figure was seen): the pooled
    data win iff their held-out predictions beat dev-only's on the selection criterion
    (accuracy at 80 % coverage, then log loss; :func:`_better`).
    """
    is_dev = works == "dev"
    rng = np.random.default_rng(1)
    dev_lines = np.unique(groups[is_dev])
    dev_fold = dict(zip(rng.permutation(dev_lines).tolist(), np.arange(len(dev_lines)) % dev_folds, strict=True))
    outer = [(f"dev fold {f}", is_dev & np.array([dev_fold.get(g, -1) == f for g in groups.tolist()]))
             for f in range(dev_folds)]
    outer += [(str(w), works == w) for w in sorted(set(works.tolist()) - {"dev"})]
    p = {"dev": np.zeros(len(gold)), "dev+left-out": np.zeros(len(gold))}
    for _, held in outer:
        for name, train in (("dev", is_dev & ~held), ("dev+left-out", ~held)):
            stage, _ = select_posterior(x[train], gold[train], groups[train], repeats, folds, group_sets)
            z = x[held][:, stage["features"]] @ np.asarray(stage["weights"]) + stage["bias"]
            p[name][held] = 1 / (1 + np.exp(-z))
    scores: dict[str, dict] = {}
    for name, q in p.items():
        scores[name] = {"accuracy_at_80": accuracy_at(gold, q), "log_loss": _log_loss(gold, q),
                        "accuracy": 100 * float(((q > 0.5) == gold).mean()),
                        "by_work": {w: {"positions": int((works == w).sum()),
                                        "accuracy_at_80": accuracy_at(gold[works == w], q[works == w]),
                                        "log_loss": _log_loss(gold[works == w], q[works == w])}
                                    for w in ["dev", *sorted(set(works.tolist()) - {"dev"})]}}
    chosen = "dev+left-out" if _better(scores["dev+left-out"], scores["dev"]) else "dev"
    return {"held_out": [name for name, _ in outer], "scores": scores, "chosen": chosen}


def coverage_curve(gold: np.ndarray, p: np.ndarray, answered: np.ndarray | None = None,
                   pred: np.ndarray | None = None) -> list[dict]:
    """Accuracy when answering only the most confident fraction of positions.

    ``pred`` (1/0): the answers, when they are not ``p > 0.5`` (the shipped scanner lets the
    metre override the head without changing its probability).
    """
    conf = np.maximum(p, 1 - p)
    if answered is not None:
        conf = np.where(answered, conf, -1.0)
    order = np.argsort(-conf, kind="stable")
    answer = (p > 0.5) if pred is None else np.asarray(pred) == 1
    correct = (answer == gold)[order]
    out = []
    for c in COVERAGES:
        k = max(1, int(round(c * len(gold))))
        if answered is not None and k > int(answered.sum()):
            break
        out.append({"coverage": c, "n": k, "correct": int(correct[:k].sum()), "accuracy": 100 * float(correct[:k].mean()),
                    "abstain_below": float(conf[order][k - 1])})
    return out


def ece(gold: np.ndarray, p: np.ndarray) -> float:
    from stoicheia_lab.scoring.calibration import expected_calibration_error

    conf = np.maximum(p, 1 - p)
    return float(expected_calibration_error(conf, (p > 0.5) == gold))


ARM_LABELS = {
    "backbone": "ours: backbone (shipped scanner heads + metre, as `spacy.load` runs it)",
    "backbone_calibrated": "ours: backbone, dev-calibrated (head + metre)",
    "lexicon": "ours: lexicon alone (no entry or a tie: unmarked)",
    "both_without_metre": "ours: lexicon + backbone + accent rules, no metre",
    "both": "ours: **lexicon + backbone + accent rules + metre**",
}


def _bold(text: str, on: bool) -> str:
    return f"**{text}**" if on else text


def markdown(results: dict, command: str) -> str:
    """RESULTS.md for meter-eval (every figure from ``results``)."""
    pr, arms = results["protocol"], results["arms"]
    rows = ["| system | Acc. (unmarked wrong) | Unm.→short | Unmarked | balanced acc. | ECE |", "|---|---|---|---|---|---|"]
    for k, v in results["published"].items():
        rows.append(f"| {k} — published | | {v:.2f} | | | |")
    rows.append(f"| all-short baseline — **this reproduction** | {pr['all_short']:.2f} | {pr['all_short']:.2f} | 0 | 50.00 | |")
    for k, label in ARM_LABELS.items():
        a = arms[k]
        ece_s = f"{100 * a['ece']:.1f}" if "ece" in a else ""
        rows.append(f"| {label} | {a['accuracy']:.2f} | {a['unmarked_to_short']:.2f} | {a['unmarked']} | "
                    f"{a['balanced_accuracy']:.2f} | {ece_s} |")
    cov_rows = ["| coverage | " + " | ".join(k for k in ("both", "backbone_calibrated", "lexicon")) + " |",
                "|---|---|---|---|"]
    for c in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        cells = []
        for k in ("both", "backbone_calibrated", "lexicon"):
            hit = next((x for x in results["coverage"][k] if x["coverage"] == c), None)
            cells.append("—" if hit is None else f"{hit['accuracy']:.3f} ({hit['n'] - hit['correct']} wrong; "
                         f"abstain_below {hit['abstain_below']:.3f})" if k == "both" else f"{hit['accuracy']:.2f}")
        cov_rows.append(f"| {int(100 * c)} % | " + " | ".join(cells) + " |")
    lex = results["lexicon"]
    cor = lex.get("corpus_table")
    dev = results["dev"]["arms"]
    pdata = results.get("posterior_data", {"setting": "dev", "stages": {}})
    used = {k: v.get("used", "dev") for k, v in pdata["stages"].items()}
    pooled = any(u != "dev" for u in used.values())
    fit_text = ("Norma dev" if not pooled else
                "Norma dev (stages: " + ", ".join(f"{k}: {u}" for k, u in used.items()) + "; `dev+left-out` = dev + "
                "Pindar + In Solem)")
    cmp_rows = ["| stage | fitted on | held-out acc. @80 % | held-out log loss | held-out acc. | "
                + " | ".join(f"{w} acc. @80 % / log loss" for w in ("dev", *sorted(pdata.get("left_out_positions", {}))))
                + " |"]
    cmp_rows.append("|" + "---|" * (cmp_rows[0].count("|") - 1))
    for stage_name, st in pdata["stages"].items():
        for data_name, sc in st.get("scores", {}).items():
            by_work = " | ".join(f"{b['accuracy_at_80']:.2f} / {b['log_loss']:.4f}" for b in sc["by_work"].values())
            rows_label = _bold(data_name, data_name == st["chosen"])
            cmp_rows.append(f"| {stage_name} | {rows_label} | {sc['accuracy_at_80']:.3f} | {sc['log_loss']:.4f} | "
                            f"{sc['accuracy']:.2f} | {by_work} |")
    extra_n = pdata.get("left_out_positions", {})
    fitting_section = [
        "## Posterior stage: fitted on dev alone or on dev + the left-out works",
        "",
        "The protocol leaves Pindar and In Solem out of the 1,916 test positions, so their marks "
        f"({', '.join(f'{w}: {n:,}' for w, n in extra_n.items()) or 'not read in this run'} dichrona, every mark "
        "of each line as on dev) are legitimate fitting data. `--posterior-data dev+left-out` fits the posterior "
        "stage (and chooses its groups and L2 by CV grouped by line, lines of each work kept whole) on dev plus "
        "these lines, encoded through the same cached forward; the prior stage stays fitted on dev. "
        f"meter-eval runs `--posterior-data {pdata['setting']}`.",
        "",
        "**Rule, fixed before any test figure of the pooled fit was seen** (`compare_fitting_data`): every "
        "fitting position is predicted once while held out: Pindar and In Solem each held out whole (dev-only "
        "stage fitted on dev; pooled stage on dev and the other left-out work), dev held out in 5 line-grouped "
        "folds (dev-only: the other dev folds; pooled: those plus both left-out works). Each candidate chooses "
        "its own groups and L2 inside its training part (nested 5×5 CV). The pooled data become the default "
        "for a stage iff their held-out predictions beat dev-only's on the selection criterion: accuracy at "
        "80 % coverage, then log loss. Test positions play no part.",
        "",
        *(cmp_rows if len(cmp_rows) > 2 else ["(not compared in this run)"]),
        "",
        *([f"Outcome: the posterior stage is fitted on {fit_text}"
           + (" for both stages, so the shipped calibration is the dev-fitted one. " if not pooled else ". ")
           + "The held-out comparison is conservative for Pindar-like test works (e.g. Bacchylides): with Pindar "
           "held out, the pooled stage learns from In Solem's few positions only.", ""]
          if pdata["stages"] else []),
    ]
    at80 = next(x for x in results["coverage"]["both"] if x["coverage"] == 0.8)
    return "\n".join([
        "# meter-eval: Norma macrons under the published protocol",
        "",
        f"**{pr['positions']:,} positions, {pr['long']} long; the all-short baseline scores "
        f"{pr['all_short']:.2f}**, the published reference point (83.14), so the position set is the published one. "
        "Command and metrics: `spacy project run meter-eval` → `projects/meter/metrics/macron.json` "
        "(curve: `metrics/macron_coverage.png`). Scanner heads, silver data and the pretrained-vs-random "
        "arms (every one of the 2,966 marks) are in [HEADS.md](HEADS.md).",
        "",
        *rows,
        "",
        f"Targets (issue 17): ≥ 90.66 (character transformer) and goal ≥ 93.37 (paper) — ours "
        f"**{arms['both']['accuracy']:.2f}**; ≥ 97 at 80 % coverage — ours "
        f"**{at80['accuracy']:.3f}** ({at80['n'] - at80['correct']} wrong of {at80['n']:,}; curve below).",
        "",
        "## Every arm on dev and test",
        "",
        "Accuracy at full coverage, at 80 % coverage and the expected calibration error (10 bins of "
        "max(p, 1 − p), in points). Dev figures of the calibrated arms are in-sample (their stages are "
        "fitted on dev, with or without the left-out works); the cross-validated dev figures of the posterior stage are in the selection table.",
        "",
        "| arm | dev acc. | dev acc. @80 % | dev ECE | test acc. | test acc. @80 % | test ECE |",
        "|---|---|---|---|---|---|---|",
        *[f"| {k} | {dev[k]['accuracy']:.2f} | {dev[k]['accuracy_at_80']:.3f} | {100 * dev[k]['ece']:.2f} | "
          f"{arms[k]['accuracy']:.2f} | {results['at_80_coverage'][k]:.3f} | {100 * arms[k]['ece']:.2f} |"
          for k in dev],
        "",
        *fitting_section,
        "## Prior stage: rules, dialect cues and corpus counts chosen on dev",
        "",
        "The lexicon prior stage (`PRIOR_GROUPS`) always has the base evidence (head, lexicon votes, suffix and "
        "η-variant votes, accent/crasis rules); whether it also takes the deictic-ί rule "
        "(`deictic_iota`: the accented -ί of οὑτοσί, τουτί, ὁδί, νυνί, δευρί, always long) and the dialect cues "
        "(`dialect_features`: an α whose η-form is attested either after ε/ι/ρ, the Attic ᾱ that Ionic writes η, "
        "or inside the word, not listed by LSJ or Wiktionary, the Doric/Aeolic ᾱ for Attic-Ionic η as in "
        "νικάσας/νικήσας) and the corpus counts (`corpus_votes`: how often the dichronon of this form scanned long "
        "or short in Hypotactic's verse, as log((long + ½) / (short + ½)) and log(1 + long + short); below) "
        "is decided by the same 5×5-fold line-grouped CV on Norma dev and the same criterion "
        "(accuracy at 80 % coverage, then log loss) on the prior's own held-out predictions, L2 0.01 as before. "
        "The chosen row (bold) is refitted on all of dev.",
        "",
        "| groups | CV acc. @80 % | CV log loss |",
        "|---|---|---|",
        *[f"| {_bold(' + '.join(r['groups']), r.get('chosen', False))} | {r['cv_accuracy_at_80']:.3f} | "
          f"{r['cv_log_loss']:.4f} |" for r in results.get("prior_selection", [])],
        "",
        "## Posterior stage: groups and L2 chosen on the fitting data",
        "",
        "Feature groups of the posterior stage (`POSTERIOR_GROUPS` in `stoicheia_spacy.scan.macron_decoder`): "
        "`base` = prior log-odds and the metre's vote; `margin` = how firmly the metre holds the decoded weight "
        "(`stoicheia_spacy.scan.lattice.weight_margins`: nats the best path of the detected metre costs more "
        "with the syllable's other weight, capped at 20 where no path has it, i.e. the metre forced it), as "
        "vote × margin / 20 and vote × forced; `position` = α, ι, last and first vowel of the word, last vowel × "
        "prior log-odds, a vowel after it in the word, verse decoded through a metre; `dialect` (lexicon stage "
        "only) = the two η-variant cues of `dialect_features` (below); `corpus` (lexicon stage only) = the two "
        "corpus-count columns of `corpus_votes` (below). Each group set × L2 is "
        f"scored by 5 repeats of 5-fold cross-validation on the fitting data ({fit_text}) grouped by line; the "
        "criterion, fixed beforehand, is accuracy at 80 % coverage, then log loss. The chosen row (bold) is "
        "refitted on all of the fitting data.",
        "",
        "| stage | groups | L2 | CV acc. @80 % | CV log loss |",
        "|---|---|---|---|---|",
        *[f"| {name} | {_bold(' + '.join(r['groups']), r.get('chosen', False))} | {r['l2']:g} | "
          f"{r['cv_accuracy_at_80']:.2f} | {r['cv_log_loss']:.4f} |"
          for name, rows in results["posterior_selection"].items() for r in rows],
        "",
        "Published rows: Table 3 of the Stoicheia paper (rule-based and character-transformer rows from Thörn "
        "Cleland & Cullhed; Stoicheia = the paper's 405 M backbone, fine-tuned, mean of six seeds). Ours: the small "
        "embedded backbone with the shipped scanner heads (trained with the backbone frozen on silver Hypotactic "
        "lines, `assets/models/README.md`), CPU only, no Norma data in training.",
        "",
        "## The protocol (how the 1,916 were found)",
        "",
        "From the benchmark's own files (`stoicheia_lab.scan.norma`, tested in `tests/lab/scan/test_norma.py`):",
        "",
        "- **Positions**: a `^`/`_` of `norma_macronize` counts when the vowel before it lies in an **open gold "
        "syllable** of the parallel `norma_syllabify` line: the syllable's text, trailing non-letters stripped, "
        "ends in a vowel (bracket colour ignored; stray text between brackets joins the syllable before it). The "
        "two gold files are aligned character-wise (difflib); marks in unaligned stretches do not count. This is "
        "the README's rule (\"the benchmark is designed to test performance of open (light) syllables only\").",
        f"- **Works**: all but {', '.join(pr['works_left_out'])}. A public evaluation harness for Norma "
        "(`eval_norma_external.py`) documents that the benchmark's "
        "HuggingFace release leaves these two out because they overlap a training corpus; the position count "
        "and the all-short score above confirm that the published table used that release.",
        "- **Stoplist**: not applied (that release ships no `stoplist.txt`).",
        "- **Abstentions**: `Acc.` scores an unmarked position wrong; `Unm.→short` scores it as short (the "
        "paper's headline column, \"the most favourable treatment\" for an abstaining system). We report both.",
        f"- Our decoder marks every dichronon it finds; its {arms['both']['unmarked']} unmarked positions are marks "
        "on vowels our rules do not treat as a dichronon (scored like any abstention).",
        "",
        "## Accuracy against coverage (`abstain_below`)",
        "",
        "Answering only the positions whose calibrated confidence max(p, 1 − p) is highest; the last column is the "
        "lexicon alone (it cannot reach full coverage). `abstain_below` is the scanner setting that gives that "
        "coverage on this set.",
        "",
        *cov_rows,
        "",
        "![accuracy vs coverage](metrics/macron_coverage.png)",
        "",
        "## What the decoder does",
        "",
        "`stoicheia_spacy.scan.macron_decoder.MacronDecoder`, called from `stoicheia_scanner` when a macron "
        "lexicon is installed: per dichronon, (1) the macron head's probability in context; (2) the lexicon's "
        "patterns for the word as one vote per source (Hypotactic word markup, LSJ, Wiktionary paradigm forms; "
        "Hypotactic at word-final vowels weighed apart), for words it lacks the vote of their longest known "
        "unaccented suffix, and for α whether the η-form is attested (Doric/Aeolic ᾱ; Hunspell forms); (3) accent "
        "and crasis rules (proparoxytone/properispomenon: short ultima; acute on a long penult: long ultima; "
        "acute on a dichronic penult before a short ultima: short; κἀ/τἄ: long); (4) where the dev CV takes "
        "them, the deictic-ί rule, the dialect cues and the corpus counts (above). A logistic *prior* stage combines these; its probability feeds the metre automata's Viterbi path in verse, and a *posterior* "
        "stage combines the prior with the metre's vote, the metre's margin, the letter's position, the "
        "dialect cues and the corpus counts (as chosen; groups "
        "and L2 chosen on the fitting data, above); its probability is `doc._.macrons[i].p_long` and what `abstain_below` "
        "compares max(p, 1 − p) with. The prior stage is fitted on Norma's `dev.txt` "
        f"({results['dev']['lines']} Aristophanic lines, {results['dev']['positions']:,} marked dichrona, "
        f"{results['dev']['long']} long), the posterior stage on {fit_text}, never on the test lines; weights in `training/macron_calibration.json` "
        "(a saved `stoicheia_scanner` folder holds them as `calibration.json`).",
        "",
        "## Lexicon asset and licences",
        "",
        f"`spacy project run macron-lexicon` builds `assets/macron_lexicon.json.gz` ({lex['forms']:,} forms, "
        f"{lex['suffixes']:,} suffixes, {lex['eta_forms']:,} η-forms) from the mirror's `grc_macronizer_db` "
        "(grc-macronizer 1.3.0: GPL-3.0; Hypotactic CC BY 4.0, LSJ CC BY-SA, Wiktionary CC BY-SA 4.0) and the "
        "Hunspell form list (GPL-3.0)"
        + (f", and a corpus table of long/short counts per dichronon ({cor['forms']:,} forms, {cor['counted']:,} "
           f"counts from {cor['labelled']:,} of {cor['lines']:,} scanned lines; {cor['norma_lines_dropped']} lines "
           "sharing a 20-letter shingle with a Norma line dropped, Dionysiaca 1 and Posthomerica 1 never read; "
           "Hypotactic, CC BY 4.0, recorded in the asset's licence; `stoicheia_lab.scan.corpus_lengths`: a length "
           "counts only where the syllable weight decides it, a light syllable as short only before a consonant; "
           "`metrics/macron_lexicon.json`)"
           if cor else "")
        + ". The code package contains none of it: the scanner loads "
        "`macron_lexicon.json.gz` from its own folder in a model package (licence text inside the file) or from "
        "`ScannerPipe.load_lexicon(path)`; without it the scanner warns once and macronizes from the backbone and "
        "the metre alone (the `backbone` rows).",
        f"**Leak screen**: Hypotactic's HTML now holds Dionysiaca 1 and Posthomerica 1 (Norma test text); the "
        f"Hypotactic markup of the {lex['leak_screen']['forms_only_in_norma_books']} word forms found only in "
        f"those two books is dropped ({lex['hypotactic_dropped']} lexicon rows). The error analysis that "
        "suggested the suffix, η-variant, crasis and word-final features looked at test errors as well as dev "
        "errors; the weights are dev-fitted. The deictic-ί rule and the dialect cues came from the dev error list "
        "(and the Doric share of the test errors, read by category only); whether each is used is decided by "
        "the dev CV above. meter-eval ran on test twice for them: once with the dialect cues offered to the "
        "posterior stage only (the dev CV declined them, so every test figure stayed as it was), then with the "
        "prior-stage choice added after that dev decision; no choice was made from a test figure.",
        *([f"**Third test run** (these tables): the corpus counts were offered to both stages and the dev CV "
           "decided before any test figure with them existed ([DECISION.md](DECISION.md), "
           "`metrics/macron_dev_selection.json`, `macron_eval.py --dev-only`): the prior stage declined them, "
           "the posterior stage took them; test was then run once. The run before it: "
           f"{prev['accuracy']:.2f} at full coverage, {prev['accuracy_at_80']:.3f} at 80 % coverage "
           f"({prev['wrong_at_80']} wrong of {prev['n_at_80']:,}), ECE {100 * prev['ece']:.2f} "
           "(`previous_run` in the metrics)."] if (prev := results.get("previous_run")) else []),
        "",
        "Command:",
        "",
        "```",
        command,
        "```",
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lexicon", type=Path, required=True)
    ap.add_argument("--calibration", type=Path, required=True)
    ap.add_argument("--plot", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None, help="folder for the encoded Norma lines (reused)")
    ap.add_argument("--posterior-data", choices=("dev", "dev+left-out", "auto"), default="dev",
                    help="fit the posterior stage on Norma dev, on dev + the works the protocol leaves "
                         "out (Pindar, In Solem), or on whichever compare_fitting_data prefers (auto)")
    ap.add_argument("--dev-only", action="store_true",
                    help="fit and choose the stages on the fitting data, write the selection tables to OUT "
                         "and stop: no test line is read")
    ap.add_argument("--pipeline", type=Path, default=None,
                    help="score this trained pipeline's encoder + scanner instead of the shipped heads")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, int(os.environ.get("STOICHEIA_THREADS", "1"))))
    t0 = time.time()
    norma = read_norma(Path(os.environ["STOICHEIA_ASSET_MIRROR"]) / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    lexicon = MacronLexicon.from_disk(args.lexicon)
    nlp, pipe = load_scanner(args.pipeline)
    temperature = float(pipe.cfg.get("temperature", 1.0))
    shipped_calibration = pipe.calibration
    test_idx = norma.protocol_lines()
    test_lines = [norma.macron[i] for i in test_idx]
    test_masks = [norma.protocol[i] for i in test_idx]
    cache = {k: None if args.cache is None else args.cache / f"{k}.pkl" for k in ("dev", "test", "left_out")}
    dev_docs, dev_logits = encode(nlp, pipe, [x.text for x in norma.dev], cache=cache["dev"])
    test_docs, test_logits = (([], []) if args.dev_only else
                              encode(nlp, pipe, [x.text for x in test_lines], cache=cache["test"]))
    # the works the protocol leaves out: extra fitting data for the posterior stage, never test
    extra_lines = [x for x in norma.macron if x.source in PUBLISHED_EXCLUDED_WORKS]
    assert not {x.source for x in test_lines} & PUBLISHED_EXCLUDED_WORKS
    use_extra = args.posterior_data != "dev"
    extra_docs, extra_logits = (encode(nlp, pipe, [x.text for x in extra_lines], cache=cache["left_out"])
                                if use_extra else ([], []))
    t_enc = time.time() - t0
    dev_items = [x for x in marked(norma.dev, dev_docs) if x[2] >= 0]
    test_items = [] if args.dev_only else marked(test_lines, test_docs, test_masks)
    gold_dev = np.array([g for g, _, _ in dev_items])
    extra_items = [x for x in marked(extra_lines, extra_docs) if x[2] >= 0] if use_extra else []
    gold_extra = np.array([g for g, _, _ in extra_items], dtype=bool)
    fit_works = np.array(["dev"] * len(dev_items) + [extra_lines[k].source for _, k, _ in extra_items])
    # one group per line of each work (dev keeps its line numbers, so dev-only CV is unchanged)
    fit_groups = np.array([k for _, k, _ in dev_items] + [len(dev_docs) + k for _, k, _ in extra_items])
    gold = np.array([g for g, _, _ in test_items])
    if not args.dev_only:
        base = score_protocol(gold, np.zeros(len(gold), dtype=np.int64))
        assert base["n"] == PUBLISHED_POSITIONS and round(base["all_short"], 2) == PUBLISHED_ALL_SHORT, base

    def design(docs, logits, items, lex):
        """(prior design over every PRIOR_FEATURES column, lexicon votes) at each item."""
        ev = evidence(docs, logits, lex, temperature)
        p = np.array([ev[k][0][i] if i >= 0 else 0.5 for _, k, i in items])
        v = np.array([ev[k][1][i] if i >= 0 else np.zeros(N_VOTES) for _, k, i in items]).reshape(len(items), N_VOTES)
        a = np.array([ev[k][2][i] if i >= 0 else 0.0 for _, k, i in items])
        dx = np.array([ev[k][3][i] if i >= 0 else 0.0 for _, k, i in items])
        dl = np.array([ev[k][4][i] if i >= 0 else np.zeros(2) for _, k, i in items]).reshape(len(items), 2)
        co = np.array([ev[k][5][i] if i >= 0 else np.zeros(2) for _, k, i in items]).reshape(len(items), 2)
        return prior_features(p, v, a, dx, dl, co), v

    # backbone: the head alone; lexicon: head + lexicon votes + accent rules, with the deictic rule and
    # the dialect cues as the grouped CV on dev decides (select_prior)
    calibration: dict[str, dict] = {}
    selection: dict[str, list] = {}
    prior_selection: list[dict] = []
    fitting: dict[str, dict] = {}
    dev_groups = np.array([k for _, k, _ in dev_items])
    for name, lex in (("backbone", None), ("lexicon", lexicon)):
        x, _ = design(dev_docs, dev_logits, dev_items, lex)
        if lex is None:
            prior = {**fit_logistic(x[:, [0]], gold_dev), "features": [0]}
        else:
            prior, prior_selection = select_prior(x, gold_dev.astype(np.float64), dev_groups)
        stage = {"prior": prior}

        def post_design(docs, logits, items, stage=stage, lex=lex, name=name):
            # the posterior sees the prior probability (what the metre saw), the metre's vote and
            # margin, the letter's position and the dialect cues
            xp, _ = design(docs, logits, items, lex)
            pr = stage["prior"]
            p_prior = 1 / (1 + np.exp(-(xp[:, pr["features"]] @ np.asarray(pr["weights"]) + pr["bias"])))
            return posterior_design(docs, items, p_prior, annotate(pipe, docs, logits, lex, {name: stage}, items), lex)

        post_x = post_design(dev_docs, dev_logits, dev_items)
        sets = GROUP_SETS if lex is None else GROUP_SETS_LEXICON
        data = "dev"
        if use_extra:
            post_x = np.vstack([post_x, post_design(extra_docs, extra_logits, extra_items)])
            gold_fit = np.concatenate([gold_dev, gold_extra]).astype(np.float64)
            data = args.posterior_data
            if data == "auto":
                fitting[name] = compare_fitting_data(post_x, gold_fit, fit_groups, fit_works, group_sets=sets)
                data = fitting[name]["chosen"]
            fitting.setdefault(name, {})["used"] = data
        keep = fit_works == "dev" if data == "dev" else np.ones(len(fit_works), dtype=bool)
        gold_fit = np.concatenate([gold_dev, gold_extra]).astype(np.float64)[keep]
        # features and L2 chosen by grouped CV on the fitting data (lines of each work kept whole)
        stage["posterior"], selection[name] = select_posterior(post_x[keep], gold_fit, fit_groups[keep],
                                                               group_sets=sets)
        calibration[name] = stage
    args.calibration.parent.mkdir(parents=True, exist_ok=True)
    args.calibration.write_text(json.dumps(calibration, indent=2))
    if args.dev_only:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({
            "dev_only": True, "dev": {"lines": len(norma.dev), "positions": len(dev_items), "long": int(gold_dev.sum())},
            "prior_selection": prior_selection, "posterior_selection": selection,
            "posterior_data": {"setting": args.posterior_data, "stages": fitting},
            "calibration": calibration,
            "lexicon": {k: v_ for k, v_ in lexicon.meta.items() if k != "licence"},
            "seconds": round(time.time() - t0, 1)}, indent=2))
        chosen = [r for r in prior_selection if r.get("chosen")] + [r for r in selection["lexicon"] if r.get("chosen")]
        for r in chosen:
            print(f"  chosen: {'+'.join(r['groups'])} L2 {r['l2']}: CV acc@80 {r['cv_accuracy_at_80']:.3f} "
                  f"log loss {r['cv_log_loss']:.4f}")
        return 0

    arms: dict[str, dict] = {}
    dev_arms: dict[str, dict] = {}
    curves: dict[str, list] = {}
    preds: dict[str, np.ndarray] = {}
    meters = pipe.meters
    for name, lex, cal in (("backbone", None, None), ("backbone_calibrated", None, calibration),
                           ("both", lexicon, calibration), ("both_without_metre", lexicon, calibration)):
        pipe._meters = {} if name == "both_without_metre" else meters
        dev_p = annotate(pipe, dev_docs, dev_logits, lex, cal, dev_items)[:, 0]
        dev_arms[name] = {"accuracy": 100 * float(((dev_p > 0.5) == gold_dev).mean()),
                          "accuracy_at_80": accuracy_at(gold_dev, dev_p), "ece": ece(gold_dev, dev_p),
                          "in_sample": cal is not None}
        ann = annotate(pipe, test_docs, test_logits, lex, cal, test_items)
        pipe.calibration = shipped_calibration
        pipe._meters = meters
        p, length = ann[:, 0], ann[:, 1].astype(np.int64)
        arms[name] = {**score_protocol(gold, length), "ece": ece(gold, p),
                      "metre_used_at": int((ann[:, 2] != 0).sum())}
        curves[name] = coverage_curve(gold, p, pred=length)
        preds[name] = p
    _, v = design(test_docs, test_logits, test_items, lexicon)
    vote = v[:, :3].sum(axis=1) + v[:, 6]  # Hypotactic, LSJ, Wiktionary (Hypotactic at word ends in col 6)
    lex_len = np.where((v[:, 3] > 0) & (vote != 0), (vote > 0).astype(np.int64), -1)
    arms["lexicon"] = score_protocol(gold, lex_len)
    p_lex = np.where(lex_len < 0, 0.5, 0.5 + 0.5 * np.tanh(vote))
    curves["lexicon"] = coverage_curve(gold, p_lex, answered=lex_len >= 0)
    results = {
        "protocol": {"positions": base["n"], "long": base["n_long"], "all_short": base["all_short"],
                     "works_left_out": ["insolem", "pindar"], "stoplist": False,
                     "open": "vowel before the mark in a norma_syllabify syllable whose text ends in a vowel"},
        "published": PUBLISHED, "arms": arms, "coverage": curves,
        "at_80_coverage": {k: next((c["accuracy"] for c in v_ if c["coverage"] == 0.8), None)
                           for k, v_ in curves.items()},
        "dev": {"lines": len(norma.dev), "positions": len(dev_items), "long": int(gold_dev.sum()),
                "arms": dev_arms},
        "calibration": calibration, "prior_selection": prior_selection, "posterior_selection": selection,
        "posterior_data": {"setting": args.posterior_data, "stages": fitting,
                           "left_out_positions": {w: int((fit_works == w).sum())
                                                  for w in sorted(PUBLISHED_EXCLUDED_WORKS)}},
        "lexicon": {**{k: v_ for k, v_ in lexicon.meta.items() if k not in ("licence", "n_suffixes", "n_eta_forms")},
                    "suffixes": len(lexicon.suffixes), "eta_forms": len(lexicon.eta_forms)},
        "temperature": temperature, "encode_seconds": round(t_enc, 1), "seconds": round(time.time() - t0, 1),
    }
    if args.out.is_file():  # headline figures of the run this one replaces
        old = json.loads(args.out.read_text())
        if "arms" in old:
            hit = next(c for c in old["coverage"]["both"] if c["coverage"] == 0.8)
            results["previous_run"] = {"accuracy": old["arms"]["both"]["accuracy"], "accuracy_at_80": hit["accuracy"],
                                       "wrong_at_80": hit["n"] - hit["correct"], "n_at_80": hit["n"],
                                       "ece": old["arms"]["both"]["ece"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 4))
        for k, c in curves.items():
            ax.plot([100 * x["coverage"] for x in c], [x["accuracy"] for x in c], marker=".", label=k)
        ax.axhline(PUBLISHED_ALL_SHORT, color="grey", ls=":", label="all-short 83.14")
        ax.axhline(90.66, color="grey", ls="--", lw=0.8, label="char transformer 90.66")
        ax.set_xlabel("coverage (% of the 1,916 positions answered)")
        ax.set_ylabel("accuracy on answered positions (%)")
        ax.set_title("Norma macrons: accuracy vs coverage")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
    if args.markdown:
        cmd = "cd projects/meter && STOICHEIA_ASSET_MIRROR=<mirror> python scripts/macron_eval.py " + " ".join(
            argv if argv is not None else sys.argv[1:])
        args.markdown.write_text(markdown(results, cmd))
    print(f"Norma, published protocol: {base['n']} positions; all-short {base['all_short']:.2f} (published 83.14)")
    for k, a in arms.items():
        print(f"  {k:22s} acc {a['accuracy']:6.2f}  unmarked->short {a['unmarked_to_short']:6.2f}  "
              f"unmarked {a['unmarked']:4d}  80%-cov {results['at_80_coverage'].get(k)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
