"""Train the morphologizer, lemmatizer and parser heads on a FROZEN backbone (CPU-friendly).

The backbone runs once over the sampled sentences (its per-letter hidden states are
kept on the Docs), then only the heads are updated, so each step costs the heads
alone. Writes one directory per component under OUT (``cfg`` + ``model``), which
``stoicheia_spacy.assembly.extend(nlp, stoicheia_lab.heads.morphosyntax_config(OUT))`` adds
to a pipeline.

    python scripts/train_heads.py BACKBONE TRAIN.spacy DEV.spacy OUT [--n-train 1000]
        [--n-dev 200] [--minutes 12] [--seed 0] [--bilstm-depth 2]

``--bilstm-depth N`` (N > 0) puts spaCy's ``spacy.TorchBiLSTMEncoder.v1`` (N layers) between
the pooled word vectors and every head (``spacy.Tok2Vec.v2`` wrapping the listener): a frozen
backbone's mean-pooled letters say little about word order, which the biaffine parser needs.
The head config used is written to OUT/heads_config.json (the model config.cfg takes it as is).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import spacy
import torch
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import Adam

COMPONENTS = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def sentences(path: Path, vocab: object, n: int, seed: int) -> list[Doc]:
    docs = list(DocBin().from_disk(path).get_docs(vocab))
    sents = [s.as_doc() for d in docs for s in d.sents]
    random.Random(seed).shuffle(sents)
    return sents[:n]


def examples(nlp: spacy.Language, refs: list[Doc]) -> list[Example]:
    out = []
    for ref in refs:
        pred = Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref],
                   sent_starts=[True] + [False] * (len(ref) - 1))
        out.append(Example(pred, ref))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("backbone")
    ap.add_argument("train", type=Path)
    ap.add_argument("dev", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--n-train", type=int, default=1000)
    ap.add_argument("--n-dev", type=int, default=200)
    ap.add_argument("--minutes", type=float, default=12.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=8e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bilstm-depth", type=int, default=0, help="BiLSTM layers over the word vectors (0: none)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    from stoicheia_lab.scoring.conll import format_scores, score_conll

    from stoicheia_spacy.assembly import build_pipeline

    nlp = build_pipeline(args.backbone, components=False)
    from stoicheia_spacy.encoder.model import torch_backbone

    width = int(torch_backbone(nlp.get_pipe("stoicheia_encoder").model).config.d_model)  # type: ignore[attr-defined]
    frozen = head_config(args.bilstm_depth, width)
    for name in COMPONENTS:
        nlp.add_pipe(name, config=frozen)
    train = examples(nlp, sentences(args.train, nlp.vocab, args.n_train, args.seed))
    dev = examples(nlp, sentences(args.dev, nlp.vocab, args.n_dev, args.seed))
    encoder = nlp.get_pipe("stoicheia_encoder")
    t0 = time.perf_counter()
    for batch in (train, dev):
        for _ in encoder.pipe([eg.predicted for eg in batch], batch_size=32):
            pass
    print(f"encoded {len(train)} + {len(dev)} sentences in {time.perf_counter() - t0:.0f}s", flush=True)
    for name in COMPONENTS:
        nlp.get_pipe(name).initialize(lambda: train, nlp=nlp)
    optimizer = Adam(args.lr)
    rng = random.Random(args.seed)
    deadline = time.perf_counter() + 60 * args.minutes
    step = 0
    while time.perf_counter() < deadline:
        rng.shuffle(train)
        for i in range(0, len(train), args.batch):
            losses: dict[str, float] = {}
            nlp.update(train[i : i + args.batch], sgd=optimizer, losses=losses, exclude=["stoicheia_encoder"])
            step += 1
            if step % 20 == 0:
                print(step, {k: round(v, 3) for k, v in losses.items()}, flush=True)
            if time.perf_counter() >= deadline:
                break
    docs = [eg.predicted for eg in dev]
    for name in COMPONENTS:
        pipe = nlp.get_pipe(name)
        pipe.set_annotations(docs, pipe.predict(docs))
    gold = [conll_words(eg.reference) for eg in dev]
    pred = [conll_words(d) for d in docs]
    scores = score_conll(gold, pred)
    print(format_scores(scores))
    args.out.mkdir(parents=True, exist_ok=True)
    for name in COMPONENTS:
        nlp.get_pipe(name).to_disk(args.out / name)
    (args.out / "heads_config.json").write_text(json.dumps(frozen, indent=1))
    (args.out / "train_meta.json").write_text(json.dumps({
        "bilstm_depth": args.bilstm_depth,
        "backbone": args.backbone, "n_train": len(train), "n_dev": len(dev), "steps": step,
        "minutes": args.minutes, "lr": args.lr, "batch": args.batch, "seed": args.seed,
        "dev_scores": {k: round(v.accuracy * 100, 2) for k, v in scores.items()},
    }, indent=1, ensure_ascii=False))
    return 0


def head_config(bilstm_depth: int, width: int, dropout: float = 0.33) -> dict:
    """Component config overrides of the three heads: a frozen listener, optionally under a BiLSTM."""
    if bilstm_depth <= 0:
        return {"model": {"tok2vec": {"grad_factor": 0.0}}}
    listener = {"@architectures": "stoicheia.StoicheiaListener.v1", "upstream": "stoicheia_encoder",
                "grad_factor": 0.0, "pooling": {"@architectures": "stoicheia.WordPooler.v1"}}
    encode = {"@architectures": "spacy.TorchBiLSTMEncoder.v1", "width": width, "depth": bilstm_depth,
              "dropout": dropout}
    return {"model": {"tok2vec": {"@architectures": "spacy.Tok2Vec.v2", "embed": listener, "encode": encode}}}


def conll_words(doc: Doc) -> list[dict]:
    """CoNLL-style words of a one-sentence Doc (heads 1-based, 0 = root)."""
    return [{"form": t.text, "upos": t.pos_ or "_", "xpos": t.tag_ or "_", "feats": str(t.morph) or "_",
             "lemma": t.lemma_ or "_", "head": 0 if t.head.i == t.i else t.head.i - t.sent.start + 1,
             "deprel": t.dep_ or "_"} for t in doc]


if __name__ == "__main__":
    raise SystemExit(main())
