"""CoNLL-2018-style scores of a trained pipeline on a DocBin, with gold tokens and gold sentences.

    python scripts/evaluate.py MODEL_DIR DATA.spacy OUT.json [--limit N]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, DocBin


def conll_words(sent: object) -> list[dict]:
    """CoNLL-style words of a sentence span (heads 1-based within it, 0 = root)."""
    return [{"form": t.text, "upos": t.pos_ or "_", "xpos": t.tag_ or "_", "feats": str(t.morph) or "_",
             "lemma": t.lemma_ or "_", "head": 0 if t.head.i == t.i else t.head.i - t.sent.start + 1,
             "deprel": t.dep_ or "_"} for t in sent]  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only (0 = all)")
    args = ap.parse_args(argv)
    import stoicheia_spacy.morph.package
    import stoicheia_spacy.pipeline  # noqa: F401
    from stoicheia_spacy.morph.package import add_morphosyntax
    from stoicheia_spacy.scoring.conll import score_conll

    nlp = spacy.load(args.model)
    for name in ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser"):
        if name not in nlp.pipe_names and (Path(args.model) / "morphosyntax" / name).is_dir():
            add_morphosyntax(nlp, Path(args.model) / "morphosyntax")
            break
    sents = [s.as_doc() for d in DocBin().from_disk(args.data).get_docs(nlp.vocab) for s in d.sents]
    if args.limit:
        sents = sents[: args.limit]
    preds = [Doc(nlp.vocab, words=[t.text for t in s], spaces=[bool(t.whitespace_) for t in s],
                 sent_starts=[True] + [False] * (len(s) - 1)) for s in sents]
    t0 = time.perf_counter()
    preds = list(nlp.pipe(preds, batch_size=32))
    seconds = time.perf_counter() - t0
    gold = [conll_words(s[:]) for s in sents]
    pred = [conll_words(p[:]) for p in preds]
    scores = score_conll(gold, pred)
    result = {k: round(100 * v.accuracy, 2) for k, v in scores.items()}
    result.update({"words": sum(len(s) for s in sents), "sentences": len(sents), "seconds": round(seconds, 2)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
