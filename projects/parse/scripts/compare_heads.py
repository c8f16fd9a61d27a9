"""Score several morphosyntax head sets on the same sentences, with one backbone forward.

The default pipeline's encoder runs once per batch of gold sentences (gold words and
sentence boundaries, as ``evaluate.py``); every head set then annotates the same Docs
and is scored with the same CoNLL 2018 scorer (``evaluate.py``'s sentences and
``score_conll``). ``shipped`` is the default pipeline's own heads; each ``--heads
NAME=DIR`` is a folder of component folders (``DIR/<component>/``, as
``morphosyntax/`` or ``train_cached.py``'s ``best/``) read with ``from_disk`` into the
components of CONFIG (``assets/configs/parse_heads_cached.cfg``, or the set's own
``--config-for NAME=CONFIG``). ``--random-init`` scores head sets trained on the cache of the
seeded random backbone (``cache_features.py --random-init``) on that same backbone; the
default pipeline's own heads are then left out, and the output names the backbone's sha256
(the cache's ``meta.json`` names the one it was cached from).

    python scripts/compare_heads.py DATA.spacy OUT.json --heads cached=training/cached/best
        [--config ../../assets/configs/parse_heads_cached.cfg] [--limit 300] [--split dev]
        [--random-init]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import evaluate
from cache_features import backbone_sha256, hidden_shape, randomize_backbone
from train_cached import head_block

HEADS = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--heads", action="append", default=[], help="NAME=DIR (repeatable)")
    ap.add_argument("--config", type=Path, default=Path(__file__).parents[3] / "assets/configs/parse_heads_cached.cfg")
    ap.add_argument("--config-for", action="append", default=[],
                    help="NAME=CONFIG: the head set NAME's own config (default --config)")
    ap.add_argument("--backbone", default="embedded:grc_stoicheia_doc_clean")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--split", default="")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--random-init", action="store_true",
                    help="the seeded random backbone of the same shape (the random-init control)")
    args = ap.parse_args(argv)

    import spacy
    import torch
    from spacy.tokens import Doc
    from stoicheia_lab.scoring.conll import score_conll
    from thinc.api import Config

    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.morph.conllu import span_words

    torch.set_num_threads(1)
    nlp = build_pipeline(args.backbone)
    sets: dict[str, list[Any]] = {}
    if args.random_init:
        randomize_backbone(nlp)
    else:
        sets["shipped"] = [nlp.get_pipe(n) for n in HEADS if n in nlp.pipe_names]
    encoder = nlp.get_pipe("stoicheia_encoder")
    _layers, width = hidden_shape(nlp)
    configs = {name: Path(path) for name, path in (c.split("=", 1) for c in args.config_for)}
    for spec in args.heads:
        name, folder = spec.split("=", 1)
        config = Config().from_disk(configs.get(name, args.config))
        other = spacy.blank("grc", vocab=nlp.vocab)  # its labels are strings of the Docs it annotates
        for comp in HEADS:
            other.add_pipe(comp, config=head_block(config, comp, width)).from_disk(Path(folder) / comp)
        sets[name] = [other.get_pipe(n) for n in HEADS]
    sents = evaluate.gold_sentences(nlp, args.data, args.limit)
    gold = [span_words(s) for s in sents]
    pred: dict[str, list[Any]] = {k: [] for k in sets}
    seconds = {k: 0.0 for k in [*sets, "encoder"]}
    for a in range(0, len(sents), args.batch):
        docs = [Doc(nlp.vocab, words=[t.text for t in s], spaces=[bool(t.whitespace_) for t in s],
                    sent_starts=[True] + [False] * (len(s) - 1)) for s in sents[a : a + args.batch]]
        t0 = time.perf_counter()
        encoder.set_annotations(docs, encoder.predict(docs))
        seconds["encoder"] += time.perf_counter() - t0
        for name, pipes in sets.items():
            t0 = time.perf_counter()
            for pipe in pipes:
                pipe.set_annotations(docs, pipe.predict(docs))
            seconds[name] += time.perf_counter() - t0
            pred[name].extend(span_words(d) for d in docs)
        print(f"{min(a + args.batch, len(sents))}/{len(sents)} sentences", flush=True)
    words = sum(len(s) for s in sents)
    result: dict[str, Any] = {"data": str(args.data), "split": args.split, "sentences": len(sents), "words": words,
                              "backbone": args.backbone, "random_init": args.random_init,
                              "backbone_sha256": backbone_sha256(nlp),
                              "encoder_seconds": round(seconds["encoder"], 2), "heads": {}}
    for name in sets:
        scores = score_conll(gold, pred[name])
        row: dict[str, Any] = {k: round(100 * v.accuracy, 2) for k, v in scores.items()}
        row["heads_seconds"] = round(seconds[name], 2)
        row["words_per_s"] = round(words / (seconds["encoder"] + seconds[name]), 1)
        row["source"] = "default pipeline" if name == "shipped" else dict(s.split("=", 1) for s in args.heads)[name]
        result["heads"][name] = row
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
