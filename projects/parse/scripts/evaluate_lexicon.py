"""Shipped heads vs the lookup baseline vs the form-table lemmatizer (issue 42, items 1 and 6).

    python scripts/evaluate_lexicon.py TABLE.npz TRAIN.spacy DATA.spacy OUT.json [--limit N]

One forward of the default pipeline's encoder, morphologizer and lemmatizer head on the gold
words and sentences of DATA (``--cache`` keeps the scores); they are then decoded as rows:

* ``shipped``: the default decoding (joint tags; top-50 scripts, training-lemma rescoring, back-off);
* ``lookup``: the lookup baseline: a form the table attests takes its most frequent lemma and
  XPOS (UPOS from that XPOS), any other form the shipped heads' answer;
* ``table_lemma_pB``: the lemmatizer with ``form_table`` on and ``table_prior`` B (an attested
  form takes one of the table's lemmas, the shipped decoding elsewhere); tags as shipped;
* ``table_tags_pB``: the morphologizer with ``form_table`` on and ``table_prior`` B (an attested
  form takes one of the table's tags); lemmas as shipped. The two are independent, so a
  pipeline with both on scores the UPOS/XPOS of the one and the lemmas of the other.

Accuracies (%) of UPOS, XPOS and Lemma over all words (punctuation included, as the CoNLL 2018
scorer counts them), and separately over in-vocabulary words (form seen in TRAIN, the heads'
training fold) and out-of-vocabulary ones, and over words the table attests or not. The parser
is not run: no row changes a tree. Each row's lemma/tag time is the decoding alone.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import spacy
from spacy.tokens import Doc, DocBin

from stoicheia_spacy.morph.agdt_to_ud import agdt_to_upos
from stoicheia_spacy.morph.formtable import FormTable
from stoicheia_spacy.morph.ud import MORPH_GROUPS
from stoicheia_spacy.tokenizer import word_texts

KEEP = ("stoicheia_encoder", "stoicheia_morphologizer", "stoicheia_lemmatizer")


#: script scores kept per token in the cache (the lemmatizer reads its top 50)
KEPT_SCRIPTS = 100
#: weights of the table's share (``table_prior``) tried for the table rows
PRIORS = (0.0, 0.5, 1.0, 2.0, 4.0)


def top_scripts(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The :data:`KEPT_SCRIPTS` best script ids and scores per token."""
    k = min(KEPT_SCRIPTS, logits.shape[1])
    idx = np.argpartition(-logits, k - 1, axis=1)[:, :k] if k < logits.shape[1] else np.argsort(-logits, axis=1)
    return idx.astype(np.int32), np.take_along_axis(logits, idx, axis=1).astype(np.float32)


def dense_scripts(top: tuple[np.ndarray, np.ndarray], n: int) -> np.ndarray:
    """Script scores with every script outside the kept ones far below them."""
    idx, val = top
    out = np.full((len(idx), n), -1e9, dtype=np.float32)
    np.put_along_axis(out, idx.astype(np.int64), val, axis=1)
    return out


def accuracy(hits: list[bool]) -> float | None:
    return round(100 * sum(hits) / len(hits), 2) if hits else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", type=Path)
    ap.add_argument("train", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--cache", type=Path, help="folder keeping the heads' scores between runs")
    a = ap.parse_args(argv)
    nlp = spacy.load("grc_stoicheia_doc_clean", exclude=[n for n in (
        "stoicheia_restorer", "stoicheia_accentuator", "stoicheia_parser", "stoicheia_scanner", "stoicheia_dater")])
    assert tuple(nlp.pipe_names) == KEEP, nlp.pipe_names
    lem = nlp.get_pipe("stoicheia_lemmatizer")
    table = FormTable.from_disk(a.table)
    train_forms = {t.text for d in DocBin().from_disk(a.train).get_docs(nlp.vocab) for t in d}
    sents = [s.as_doc() for d in DocBin().from_disk(a.data).get_docs(nlp.vocab) for s in d.sents]
    sents = sents[:a.limit] if a.limit else sents
    preds = [Doc(nlp.vocab, words=[t.text for t in s], spaces=[bool(t.whitespace_) for t in s],
                 sent_starts=[True] + [False] * (len(s) - 1)) for s in sents]
    morph = nlp.get_pipe("stoicheia_morphologizer")
    cache = a.cache / f"{a.data.stem}__{len(preds)}.pkl" if a.cache else None
    t_forward = 0.0
    if cache is not None and cache.is_file():
        morph_scores, lemma_scores, t_forward = pickle.loads(cache.read_bytes())
    else:
        morph_scores, lemma_scores = [], []
        for b in range(0, len(preds), a.batch):
            t0 = time.process_time()
            with nlp.select_pipes(enable=[KEEP[0]]):
                docs = list(nlp.pipe(preds[b:b + a.batch], batch_size=a.batch))
            morph_scores += [np.asarray(x)[:, :sum(MORPH_GROUPS)] for x in morph.predict(docs)]
            lemma_scores += [top_scripts(np.asarray(x)) for x in lem.predict(docs)]
            t_forward += time.process_time() - t0
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(pickle.dumps((morph_scores, lemma_scores, t_forward)))
    names = ["shipped", "lookup", *(f"table_tags_p{b:g}" for b in PRIORS), *(f"table_lemma_p{b:g}" for b in PRIORS)]
    rows: dict[str, dict[str, list]] = {k: {"upos": [], "xpos": [], "lemma": []} for k in names}
    iv, attested = [], []
    t_decode = {k: 0.0 for k in ("shipped", "table_tags", "table_lemma")}
    n_scripts = len(lem.scripts)
    for pred, gold, m_logits, l_top in zip(preds, sents, morph_scores, lemma_scores, strict=True):
        forms = word_texts(pred)
        l_logits = dense_scripts(l_top, n_scripts)
        t0 = time.process_time()
        upos, tags = morph.decode(m_logits)
        shipped = lem.lemmatize_flagged(forms, l_logits)[0]
        t_decode["shipped"] += time.process_time() - t0
        variants: dict[str, tuple[list[str], list[str], list[str]]] = {}
        for b in PRIORS:
            t0 = time.process_time()
            u_t, x_t = morph.table_decode(m_logits, forms, table, prior=b)
            t1 = time.process_time()
            l_t = lem.lemmatize_flagged(forms, l_logits, table, prior=b)[0]
            t_decode["table_tags"] += t1 - t0
            t_decode["table_lemma"] += time.process_time() - t1
            variants[f"table_tags_p{b:g}"] = (u_t, x_t, shipped)
            variants[f"table_lemma_p{b:g}"] = (upos, tags, l_t)
        looked = [table.best(form) for form in forms]
        l_look = [b[0] if b else shipped[k] for k, b in enumerate(looked)]
        x_look = [b[1] if b else tags[k] for k, b in enumerate(looked)]
        u_look = [agdt_to_upos(b[1], b[0]) if b else upos[k] for k, b in enumerate(looked)]
        variants["shipped"] = (upos, tags, shipped)
        variants["lookup"] = (u_look, x_look, l_look)
        train_hit = [form in train_forms for form in forms]
        iv += train_hit
        attested += [b is not None for b in looked]
        g_pos, g_tag, g_lemma = [t.pos_ for t in gold], [t.tag_ for t in gold], [t.lemma_ for t in gold]
        for name, (u, x, lemma) in variants.items():
            rows[name]["upos"] += [p == g for p, g in zip(u, g_pos, strict=True)]
            rows[name]["xpos"] += [p == g for p, g in zip(x, g_tag, strict=True)]
            rows[name]["lemma"] += [p == g for p, g in zip(lemma, g_lemma, strict=True)]
    result: dict = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])]),
                    "data": a.data.as_posix(), "words": len(iv), "sentences": len(sents),
                    "in_vocabulary_words": sum(iv), "table_attested_words": sum(attested),
                    "table_forms": len(table), "table_sources": table.sources,
                    "cpu_seconds": {"encoder_and_heads": round(t_forward, 1),
                                    **{f"decode_{k}": round(v, 2) for k, v in t_decode.items()}}, "rows": {}}
    for name, hits in rows.items():
        out = {}
        for metric, values in hits.items():
            out[metric] = accuracy(values)
            out[f"{metric}_iv"] = accuracy([v for v, k in zip(values, iv, strict=True) if k])
            out[f"{metric}_oov"] = accuracy([v for v, k in zip(values, iv, strict=True) if not k])
            out[f"{metric}_attested"] = accuracy([v for v, k in zip(values, attested, strict=True) if k])
            out[f"{metric}_unattested"] = accuracy([v for v, k in zip(values, attested, strict=True) if not k])
        result["rows"][name] = out
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
