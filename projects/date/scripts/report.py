"""Merge the per-arm metrics into metrics/date_eval.json and render RESULTS.md from it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import wilcoxon

NAMES = {"tfidf": "char 1-4-gram TF-IDF + ridge", "pretrained": "ridge on pooled states, shipped backbone",
         "random-init": "ridge on pooled states, random-init backbone",
         "stacked": "TF-IDF ridge + pooled-state ridge, stacked",
         "text-kernel": "word n-gram kernel: weighted median of similar papyri (words only)",
         "kernel-states": "word n-gram kernel offered the pooled states, shipped backbone (the shipped dater)",
         "kernel-random": "word n-gram kernel offered the pooled states, random-init backbone"}
PAIRS = (("pretrained", "tfidf"), ("pretrained", "random-init"), ("random-init", "tfidf"), ("stacked", "tfidf"),
         ("stacked", "pretrained"), ("text-kernel", "tfidf"), ("text-kernel", "stacked"),
         ("kernel-states", "kernel-random"), ("kernel-states", "text-kernel"), ("kernel-random", "text-kernel"))
KERNEL_ARMS = ("text-kernel", "kernel-states", "kernel-random")


def chosen_summary(chosen: list[dict]) -> str:
    """How often each kernel setting was chosen over the training parts."""
    parts = []
    for key in ("prior", "beta", "tau", "k", "lam"):
        values = [c.get(key, "words" if key == "prior" else 0.0) for c in chosen]
        counts = {v: values.count(v) for v in sorted(set(values))}
        parts.append(f"{key} " + ", ".join(f"{v if isinstance(v, str) else format(v, 'g')} ({n}x)"
                                           for v, n in counts.items()))
    return "; ".join(parts)


def reads_states(chosen: dict) -> bool:
    """Whether a training part's choice reads the pooled states (a state or stacked prior, or beta > 0)."""
    return chosen.get("prior", "words") != "words" or chosen.get("beta", 0.0) > 0


def paired_tests(arms: dict) -> dict:
    """Wilcoxon signed-rank tests of per-document absolute errors (mean over repeats) between arms."""
    out = {}
    for a, b in PAIRS:
        if "per_document_abs_error" in arms.get(a, {}) and "per_document_abs_error" in arms.get(b, {}):
            ea, eb = np.asarray(arms[a]["per_document_abs_error"]), np.asarray(arms[b]["per_document_abs_error"])
            out[f"{a} vs {b}"] = {"mean_difference_years": float(np.mean(ea - eb)),
                                  "median_difference_years": float(np.median(ea - eb)),
                                  "wilcoxon_p": float(wilcoxon(ea, eb).pvalue), "n": int(len(ea))}
    return out


def states_section(m: dict) -> list[str]:
    """Whether the kernel's inner choice took the backbone states (item 1 of issue 20)."""
    arms = m["arms"]
    if "kernel-states" not in arms:
        return []
    chosen = arms["kernel-states"]["chosen_per_fold"]
    n_states = sum(reads_states(c) for c in chosen)
    n_prior = sum(c.get("prior", "words") != "words" for c in chosen)
    lines = ["Pooled backbone states in the kernel (issue 20, item 1): `kernel.fit_text_model` was offered the",
             f"shared forward's pooled states (hidden states {m['layers']}, mean over letters) as a ridge prior, stacked",
             "with the word ridge, and as a similarity term (beta x state cosine), all chosen by the same leave-one-out",
             f"inside each training part. A state-based prior (state ridge or stacked) was chosen in {n_prior} of the",
             f"{len(chosen)} training parts, the states in any form (prior or beta > 0) in {n_states}; outer MAE",
             f"{arms['kernel-states']['mae']:.1f} years"]
    if "text-kernel" in arms:
        lines[-1] += f" against {arms['text-kernel']['mae']:.1f} for the words alone"
    random = arms.get("kernel-random")
    if random:
        n_random = sum(c.get("prior", "words") != "words" for c in random["chosen_per_fold"])
        lines[-1] += (f" and {random['mae']:.1f} with the states of the random-init backbone (whose state-based"
                      f" prior was chosen in {n_random} of {len(random['chosen_per_fold'])} parts)")
    lines[-1] += "."
    tests = m.get("paired_tests", {})
    for pair in ("kernel-states vs kernel-random", "kernel-states vs text-kernel"):
        if pair in tests:
            lines.append(f"Paired, {pair}: mean difference {tests[pair]['mean_difference_years']:+.1f} years per"
                         f" papyrus, Wilcoxon p = {tests[pair]['wilcoxon_p']:.2g}.")
    lines += ["So the states earn a small gain in the inner leave-one-out (the per-prior leave-one-out MAEs in",
              "`chosen_per_fold`) that the outer folds do not show, and random-init states are chosen too:",
              "what the state prior adds is not shown to come from pretraining. The dater reads them because the",
              "rule fixed before this run (ship a state-based prior if the inner choice takes it in the majority",
              "of training parts) says so; the outer figures do not separate it from the words-only kernel"]
    wild_states, wild_words = arms["kernel-states"].get("in_the_wild"), arms.get("text-kernel", {}).get("in_the_wild")
    if wild_states and wild_words:
        lines += ["(it is no worse on PaDoC), and on the in-the-wild papyri fewer of its estimates respect the upper",
                  f"limit ({wild_states['estimate_not_after_limit']:.1%} against"
                  f" {wild_words['estimate_not_after_limit']:.1%} for the words-only kernel)."]
    else:
        lines[-1] += "."
    return lines + [""]


def shipped_lines(shipped: dict | None) -> list[str]:
    """What the shipped ``stoicheia_dater`` weights are (``train.py``'s choices on all of PaDoC)."""
    if shipped is None:
        return ["The `stoicheia_dater` weights are the kernel fitted on all 389 papyri (`train`, the same",
                "`kernel.fit_text_model`);"]
    lines = [f"The `stoicheia_dater` weights are the `{shipped['model']}` arm fitted on all {shipped['n_documents']}"
             f" papyri (`train`, the same `kernel.fit_text_model`; leave-one-out MAE {shipped['loo_mae']:.1f} years,"
             f" prior: {shipped.get('prior', 'words')}, beta {shipped.get('beta', 0.0):g}, tau {shipped['tau']:g},"
             f" k {shipped['k']}, lam {shipped['lam']:g});"]
    if shipped.get("reads_states"):
        return lines + ["they read the pooled states of the shared forward (`doc._.stoicheia`, the letters of the first",
                        "800 characters, as `embed.py` pooled them) when the encoder runs before the dater, and fall back",
                        "to the word ridge prior and word similarity alone in a pipeline without it (documented in",
                        "`stoicheia_spacy.date.dater`);"]
    return lines + ["the fit on all of PaDoC did not choose the states, so the dater reads `doc.text` only;"]


LITERARY_ARMS = {"majority": "majority class", "tfidf": "char 1-4-gram TF-IDF + ridge classifier",
                 "shipped": "the shipped attributor: the same, its vocabulary the 12,000 most frequent n-grams",
                 "pretrained": "pooled states of the shipped backbone + ridge classifier"}
LITERARY_DATE_ARMS = {"majority": "training mean", "tfidf": "char 1-4-gram TF-IDF + ridge",
                      "pretrained": "pooled states of the shipped backbone + ridge"}


def literary(m: dict, name: str) -> list[str]:
    """The GLAUx section of RESULTS.md (genre, dialect, dating)."""
    seen = m["in_pretraining"]
    tasks = m["tasks"]
    lines = ["# Literary Greek (GLAUx): genre, dialect and date", "",
             f"Measured by `{m['command']}` (scripts `glaux_embed.py`, `attribute.py`); every figure below is",
             f"read from `metrics/{name}`. {m['n_passages']} passages of at most {m['passage_chars']} characters",
             f"(up to 3 per text, evenly spaced) from {m['n_texts']} GLAUx texts of {m['n_authors']} authors",
             "(at most 6 texts per author); protocol: " + m["protocol"] + ", so no author is in both",
             "training and test. Genre: the labels of at least 5 authors among the passages; dialect: of at",
             "least 3 (dating uses the dialect folds). The ridge strength is chosen by leave-one-out, and a softmax",
             "temperature over the classifier's scores (the calibration the `stoicheia_attributor` ships) on",
             "3-fold author-grouped out-of-fold scores, both inside the training part.",
             f"Backbone arm: mean over letters of hidden states {m['layers']} (what the earlier attributor read).", "",
             "| task | arm | accuracy | macro-F1 | log loss | ECE |", "|---|---|---|---|---|---|"]
    for task in ("genre", "dialect"):
        t = tasks[task]
        for arm, r in t["arms"].items():
            lines.append(f"| {task} ({len(t['labels'])} labels, {t['n_passages']} passages) | {LITERARY_ARMS[arm]} | "
                         f"{r['accuracy']:.1%} | {r['macro_f1']:.3f} | {r['log_loss']:.2f} | {r['ece']:.3f} |")
    date = tasks["date"]
    lines += ["", f"Literary dating (year = mid-point of GLAUx's date range; {date['n_passages']} passages):", "",
              "| arm | MAE (years) | median AE | MAE sd over repeats |", "|---|---|---|---|"]
    for arm, r in date["arms"].items():
        lines.append(f"| {LITERARY_DATE_ARMS[arm]} | {r['mae']:.1f} | {r['median_ae']:.1f} | "
                     f"{r['sd_over_repeats']['mae']:.1f} |")
    lines += ["", "Paired tests of the dating errors (Wilcoxon signed-rank, per passage, mean over repeats):", ""]
    for pair, test in date["paired_tests"].items():
        lines.append(f"* {pair.replace('_vs_', ' vs ')}: mean difference {test['mean_difference_years']:+.1f} years, "
                     f"p = {test['wilcoxon_p']:.2g}")
    lines += ["", "Decontamination: the shipped backbone's pretraining corpus holds every GLAUx record except its",
              "0.5 % dev slice (`assets/models/README.md`: Perseus, GLAUx and First1K, 55.1 M letters;",
              "`pretrain.data.is_dev`), so the text of "
              f"{seen['texts']} of the {m['n_texts']} texts ({seen['passages']} of {m['n_passages']} passages) "
              "was in its pretraining corpus (stage 1 sampled about 18 M of those letters; unlabelled:",
              "it never saw a genre, dialect or date); not read as a GLAUx record (dev slice): TLG "
              + (", ".join(seen["texts_not_read"]) or "none") + ".",
              "The literary figures therefore measure what the states encode of seen text, not of unseen works.",
              "The `stoicheia_attributor` weights are the shipped arm (TF-IDF, which beats the pooled states on",
              "accuracy, macro-F1 and log loss above) fitted on all passages (`attribute --ship`); derived from GLAUx, they are licensed",
              "CC BY-SA 4.0 and ship beside the default model (`assets/models/grc_stoicheia_doc_clean/attributor`),",
              "not in the code package."]
    for work, probe in (m.get("probe") or {}).items():
        genre = probe["genre"]
        top = max(genre["mean_probabilities"], key=genre["mean_probabilities"].get)
        counts = ", ".join(f"{label} {n}" for label, n in sorted(genre["top_labels"].items(), key=lambda kv: -kv[1]))
        lines += ["", f"Probe, {probe['passages']} passages of the *{work}* (Perseus; not in GLAUx): the shipped fit's top",
                  f"genre per passage is {counts}; mean probability {genre['mean_probabilities'][top]:.0%} {top}, "
                  f"{genre['mean_probabilities'].get('Epic poetry', 0.0):.0%} Epic poetry. GLAUx files the Homeric",
                  "hymns (hexameter, Ionic/Epic) under \"Lyric poetry\", so the attributor is not in the default pipeline",
                  "(`stoicheia_spacy.assembly.extend(nlp, attributor_config())` adds it)."]
    lines.append("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arms", type=Path, nargs="*", help="Per-arm files of evaluate.py to merge into METRICS")
    parser.add_argument("--attribute", type=Path, help="attribute.py's metrics: the literary (GLAUx) section")
    parser.add_argument("--training", type=Path, help="train.py's training.json: what the shipped dater chose")
    args = parser.parse_args()
    if args.arms:
        parts = [json.loads(path.read_text()) for path in args.arms if path.is_file()]
        merged = {**parts[0], "arms": {arm: r for part in parts for arm, r in part["arms"].items()}}
        merged["paired_tests"] = paired_tests(merged["arms"])
        args.metrics.write_text(json.dumps(merged, indent=2) + "\n")
    m = json.loads(args.metrics.read_text())
    if args.training is not None and args.training.is_file():
        m["shipped"] = json.loads(args.training.read_text())
        args.metrics.write_text(json.dumps(m, indent=2) + "\n")
    level = f"{m['level']:.0%}"
    lines = [
        "# Dating documentary papyri (PaDoC)", "",
        f"Measured by `{m['command']}` (workflow `all` of `projects/date`: `embed`, `evaluate`, `glaux-embed`,",
        "`attribute`, `train`, `report`);",
        "every figure below is read from `metrics/date_eval.json` by `scripts/report.py`.", "",
        f"Protocol: {m['n_documents']} PaDoC papyri, {m['protocol']}; dates in years (PaDoC's quarter",
        "centuries x 100). The ridge strength is chosen inside each training part (leave-one-out), the",
        f"{level} interval is the prediction plus the 5th / 95th percentiles of 5-fold out-of-fold residuals",
        f"of the training part. Backbone arms pool the mean over letters of hidden states {m['layers']} of the",
        "first 800 characters of each text (`embed.py --max-chars`; the shipped dater pools the same letters",
        "of `doc._.stoicheia`, its cfg `max_chars`). The random-init arm reads the states of a",
        "backbone of the same shape with random weights (seed 0); the stacked arm combines the TF-IDF and",
        "pretrained ridges by a linear regression on their 5-fold out-of-fold predictions, all inside each",
        "training part (its interval: the residuals of those stacked predictions). The word n-gram kernel",
        "(`stoicheia_spacy.date.text`, fitted by `scripts/kernel.py`) folds each text to Greek word keys",
        "(case, diacritics, sigma forms folded; numerals, sigla and Latin dropped), builds binary word 1-3-gram",
        "TF-IDF rows and dates a papyrus by the weighted median year of its k most similar training papyri",
        "(weights exp((s - s_max) / tau) x exp(-|year - ridge prior| / lam), the prior a ridge over the same",
        "features): tau, k and lam are chosen inside each training part by leave-one-out MAE over that part",
        "(grid tau 0.02-0.4, k 5-40, lam 50-1600 or none; the ridge alone competes too), and its interval comes from those leave-one-out",
        "residuals; no test papyrus informs any choice.", "",
        f"| arm | MAE (years) | median AE | {level} coverage | mean interval width | MAE sd over repeats |",
        "|---|---|---|---|---|---|",
    ]
    for arm, r in m["arms"].items():
        lines.append(f"| {NAMES.get(arm, arm)} | {r['mae']:.1f} | {r['median_ae']:.1f} | {r['coverage']:.1%} | "
                     f"{r['width']:.0f} | {r['mae_sd_over_repeats']:.1f} |")
    missing = [NAMES[arm] for arm in NAMES if arm not in m["arms"]]
    pub = m["published"]
    lines += [f"| PaDoC published text regression ({pub['protocol']}) | {pub['padoc_text_regression_mae']:.0f} "
              "| – | – | – | – |", ""]
    for arm in KERNEL_ARMS:
        chosen = m["arms"].get(arm, {}).get("chosen_per_fold")
        if chosen:
            lines += [f"{NAMES[arm]}: settings chosen over the {len(chosen)} training parts: "
                      + chosen_summary(chosen) + ".", ""]
    lines += states_section(m)
    if missing:
        lines += [f"Not measured in this run (out of CPU time on the shared machine): {'; '.join(missing)}.", ""]
    if m.get("paired_tests"):
        lines += ["Paired tests (Wilcoxon signed-rank on the per-papyrus absolute errors, each the mean over the",
                  "repeats; a negative difference means the first arm errs less):", "",
                  "| arms | mean difference (years) | median difference | p |", "|---|---|---|---|"]
        for pair, t in m["paired_tests"].items():
            lines.append(f"| {pair} | {t['mean_difference_years']:+.1f} | {t['median_difference_years']:+.1f} | "
                         f"{t['wilcoxon_p']:.2g} |")
        lines.append("")
    wild = {arm: r["in_the_wild"] for arm, r in m["arms"].items() if "in_the_wild" in r}
    if wild:
        n = next(iter(wild.values()))["n"]
        lines += [f"In-the-wild papyri (n = {n}, only an upper date limit known; each arm fitted on all of PaDoC):", "",
                  "| arm | estimate not after the limit | interval low end not after the limit | mean years before the limit |",
                  "|---|---|---|---|"]
        for arm, w in wild.items():
            lines.append(f"| {NAMES.get(arm, arm)} | {w['estimate_not_after_limit']:.1%} | "
                         f"{w['interval_low_not_after_limit']:.1%} | {w['mean_years_before_limit']:.0f} |")
        lines.append("")
    if "text-kernel" in wild:
        lines += ["The kernel dates the in-the-wild papyri closer to their upper limits than the ridge arms do, and",
                  "more of its estimates (and interval low ends) fall after the limit: it does not transfer as well",
                  "to these undated papyri as its PaDoC cross-validation suggests.", ""]
    lines += ["![PaDoC leave-one-out estimates of the shipped dater and one date distribution](metrics/date_distribution.png)", "",
              "How the kernel was arrived at: during development single-repeat runs on these outer folds compared",
              "ridge, nearest neighbours, similarity-weighted neighbours (mean and median), an RBF SVR, extra",
              "trees and a logistic regression over centuries on TF-IDF features; the weighted-median kernel with",
              "a ridge prior was kept, and from then on its features were fixed and its settings chosen only",
              "inside each training part. That family choice saw outer-fold errors, so the kernel's MAE may be",
              "slightly optimistic.", "",
              "Caveats: PaDoC's 54 years is leave-one-out (its README: 389 regression models, each trained on",
              "the other 388 papyri; average MAE 54 years, MSE 1.17 in centuries squared) with the features and",
              "regressor of its paper, not re-run here; ours is repeated 5-fold grouped by TM number (about 311",
              "training papyri per fold), so the comparison is indicative and, if anything, favours PaDoC.",
              "Decontamination: the shipped",
              "backbone is doc-clean (literary Greek only, no papyri, no word 8-gram shared with any papyrus,",
              "`projects/corpus`, PaDoC and the in-the-wild set included): no test papyrus was read in pretraining.",
              *shipped_lines(m.get("shipped")),
              "derived from PaDoC (they hold its 389 papyri's n-gram rows and dates), they are licensed",
              "CC BY 4.0 and ship with the default model",
              "(`assets/models/grc_stoicheia_doc_clean/dater`, named by its `config.cfg`), not in the code package.", ""]
    if args.attribute is not None and args.attribute.is_file():
        lines += literary(json.loads(args.attribute.read_text()), args.attribute.name)
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
