"""CoNLL-2018-style scores of a trained pipeline on a DocBin, with gold tokens and gold sentences.

Any arm's ``model-best`` loads here (stoicheia heads, spaCy CNN, spacy-transformers); the
result goes to OUT.json, or with ``--arm`` to ``METRICS/{arm}__fold{k}__seed{s}__{split}.json``
(the names compare.py reads).

    python scripts/evaluate.py MODEL_DIR DATA.spacy OUT.json [--limit N]
    python scripts/evaluate.py MODEL_DIR DATA.spacy --arm cnn --fold 0 --seed 0 --split test
        [--metrics metrics] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin


def load_model(model: str | Path) -> Language:
    """``spacy.load`` a trained arm; stoicheia head directories under ``morphosyntax/`` are added."""
    from stoicheia_lab.heads import morphosyntax_config

    from stoicheia_spacy.assembly import MORPHOSYNTAX, extend

    nlp = spacy.load(model)
    extra = Path(model) / "morphosyntax"
    if extra.is_dir() and not set(MORPHOSYNTAX) & set(nlp.pipe_names):
        extend(nlp, morphosyntax_config(extra))
    return nlp


def gold_sentences(nlp: Language, data: Path, limit: int = 0) -> list[Doc]:
    """The gold sentences of a DocBin, one Doc each (the first ``limit`` when > 0)."""
    sents = [s.as_doc() for d in DocBin().from_disk(data).get_docs(nlp.vocab) for s in d.sents]
    return sents[:limit] if limit else sents


def evaluate_pipeline(nlp: Language, data: Path, limit: int = 0, batch_size: int = 32) -> dict:
    """Run ``nlp`` on the gold words and sentence boundaries of ``data``; CoNLL-2018 scores in %
    (UPOS, XPOS, UFeats, AllTags, Lemma, UAS, LAS, CLAS) plus words, sentences and seconds."""
    from stoicheia_lab.scoring.conll import score_conll

    from stoicheia_spacy.morph.conllu import span_words

    sents = gold_sentences(nlp, data, limit)
    preds = [Doc(nlp.vocab, words=[t.text for t in s], spaces=[bool(t.whitespace_) for t in s],
                 sent_starts=[True] + [False] * (len(s) - 1)) for s in sents]
    t0 = time.perf_counter()
    preds = list(nlp.pipe(preds, batch_size=batch_size))
    seconds = time.perf_counter() - t0
    scores = score_conll([span_words(s) for s in sents], [span_words(p) for p in preds])
    result: dict = {k: round(100 * v.accuracy, 2) for k, v in scores.items()}
    result.update({"words": sum(len(s) for s in sents), "sentences": len(sents), "seconds": round(seconds, 2)})
    return result


def metrics_path(metrics: Path, arm: str, fold: int, seed: int, split: str) -> Path:
    """``METRICS/{arm}__fold{k}__seed{s}__{split}.json`` (the name compare.py parses)."""
    return metrics / f"{arm}__fold{fold}__seed{seed}__{split}.json"


def main(argv: list[str] | None = None, nlp: Language | None = None) -> int:
    """CLI; ``nlp`` (already built, e.g. by evaluate_heads.py) replaces loading MODEL_DIR."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path, nargs="?", help="output JSON (default: named after --arm ...)")
    ap.add_argument("--arm", help="arm name (pretrained, random, cnn, transformer, ...)")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--split", default="test")
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only (0 = all)")
    args = ap.parse_args(argv)
    if args.out is None and not args.arm:
        ap.error("give OUT.json or --arm")
    out = args.out or metrics_path(args.metrics, args.arm, args.fold, args.seed, args.split)
    if nlp is None:
        nlp = load_model(args.model)
    result = evaluate_pipeline(nlp, args.data, args.limit)
    if args.arm:
        result.update({"arm": args.arm, "fold": args.fold, "seed": args.seed, "split": args.split})
    result["model"] = str(args.model)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
