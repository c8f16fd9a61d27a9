"""Invented lemmas and lemma accuracy of the default lemmatizer on a CoNLL-U file.

A lemma is *attested* when it is in the lemmatizer's lexicon (every lemma of the training
treebanks' fold-0 train sentences, shipped in the component's data); it is *invented* when it is
neither attested nor the lemmatizer's flagged back-off (``token._.lemma_backoff``, the form itself).
The encoder runs once; each token's 200 best script scores are cached in ``--cache`` so that a
second run (after a decoder change) reads the same scores.

    python scripts/lemma_attestation.py TEST.conllu[.xz] OUT.json --label before|after
        [--cache scores.npz] [--limit N] [--top-k K] [--max-drop NATS] [--prefer-form NATS]

OUT.json keeps one entry per label, so ``before`` and ``after`` sit side by side.
"""

from __future__ import annotations

import argparse
import json
import lzma
import time
import unicodedata
from pathlib import Path

import numpy as np
from spacy.tokens import Doc

TOP = 200


def read_conllu(path: Path, limit: int = 0) -> list[list[tuple[str, str]]]:
    """Sentences of (form, lemma) pairs; multiword-token and empty-node lines are skipped."""
    opener = lzma.open if path.suffix == ".xz" else open
    sents, cur = [], []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if cur:
                    sents.append(cur)
                    cur = []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:
                continue
            cur.append((unicodedata.normalize("NFC", cols[1]), unicodedata.normalize("NFC", cols[2])))
    if cur:
        sents.append(cur)
    return sents[:limit] if limit else sents


def cached_scores(nlp, sents, cache: Path | None) -> tuple[np.ndarray, np.ndarray]:
    """Per-token (indices, scores) of the TOP best scripts, from ``cache`` when it exists."""
    if cache is not None and cache.is_file():
        z = np.load(cache)
        return z["idx"], z["val"]
    lem = nlp.get_pipe("stoicheia_lemmatizer")
    docs = [Doc(nlp.vocab, words=[f for f, _ in s], sent_starts=[True] + [False] * (len(s) - 1)) for s in sents]
    skip = [n for n in nlp.pipe_names if n != "stoicheia_encoder"]
    idx, val = [], []
    for doc in nlp.pipe(docs, batch_size=16, disable=skip):
        logits = np.asarray(lem.predict([doc])[0])
        top = np.argsort(-logits, axis=1)[:, :TOP]
        idx.append(top.astype(np.int32))
        val.append(np.take_along_axis(logits, top, axis=1).astype(np.float32))
    out = np.concatenate(idx), np.concatenate(val)
    if cache is not None:
        np.savez_compressed(cache, idx=out[0], val=out[1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("conllu", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--label", required=True)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--top-k", type=int, default=0, help="override the lemmatizer's top_k")
    ap.add_argument("--max-drop", type=float, default=0.0, help="override the lemmatizer's max_drop")
    ap.add_argument("--prefer-form", type=float, default=-1.0, help="override the lemmatizer's prefer_form")
    args = ap.parse_args()

    from stoicheia_spacy.cli.loading import load_for

    nlp = load_for("parse")
    lem = nlp.get_pipe("stoicheia_lemmatizer")
    changes: dict = {k: v for k, v in (("top_k", args.top_k), ("max_drop", args.max_drop)) if v}
    if args.prefer_form >= 0:
        changes["prefer_form"] = args.prefer_form
    if changes:
        lem.configure(**changes)
    sents = read_conllu(args.conllu, args.limit)
    t0 = time.perf_counter()
    idx, val = cached_scores(nlp, sents, args.cache)
    n_scripts = len(lem.scripts)
    lexicon = frozenset(lem.data["lexicon"])
    flagged = getattr(lem, "lemmatize_flagged", None)
    stats = {"tokens": 0, "correct": 0, "invented": 0, "backoff": 0, "backoff_correct": 0}
    examples: dict[str, str] = {}
    row = 0
    for sent in sents:
        forms = [f for f, _ in sent]
        dense = np.full((len(forms), n_scripts), -1e9, dtype=np.float32)
        rows = slice(row, row + len(forms))
        np.put_along_axis(dense, idx[rows].astype(np.int64), val[rows], axis=1)
        row += len(forms)
        if flagged is not None:
            lemmas, backoff = flagged(forms, dense)
        else:
            lemmas, backoff = lem.lemmatize(forms, dense), [False] * len(forms)
        for (form, gold), lemma, back in zip(sent, lemmas, backoff, strict=True):
            if not any(c.isalpha() for c in form):
                continue
            stats["tokens"] += 1
            stats["correct"] += lemma == gold
            stats["backoff"] += back
            stats["backoff_correct"] += back and lemma == gold
            if lemma not in lexicon and not back:
                stats["invented"] += 1
                if len(examples) < 20:
                    examples[form] = lemma
    result = {**stats, "lemma_accuracy": round(100 * stats["correct"] / max(stats["tokens"], 1), 2),
              "invented_examples": examples, "sentences": len(sents), "seconds": round(time.perf_counter() - t0, 1),
              "lexicon_lemmas": len(lexicon), "settings": {"top_k": lem.settings.top_k,
                                                           "max_drop": getattr(lem.settings, "max_drop", None),
                                                           "prefer_form": getattr(lem.settings, "prefer_form", None),
                                                           "use_lexicon": lem.settings.use_lexicon}}
    doc = json.loads(args.out.read_text()) if args.out.is_file() else {}
    doc.update({"file": args.conllu.name, "scope": "letter-bearing gold tokens; attested = in the lemmatizer's "
                "lexicon (fold-0 training lemmas); invented = not attested and not a flagged back-off",
                args.label: result})
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
