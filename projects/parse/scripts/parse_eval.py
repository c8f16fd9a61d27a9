"""The default pipeline's morphosyntax rows (issue 42, item 6): one cached forward per split, every
decoding and the lookup baseline scored from it, the lookup weights fitted on dev.

    python scripts/parse_eval.py cache SPLIT CACHE_DIR [--mirror M]      # one split (SPLITS), resumable
    python scripts/parse_eval.py fit CACHE_DIR OUT.json [--dev other=fold0_dev,ud_proiel_dev --dev papyrus=papygreek_dev]
    python scripts/parse_eval.py score CACHE_DIR OUT.json --fit FIT.json [--mirror M]
    python scripts/parse_eval.py backoff CACHE_DIR OUT.json --fit FIT.json --splits fold0_dev,ud_proiel_dev

``cache`` runs the default pipeline's encoder, morphologizer, lemmatizer and parser (one torch
thread) on the gold words and sentences of a split (:data:`SPLITS`: a DocBin in the AGDT
annotation, a UD gold file, or both for UD Perseus test; a fixed stride of sentences where the
whole split would take over ten CPU minutes) and keeps the heads' scores (morphologizer logits,
the lemmatizer's best :data:`KEPT_SCRIPTS` script scores), the parser's AGDT tree (the parser
reads no tag, so every decoding shares it) and the CPU seconds of each component.

``fit`` decodes the dev splits (no test file: :data:`DEV_SPLITS`, the AGDT fold-0 dev sample and
UD PROIEL dev for literary and any other text, PapyGreek dev for papyri) with every weight of
:data:`TAG_WEIGHTS` / :data:`LEMMA_WEIGHTS` for the form table's analyses (score = heads'
log-probability + weight x log share of the analysis among the form's table counts, for a form
the table attests; the heads alone elsewhere) and picks, per domain and head, the weight whose
worst margin over the lookup baseline across that domain's dev splits is largest (:func:`choose`;
tags: mean of UPOS and XPOS accuracy, UPOS alone on UD PROIEL, whose XPOS are PROIEL's; lemmas:
lemma accuracy): the morphologizer's and lemmatizer's ``table_prior`` (``other``) and
``table_prior_papyrus`` (``papyrus``). It also scores the heads alone, the lookup and main's
decoding (``shipped``) on each dev split. The pipeline takes the papyrus weights for a Doc whose ``doc._.domain`` is
``papyrus`` (``restore_epidoc`` sets it from a DDbDP file's header; a caller may set it, or the
``domain`` setting), the others for any other Doc: the text itself is not read, since
:func:`stoicheia_spacy.restore.domain.text_domain` reads most literary treebank sentences as papyri.

``score`` decodes every test split as the rows of :data:`ROWS` (the heads alone; the decoding
main shipped, :data:`SHIPPED`; the fitted weights of the split's domain with the lemmatizer's
``table_lexicon``, and on PapyGreek also without its domain; the
lookup baseline: an attested form's most frequent lemma and XPOS, the heads elsewhere) and
scores them with the CoNLL 2018 metrics (``stoicheia_lab.scoring.conll``, gold tokens): in the
AGDT annotation where the split has it, in UD labels through the AGDT -> UD conversion with
``ud_eval.score_split`` where it has a UD gold file. Beside the scores: UPOS/XPOS/lemma accuracy
on in-vocabulary words (form among fold 0's training words) and out-of-vocabulary ones, words
per CPU second (one thread, so per core: the four components' forward plus the row's decoding),
and exact McNemar tests (``scipy.stats.binomtest`` on the discordant words) of the fitted row and
of the shipped one against the lookup baseline on UPOS and lemma. Writes OUT.json and OUT.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

#: split -> where its gold comes from: ``docbin`` (AGDT annotation, relative to the project),
#: ``conllu`` (UD gold, relative to the mirror), ``stride`` (every k-th sentence), ``role``,
#: ``domain`` (``doc._.domain`` a user or ``restore_epidoc`` gives its texts; unset: none), ``xpos``
#: (False: the gold XPOS are another tag set, PROIEL's, so no XPOS score is shown)
SPLITS: dict[str, dict[str, Any]] = {
    "fold0_dev": {"docbin": "corpus/fold0/dev.spacy", "stride": 25, "role": "dev",
                  "name": "AGDT fold-0 dev (every 25th sentence)"},
    "papygreek_dev": {"docbin": "corpus/papygreek_reg_dev.spacy", "role": "dev", "domain": "papyrus",
                      "name": "PapyGreek dev (documents with id ending in 0/1)"},
    "agdt_test": {"docbin": "corpus/test.spacy", "stride": 10, "role": "test",
                  "name": "shared AGDT test (every 10th sentence)"},
    "ud_perseus_test": {"docbin": "corpus/ud_perseus_test_agdt.spacy",
                        "conllu": "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz", "role": "test",
                        "name": "UD Perseus test"},
    "ud_proiel_dev": {"conllu": "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-dev.conllu.xz", "role": "dev",
                      "xpos": False, "name": "UD PROIEL dev"},
    "ud_proiel_test": {"conllu": "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz", "role": "test",
                       "xpos": False,
                       "name": "UD PROIEL test"},
    "papygreek_test": {"docbin": "corpus/papygreek_reg_test.spacy", "role": "test", "domain": "papyrus",
                       "name": "PapyGreek held out (test documents)"},
}
PIPES = ("stoicheia_encoder", "stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
TRAIN = "corpus/fold0/train.spacy"
#: script scores kept per word (the lemmatizer reads its best 50)
KEPT_SCRIPTS = 100
#: the table weights ``fit`` tries (tags: the morphologizer's ``table_prior``; lemmas: the lemmatizer's)
TAG_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0)
LEMMA_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: the dev splits each domain's weights are fitted on (``fit``; ``--dev`` overrides)
DEV_SPLITS = {"other": "fold0_dev,ud_proiel_dev", "papyrus": "papygreek_dev"}
#: the decoding main shipped (48e3230), per domain: form_table on, (tag weight, lemma weight), the
#: lemmatizer's ``table_lexicon`` off (it did not exist)
SHIPPED: dict[str, tuple[float, float]] = {"other": (0.0, 2.0), "papyrus": (12.0, 1.0)}
#: rows of ``score`` (``fitted_domain_unset`` only on a split with a domain: its texts without ``doc._.domain``)
ROWS = ("heads", "shipped", "fitted", "fitted_domain_unset", "lookup")


def nlp_and_pipes(overrides: dict[str, Any] | None = None) -> tuple[Any, Any, Any, Any]:
    """The default pipeline (with config ``overrides``) cut to the four morphosyntax components,
    and those with scores."""
    import spacy

    nlp = spacy.load("grc_stoicheia_doc_clean", config=overrides or {})
    nlp.select_pipes(enable=[p for p in PIPES if p in nlp.pipe_names])
    assert tuple(nlp.pipe_names) == PIPES, nlp.pipe_names
    return nlp, nlp.get_pipe(PIPES[1]), nlp.get_pipe(PIPES[2]), nlp.get_pipe(PIPES[3])


def gold_sentences(project: Path, mirror: Path, split: str) -> tuple[list[list[dict[str, Any]]] | None,
                                                                      list[list[dict[str, Any]]] | None]:
    """(AGDT gold words, UD gold words) of a split's sentences (None where it has no such gold),
    after the split's stride; the two are the same sentences where both exist."""
    import spacy
    from spacy.tokens import DocBin
    from stoicheia_lab.scoring.conll import read_conllu

    from stoicheia_spacy.morph.conllu import span_words

    spec = SPLITS[split]
    stride = spec.get("stride", 1)
    agdt = ud = None
    if "docbin" in spec:
        vocab = spacy.blank("grc").vocab
        # FORM = the token's text, as the pipeline reads it (span_words writes a bracket alone as '')
        agdt = [[{**w, "form": t.text} for w, t in zip(span_words(s), s, strict=True)]
                for d in DocBin().from_disk(project / spec["docbin"]).get_docs(vocab) for s in d.sents]
        agdt = agdt[::stride]
    if "conllu" in spec:
        ud = read_conllu(mirror / spec["conllu"])[::stride]
    if agdt is not None and ud is not None:
        same = len(agdt) == len(ud) and all([w["form"] for w in a] == [w["form"] for w in u]
                                           for a, u in zip(agdt, ud, strict=True))
        if not same:
            raise SystemExit(f"{split}: the AGDT and UD gold sentences differ")
    return agdt, ud


def split_words(project: Path, mirror: Path, split: str) -> tuple[list[list[dict[str, Any]]] | None,
                                                                  list[list[dict[str, Any]]]]:
    """(AGDT gold words or None, the words a split is parsed on: its AGDT gold, else its UD gold)."""
    agdt, ud = gold_sentences(project, mirror, split)
    words = agdt if agdt is not None else ud
    assert words is not None
    return agdt, words


def cached_already(out: Path, split: str) -> bool:
    """Whether a split's cache file exists (said aloud: it is kept, not redone)."""
    if out.exists():
        print(f"{split}: cached in {out}")
        return True
    return False


def gold_docs(vocab: Any, sentences: Sequence[Sequence[dict[str, Any]]], domain: str | None = None) -> list[Any]:
    """One Doc per gold sentence (its forms and spacing, one sentence start; ``doc._.domain``)."""
    from spacy.tokens import Doc

    docs = []
    for s in sentences:
        doc = Doc(vocab, words=[w["form"] for w in s], spaces=[not no_space_after(w) for w in s],
                  sent_starts=[True, *[False] * (len(s) - 1)])
        if domain:
            doc._.domain = domain
        docs.append(doc)
    return docs


def no_space_after(word: dict[str, Any]) -> bool:
    """Whether a CoNLL-U word's MISC says ``SpaceAfter=No`` (a dict from ``conllu``, or text)."""
    misc = word.get("misc")
    if isinstance(misc, dict):
        return misc.get("SpaceAfter") == "No"
    return "SpaceAfter=No" in str(misc or "")


def top_scripts(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The :data:`KEPT_SCRIPTS` best script ids and scores per word (the ranking below them is
    all the lemmatizer reads; a shift of a word's scores changes none of its decisions)."""
    k = min(KEPT_SCRIPTS, logits.shape[1])
    idx = np.argpartition(-logits, k - 1, axis=1)[:, :k] if k < logits.shape[1] else np.argsort(-logits, axis=1)
    return idx.astype(np.int32), np.take_along_axis(logits, idx, axis=1).astype(np.float32)


def dense_scripts(top: tuple[np.ndarray, np.ndarray], n: int) -> np.ndarray:
    idx, val = top
    out = np.full((len(idx), n), -1e9, dtype=np.float32)
    np.put_along_axis(out, idx.astype(np.int64), val, axis=1)
    return out


def cache(split: str, cache_dir: Path, project: Path, mirror: Path, batch: int = 16) -> Path:
    """Step ``cache`` of one split (module doc); an existing cache file is kept."""
    import torch

    from stoicheia_spacy.morph.ud import MORPH_GROUPS

    out = cache_dir / f"{split}.pkl"
    if cached_already(out, split):
        return out
    torch.set_num_threads(1)
    agdt, words = split_words(project, mirror, split)
    nlp, morph, lem, parser = nlp_and_pipes()
    encoder = nlp.get_pipe(PIPES[0])
    cpu = dict.fromkeys(PIPES, 0.0)
    m_scores, l_scores, heads, deprels = [], [], [], []
    for b in range(0, len(words), batch):
        docs = gold_docs(nlp.vocab, words[b:b + batch])
        t0 = time.process_time()
        encoder.set_annotations(docs, encoder.predict(docs))
        t1 = time.process_time()
        m = morph.predict(docs)
        t2 = time.process_time()
        lemma = [np.asarray(x) for x in lem.predict(docs)]
        t3 = time.process_time()
        parser.set_annotations(docs, parser.predict(docs))
        t4 = time.process_time()
        for name, seconds in zip(PIPES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            cpu[name] += seconds
        m_scores += [np.asarray(x)[:, :sum(MORPH_GROUPS)].astype(np.float32) for x in m]
        l_scores += [top_scripts(x) for x in lemma]
        for doc in docs:
            heads.append([0 if t.head.i == t.i else t.head.i + 1 for t in doc])
            deprels.append([t.dep_ for t in doc])
        print(f"{split}: {min(b + batch, len(words))}/{len(words)} sentences, {sum(cpu.values()):.0f} CPU s",
              flush=True)
    n_words = sum(len(s) for s in words)
    record = {"split": split, "spec": SPLITS[split], "sentences": len(words), "words": n_words,
              "forms": [[w["form"] for w in s] for s in words], "agdt_gold": agdt, "morph": m_scores,
              "lemma_top": l_scores, "n_scripts": len(lem.scripts), "heads": heads, "deprels": deprels,
              "cpu_seconds": {k: round(v, 2) for k, v in cpu.items()}, "torch_threads": torch.get_num_threads()}
    cache_dir.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pickle.dumps(record))
    print(f"{split}: {n_words} words, {len(words)} sentences, CPU s {record['cpu_seconds']}", flush=True)
    return out


# ---------------------------------------------------------------------------------------------- decoding
Decoded = tuple[list[list[str]], list[list[str]], list[list[str]]]  # UPOS, XPOS, lemma per sentence


#: a decoding: None = the heads alone, "lookup" = the baseline, (tag weight, lemma weight) with the
#: form table on, or (tag weight, lemma weight, table_lexicon): the lemmatizer's ``table_lexicon``
#: setting (the table's lemmas attested for the forms it does not attest; off in a 2-tuple)
Row = str | tuple[float, float] | tuple[float, float, bool] | None


def decode(record: dict[str, Any], morph: Any, lem: Any, table: Any, row: Row,
           parts: tuple[str, ...] = ("tags", "lemmas")) -> tuple[Decoded, float]:
    """UPOS, XPOS and lemmas of every cached sentence, decoded as ``row`` (:data:`Row`), and the
    CPU seconds the decoding took; a part left out of ``parts`` is empty."""
    from stoicheia_spacy.morph.agdt_to_ud import agdt_to_upos

    ups, xps, lems = [], [], []
    settings = lem.settings
    lem.settings = settings.replace(table_lexicon=isinstance(row, tuple) and len(row) == 3 and bool(row[2]))
    t0 = time.process_time()
    for forms, m_logits, l_top in zip(record["forms"], record["morph"], record["lemma_top"], strict=True):
        upos, tags, lemmas = [], [], []
        if row is None or row == "lookup":
            if "tags" in parts:
                upos, tags = morph.decode(m_logits)
            if "lemmas" in parts:
                lemmas = lem.lemmatize_flagged(forms, dense_scripts(l_top, record["n_scripts"]))[0]
            if row == "lookup":
                best = [table.best(f) for f in forms]
                if "lemmas" in parts:
                    lemmas = [b[0] if b else lemmas[k] for k, b in enumerate(best)]
                if "tags" in parts:
                    upos = [agdt_to_upos(b[1], b[0]) if b else upos[k] for k, b in enumerate(best)]
                    tags = [b[1] if b else tags[k] for k, b in enumerate(best)]
        else:
            w_tag, w_lemma = cast(tuple[float, float], row[:2])
            if "tags" in parts:
                upos, tags = morph.table_decode(m_logits, forms, table, prior=w_tag)
            if "lemmas" in parts:
                lemmas = lem.lemmatize_flagged(forms, dense_scripts(l_top, record["n_scripts"]), table,
                                               prior=w_lemma)[0]
        ups.append(upos)
        xps.append(tags)
        lems.append(lemmas)
    seconds = time.process_time() - t0
    lem.settings = settings
    return (ups, xps, lems), seconds


def merged(tags: Decoded, lemmas: Decoded) -> Decoded:
    """UPOS and XPOS of one decoding with the lemmas of another."""
    return tags[0], tags[1], lemmas[2]


def pred_words(record: dict[str, Any], decoded: Decoded) -> list[list[dict[str, Any]]]:
    """CoNLL-U words of a decoding (the cached AGDT tree, FEATS from the tag)."""
    from stoicheia_spacy.morph.agdt_to_ud import agdt_to_feats

    out = []
    for s, forms in enumerate(record["forms"]):
        out.append([{"id": k + 1, "form": f, "lemma": decoded[2][s][k], "upos": decoded[0][s][k],
                     "xpos": decoded[1][s][k], "feats": agdt_to_feats(decoded[1][s][k]) if len(decoded[1][s][k]) == 9
                     else "_", "head": record["heads"][s][k], "deprel": record["deprels"][s][k],
                     "deps": "_", "misc": "_"} for k, f in enumerate(forms)])
    return out


def hits(gold: Sequence[Sequence[dict[str, Any]]], pred: Sequence[Sequence[dict[str, Any]]]) -> dict[str, np.ndarray]:
    """Per-word correctness of UPOS, XPOS and lemma (as the CoNLL 2018 scorer counts them)."""
    flat = [(g, p) for gs, ps in zip(gold, pred, strict=True) for g, p in zip(gs, ps, strict=True)]
    return {"upos": np.array([g["upos"] == p["upos"] for g, p in flat]),
            "xpos": np.array([g["xpos"] == p["xpos"] for g, p in flat]),
            "lemma": np.array([g["lemma"] in ("_", p["lemma"]) for g, p in flat])}


def pct(x: np.ndarray) -> float | None:
    return round(100 * float(x.mean()), 2) if len(x) else None


def split_accuracy(h: dict[str, np.ndarray], iv: np.ndarray) -> dict[str, float | None]:
    """Accuracy of each metric overall, on in-vocabulary and on out-of-vocabulary words."""
    out: dict[str, float | None] = {}
    for metric, v in h.items():
        out[metric] = pct(v)
        out[f"{metric}_iv"] = pct(v[iv])
        out[f"{metric}_oov"] = pct(v[~iv])
    return out


def mcnemar(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Exact McNemar test of two rows' per-word correctness: the words only ``a`` gets right
    (``a_only``) against those only ``b`` does, binomial with p = 1/2."""
    from scipy.stats import binomtest

    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    p = binomtest(a_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
    return {"a_only": a_only, "b_only": b_only, "p_exact": float(f"{p:.3g}")}


def load_context(project: Path, table_path: Path | None) -> tuple[Any, Any, Any, frozenset[str]]:
    """Morphologizer, lemmatizer, form table and fold 0's training forms."""
    import spacy
    from spacy.tokens import DocBin

    from stoicheia_spacy.morph.formtable import FormTable, load_form_table

    _nlp, morph, lem, _parser = nlp_and_pipes()
    table = FormTable.from_disk(table_path) if table_path else load_form_table()
    if table is None:
        raise SystemExit("no form table: pass --table or install the lexicon data package")
    vocab = spacy.blank("grc").vocab
    train = frozenset(t.text for d in DocBin().from_disk(project / TRAIN).get_docs(vocab) for t in d)
    return morph, lem, table, train


def in_vocabulary(record: dict[str, Any], train: frozenset[str]) -> np.ndarray:
    return np.array([f in train for s in record["forms"] for f in s])


def gold_words(record: dict[str, Any], mirror: Path) -> list[list[dict[str, Any]]]:
    """The gold words a cached split is scored against: its AGDT gold, else its UD gold file
    (after the split's stride)."""
    from stoicheia_lab.scoring.conll import read_conllu

    if record["agdt_gold"] is not None:
        return cast(list[list[dict[str, Any]]], record["agdt_gold"])
    spec = SPLITS[record["split"]]
    return read_conllu(mirror / spec["conllu"])[::spec.get("stride", 1)]


def tag_score(split: str, acc: dict[str, Any]) -> float:
    """What ``fit`` maximises for tags: the mean of UPOS and XPOS accuracy, UPOS alone on a split
    whose gold XPOS are another tag set."""
    return float(acc["upos"] + acc["xpos"]) / 2 if SPLITS[split].get("xpos", True) else float(acc["upos"])


def choose(weights: Sequence[float], score_of: dict[str, dict[float, float]],
           lookup: dict[str, float]) -> tuple[float, str]:
    """The weight ``fit`` takes for one domain and head from its dev splits' scores (``score_of``:
    split -> weight -> score; ``lookup``: split -> the lookup baseline's score): the one whose worst
    margin over the lookup across the splits is largest (the default must lose to the lookup on no
    held-out set, so the weight that is furthest from losing on any dev split; with one split, the
    best score); ties: the better mean score, then the smaller weight."""
    splits = list(score_of)

    def margin(w: float) -> float:
        return min(score_of[s][w] - lookup[s] for s in splits)

    def mean(w: float) -> float:
        return sum(score_of[s][w] for s in splits) / len(splits)

    best = max(weights, key=lambda w: (round(margin(w), 6), round(mean(w), 6), -w))
    return best, f"largest worst margin over the lookup: {margin(best):+.3f} points"


def fit(cache_dir: Path, out: Path, devs: dict[str, list[str]], project: Path, mirror: Path,
        table_path: Path | None) -> dict[str, Any]:
    """Step ``fit`` (module doc): ``devs`` maps each domain weight (``other``, ``papyrus``) to
    the dev splits it is fitted on (:func:`choose`)."""
    morph, lem, table, train = load_context(project, table_path)
    per_dev: dict[str, dict[str, Any]] = {}
    records = {dev: pickle.loads((cache_dir / f"{dev}.pkl").read_bytes()) for dev in
               dict.fromkeys(d for ds in devs.values() for d in ds)}
    domain_of = {d: domain for domain, ds in devs.items() for d in ds}
    for dev, record in records.items():
        gold, iv = gold_words(record, mirror), in_vocabulary(record, train)
        rows: dict[str, dict[str, Any]] = {}
        # a tag weight changes no lemma and a lemma weight no tag: each is decoded once per weight,
        # the tag rows with the lemmas of the first lemma weight and the lemma rows with the tags of
        # the first tag weight
        by_tag = {w: decode(record, morph, lem, table, (w, 0.0, True), ("tags",))[0] for w in TAG_WEIGHTS}
        by_lemma = {w: decode(record, morph, lem, table, (0.0, w, True), ("lemmas",))[0] for w in LEMMA_WEIGHTS}
        for name, decoded in [("heads", decode(record, morph, lem, table, None)[0]),
                              ("lookup", decode(record, morph, lem, table, "lookup")[0]),
                              ("shipped", decode(record, morph, lem, table, SHIPPED[domain_of[dev]])[0]),
                              *((f"tags_w{w:g}", merged(d, by_lemma[LEMMA_WEIGHTS[0]])) for w, d in by_tag.items()),
                              *((f"lemmas_w{w:g}", merged(by_tag[TAG_WEIGHTS[0]], d)) for w, d in by_lemma.items())]:
            rows[name] = split_accuracy(hits(gold, pred_words(record, decoded)), iv)
        per_dev[dev] = {"words": record["words"], "sentences": record["sentences"], "rows": rows}
        print(dev, json.dumps({k: (v["upos"], v["xpos"], v["lemma"]) for k, v in rows.items()}), flush=True)

    chosen: dict[str, tuple[float, float]] = {}
    how: dict[str, dict[str, str]] = {}
    for domain, splits in devs.items():
        w_tag, how_tag = choose(
            TAG_WEIGHTS, {s: {w: tag_score(s, per_dev[s]["rows"][f"tags_w{w:g}"]) for w in TAG_WEIGHTS}
                          for s in splits}, {s: tag_score(s, per_dev[s]["rows"]["lookup"]) for s in splits})
        w_lemma, how_lemma = choose(
            LEMMA_WEIGHTS, {s: {w: per_dev[s]["rows"][f"lemmas_w{w:g}"]["lemma"] for w in LEMMA_WEIGHTS}
                            for s in splits}, {s: per_dev[s]["rows"]["lookup"]["lemma"] for s in splits})
        chosen[domain] = (w_tag, w_lemma)
        how[domain] = {"tags": how_tag, "lemmas": how_lemma}
    result = {"devs": devs,
              "objective": {"tags": "(UPOS + XPOS) / 2 on each dev split (UPOS alone where the gold XPOS are "
                                    "another tag set)",
                            "lemmas": "lemma accuracy on each dev split",
                            "rule": "the largest worst margin over the lookup baseline across the domain's dev "
                                    "splits (with one split: the best score)",
                            "tie": "the better mean score, then the smaller weight"},
              "weights": {d: {"tag_weight": w[0], "lemma_weight": w[1]} for d, w in chosen.items()},
              "chosen_by": how,
              "shipped": {d: {"tag_weight": w[0], "lemma_weight": w[1]} for d, w in SHIPPED.items()},
              "shipped_row": "main's decoding at 48e3230 (the domain's shipped weights, table_lexicon off)",
              "table_lexicon": "on in every weight's row (the lemmatizer's setting; it changes only the lemmas of "
                               "forms the table does not attest, which no weight changes)",
              "settings": {"table_prior": "weights.other", "table_prior_papyrus": "weights.papyrus"},
              "dev": per_dev, "command": command_line()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("fitted:", json.dumps(result["weights"]), json.dumps(how))
    return result


def write_conllu(sents: Sequence[Sequence[dict[str, Any]]], path: Path) -> None:
    lines = []
    for s in sents:
        for w in s:
            lines.append("\t".join(str(w[k]) for k in ("id", "form", "lemma", "upos", "xpos", "feats", "head",
                                                      "deprel", "deps", "misc")) + "\n")
        lines.append("\n")
    path.write_text("".join(lines), encoding="utf-8")


def score(cache_dir: Path, out: Path, fit_json: Path, project: Path, mirror: Path,
          table_path: Path | None, splits: Sequence[str]) -> dict[str, Any]:
    """Step ``score`` (module doc)."""
    from stoicheia_lab.scoring.conll import score_conll
    from ud_eval import score_split

    fitted = json.loads(fit_json.read_text(encoding="utf-8"))
    per_domain = {d: (w["tag_weight"], w["lemma_weight"]) for d, w in fitted["weights"].items()}
    morph, lem, table, train = load_context(project, table_path)
    result: dict[str, Any] = {
        "pipeline": "grc_stoicheia_doc_clean", "tokens": "gold", "sentences": "gold",
        "scorer": "stoicheia_lab.scoring.conll (CoNLL 2018 metrics, punctuation included, relation subtypes ignored)",
        "rows": {"heads": "the heads alone (form_table off)",
                 "shipped": f"main at 48e3230: form_table on, the weights of the split's domain {json.dumps(SHIPPED)} "
                            "(tag, lemma), table_lexicon off",
                 "fitted": "form_table on with table_lexicon, the weights of the split's domain (doc._.domain = 'papyrus' on "
                           "PapyGreek, as restore_epidoc sets it for a DDbDP file or a user gives it; unset "
                           f"elsewhere): {json.dumps(fitted['weights'])}, fitted on {json.dumps(fitted['devs'])} "
                           f"({fit_json.name})",
                 "fitted_domain_unset": "the same pipeline on PapyGreek without doc._.domain: the 'other' weights",
                 "lookup": "lookup baseline: an attested form's most frequent lemma and XPOS (UPOS from them), "
                           "the heads elsewhere"},
        "in_vocabulary": "form among fold 0's training words (the heads' training data)",
        "words_per_core_second": "words / (CPU seconds of the four components' forward on one thread + the row's decoding)",
        "mcnemar": "exact (binomial on the discordant words), per split, row against lookup",
        "splits": {}, "command": command_line()}
    for split, record in cached_records(cache_dir, splits):
        spec = SPLITS[split]  # the current table (a cache keeps the spec it was made with)
        forward = sum(record["cpu_seconds"].values())
        entry: dict[str, Any] = {"name": spec["name"], "sentences": record["sentences"], "words": record["words"],
                                 "stride": spec.get("stride", 1), "cpu_seconds_forward": record["cpu_seconds"],
                                 "rows": {}}
        iv = in_vocabulary(record, train)
        entry["in_vocabulary_words"] = int(iv.sum())
        row_hits: dict[str, dict[str, np.ndarray]] = {}
        domain = spec.get("domain", "other")
        weights: dict[str, Row] = {"heads": None, "shipped": SHIPPED[domain],
                                   "fitted": (*per_domain[domain], True), "lookup": "lookup"}
        if domain != "other":
            weights["fitted_domain_unset"] = (*per_domain["other"], True)
        for name in (r for r in ROWS if r in weights):
            decoded, seconds = decode(record, morph, lem, table, weights[name])
            pred = pred_words(record, decoded)
            row: dict[str, Any] = {"words_per_core_second": round(record["words"] / (forward + seconds), 1),
                                   "decode_cpu_seconds": round(seconds, 2)}
            if record["agdt_gold"] is not None:
                row["agdt"] = {k: round(100 * v.accuracy, 2) for k, v in score_conll(record["agdt_gold"], pred).items()}
                h = hits(record["agdt_gold"], pred)
            if "conllu" in spec:
                with tempfile.TemporaryDirectory() as tmp:
                    pred_file = Path(tmp) / f"{split}.conllu"
                    write_conllu(pred, pred_file)
                    ud = score_split(pred_file, mirror / spec["conllu"])
                row["ud"] = ud["ud"]
                if record["agdt_gold"] is None:
                    from stoicheia_lab.scoring.conll import read_conllu

                    h = hits(read_conllu(mirror / spec["conllu"]), pred)
            row["accuracy"] = split_accuracy(h, iv)
            row_hits[name] = h
            entry["rows"][name] = row
            print(split, name, json.dumps(row["accuracy"]), flush=True)
        entry["mcnemar"] = {f"{a}_vs_lookup": {m: mcnemar(row_hits[a][m], row_hits["lookup"][m])
                                               for m in ("upos", "lemma")} for a in ("fitted", "shipped")}
        result["splits"][split] = entry
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown_table(result), encoding="utf-8")
    print(markdown_table(result))
    return result


def cached_records(cache_dir: Path, splits: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(split, cached record)`` of each of ``splits`` that has a cache in ``cache_dir`` (the others
    are named and skipped)."""
    for split in splits:
        path = cache_dir / f"{split}.pkl"
        if not path.exists():
            print(f"{split}: no cache, skipped")
            continue
        yield split, pickle.loads(path.read_bytes())


def backoff(cache_dir: Path, out: Path, fit_json: Path, project: Path, mirror: Path,
            table_path: Path | None, splits: Sequence[str]) -> dict[str, Any]:
    """Step ``backoff``: the lemmatizer's ``backoff`` settings (``"form"``, ``"script"``) on each
    cached split, every other setting as the fitted row (the split's domain weights,
    ``table_lexicon``): lemma accuracy overall, in and out of vocabulary, and exact McNemar between
    the two. Meant for the dev splits: the default is chosen there."""
    from stoicheia_spacy.morph.settings import BACKOFFS

    fitted = json.loads(fit_json.read_text(encoding="utf-8"))["weights"]
    morph, lem, table, train = load_context(project, table_path)
    result: dict[str, Any] = {"rows": {b: f"the fitted row ({fit_json.name}) with backoff = {b!r}" for b in BACKOFFS},
                              "splits": {}, "command": command_line()}
    settings = lem.settings
    for split, record in cached_records(cache_dir, splits):
        weights = fitted["papyrus" if SPLITS[split].get("domain") == "papyrus" else "other"]
        gold, iv = gold_words(record, mirror), in_vocabulary(record, train)
        correct: dict[str, np.ndarray] = {}
        entry: dict[str, Any] = {"words": record["words"], "rows": {}}
        for choice in BACKOFFS:
            lem.settings = settings.replace(backoff=choice)
            decoded, _ = decode(record, morph, lem, table, (weights["tag_weight"], weights["lemma_weight"], True),
                                parts=("lemmas",))
            correct[choice] = np.array([g["lemma"] in ("_", p) for gs, ps in zip(gold, decoded[2], strict=True)
                                        for g, p in zip(gs, ps, strict=True)])
            entry["rows"][choice] = {"lemma": pct(correct[choice]), "lemma_iv": pct(correct[choice][iv]),
                                     "lemma_oov": pct(correct[choice][~iv])}
        lem.settings = settings
        entry["mcnemar_script_vs_form"] = mcnemar(correct["script"], correct["form"])
        result["splits"][split] = entry
        print(split, json.dumps(entry["rows"]), flush=True)
    out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return result


def markdown_table(result: dict[str, Any]) -> str:
    """RESULTS.md's table of a ``score`` JSON: one line per (split, annotation, row)."""
    cols = ("UPOS", "XPOS", "UFeats", "Lemma", "UAS", "LAS")
    lines = ["| test set | labels | row | words | " + " | ".join(cols)
             + " | UPOS IV / OOV | Lemma IV / OOV | words/s per core |",
             "|---|---|---|---|" + "---|" * (len(cols) + 3)]
    for split, entry in result["splits"].items():
        shown = [c for c in cols if c != "XPOS" or SPLITS.get(split, {}).get("xpos", True)]
        for scheme, label in (("agdt", "AGDT"), ("ud", "UD")):
            for name, row in entry["rows"].items():
                if scheme not in row:
                    continue
                acc = row["accuracy"]
                lines.append(f"| {entry['name']} | {label} | {name} | {entry['words']} | "
                             + " | ".join(f"{row[scheme][c]:.2f}" if c in shown else "–" for c in cols)
                             + f" | {acc['upos_iv']} / {acc['upos_oov']} | {acc['lemma_iv']} / {acc['lemma_oov']}"
                             + f" | {row['words_per_core_second']} |")
    lines += ["", "| test set | test | UPOS: row only / lookup only, p | Lemma: row only / lookup only, p |",
              "|---|---|---|---|"]
    for entry in result["splits"].values():
        for pair, tests in entry["mcnemar"].items():
            lines.append(f"| {entry['name']} | {pair.replace('_', ' ')} | "
                         + " | ".join(f"{tests[m]['a_only']} / {tests[m]['b_only']}, {tests[m]['p_exact']:g}"
                                      for m in ("upos", "lemma")) + " |")
    return "\n".join(lines) + "\n"


def command_line() -> str:
    return "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=("cache", "fit", "score", "backoff"))
    ap.add_argument("args", nargs="+", help="cache: SPLIT CACHE_DIR; fit / score: CACHE_DIR OUT.json")
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("STOICHEIA_ASSET_MIRROR", "")))
    ap.add_argument("--project", type=Path, default=Path("."))
    ap.add_argument("--table", type=Path, help="form table .npz (default: the lexicon data package's)")
    ap.add_argument("--dev", action="append", help="fit: DOMAIN=SPLIT[,SPLIT...], the dev splits of a domain "
                    "weight (repeatable; default other=fold0_dev,ud_proiel_dev papyrus=papygreek_dev)")
    ap.add_argument("--fit", type=Path, help="score: the fit JSON")
    ap.add_argument("--splits", default=",".join(s for s, v in SPLITS.items() if v["role"] == "test"))
    a = ap.parse_args(argv)
    if a.stage == "cache":
        split, cache_dir = a.args
        if split not in SPLITS:
            ap.error(f"unknown split {split!r}; one of {list(SPLITS)}")
        cache(split, Path(cache_dir), a.project, a.mirror)
    elif a.stage == "fit":
        cache_dir, out = a.args
        pairs = [d.split("=", 1) for d in a.dev] if a.dev else [("other", DEV_SPLITS["other"]),
                                                                 ("papyrus", DEV_SPLITS["papyrus"])]
        devs = {domain: splits.split(",") for domain, splits in pairs}
        unknown = [s for ss in devs.values() for s in ss if s not in SPLITS or SPLITS[s]["role"] != "dev"]
        if unknown:
            ap.error(f"not dev splits: {unknown}")
        fit(Path(cache_dir), Path(out), devs, a.project, a.mirror, a.table)
    elif a.stage == "backoff":
        cache_dir, out = a.args
        if a.fit is None:
            ap.error("backoff needs --fit FIT.json")
        backoff(Path(cache_dir), Path(out), a.fit, a.project, a.mirror, a.table, a.splits.split(","))
    else:
        cache_dir, out = a.args
        if a.fit is None:
            ap.error("score needs --fit FIT.json")
        score(Path(cache_dir), Path(out), a.fit, a.project, a.mirror, a.table, a.splits.split(","))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
