"""``python -m stoicheia_spacy.bench parse [--cnn MODEL] [--data A.spacy [B.spacy ...]] [--n 200]``:
CPU words/s of tagging + lemmatizing + parsing with the default backbone and its shipped heads,
beside a spaCy CNN pipeline trained on the same data (``--cnn``), printed as a ratio measured in
the same run; with ``--data`` (DocBins with gold trees, e.g. ``corpus/test.spacy`` and
``corpus/ud_perseus_test_agdt.spacy``) both run on each file's gold words and sentences in turn
(models loaded once) and their UAS/LAS (CoNLL-2018, :func:`~stoicheia_spacy.scoring.conll.score_conll`)
are printed too. LAS needs the training labels: ``ud_perseus_test.spacy`` keeps UD's relations
(LAS 0 for AGDT-trained parsers), ``ud_perseus_test_agdt.spacy`` has the same sentences in AGDT
2.1 annotation. Without a CNN model or shipped heads it says so and measures what it can."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import torch

from ..assembly import DEFAULT_SOURCE

#: The components timed on the stoicheia side (the shipped package's other components are disabled).
PARSE_PIPES = ("stoicheia_encoder", "stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
REPORTED = ("UPOS", "XPOS", "UFeats", "Lemma", "UAS", "LAS")


def _throughput(nlp: Any, texts: list[str]) -> float:
    start = time.perf_counter()
    n = sum(len(doc) for doc in nlp.pipe(texts, batch_size=32))
    return n / (time.perf_counter() - start)


def gold_sentences(path: Path, n: int) -> list[Any]:
    """The first ``n`` gold sentences of a DocBin, one Doc each."""
    import spacy
    from spacy.tokens import DocBin

    vocab = spacy.blank("grc").vocab
    sents = [s.as_doc() for d in DocBin().from_disk(path).get_docs(vocab) for s in d.sents]
    return sents[:n]


def _unannotated(nlp: Any, sents: list[Any]) -> list[Any]:
    """Docs in ``nlp``'s vocab with the gold words, spaces and sentence starts only."""
    from spacy.tokens import Doc

    docs = []
    for s in sents:
        starts: list[bool | int | None] = [True, *([False] * (len(s) - 1))]
        docs.append(Doc(nlp.vocab, words=[t.text for t in s], spaces=[bool(t.whitespace_) for t in s],
                        sent_starts=starts))
    return docs


def gold_run(nlp: Any, sents: list[Any]) -> tuple[float, dict[str, float]]:
    """(words/s, CoNLL-2018 scores in %) of ``nlp``'s components over the gold words of ``sents``
    (no tokenizer: both pipelines see the same words)."""
    from ..scoring.conll import score_conll, span_words

    list(nlp.pipe(_unannotated(nlp, sents[:8]), batch_size=32))  # warm-up
    docs = _unannotated(nlp, sents)
    start = time.perf_counter()
    preds = list(nlp.pipe(docs, batch_size=32))
    seconds = time.perf_counter() - start
    scores = score_conll([span_words(s) for s in sents], [span_words(p) for p in preds])
    return sum(len(d) for d in preds) / seconds, {k: 100 * v.accuracy for k, v in scores.items()}


def stoicheia_parse_pipeline(source: str = DEFAULT_SOURCE) -> Any:
    """The default package with only the encoder and the morphosyntax heads enabled."""
    from ..assembly import build_pipeline
    from ..morph.package import add_morphosyntax, default_morphosyntax_dir

    nlp = build_pipeline(source)
    if not set(PARSE_PIPES[1:]) & set(nlp.pipe_names):
        add_morphosyntax(nlp, default_morphosyntax_dir())
    for name in list(nlp.pipe_names):
        if name not in PARSE_PIPES:
            nlp.disable_pipe(name)
    return nlp


def _line(name: str, nlp: Any, wps: float, scores: dict[str, float] | None) -> str:
    text = f"{name} ({'+'.join(nlp.pipe_names)}): {wps:.0f} words/s"
    if scores is not None:
        text += "; " + " ".join(f"{k} {scores[k]:.2f}" for k in REPORTED)
    return text


def _gold_bench(nlp: Any, cnn: Any | None, path: Path, n: int, threads: int) -> None:
    """Print both pipelines' words/s and scores on the first ``n`` gold sentences of ``path``."""
    sents = gold_sentences(path, n)
    print(f"{path.name}: {len(sents)} sentences, {sum(len(s) for s in sents)} words "
          f"(gold tokens and sentences), {threads} thread(s)")
    ours, our_scores = gold_run(nlp, sents)
    print(_line("stoicheia", nlp, ours, our_scores))
    if cnn is None:
        return
    base, cnn_scores = gold_run(cnn, sents)
    print(_line("spaCy CNN", cnn, base, cnn_scores))
    print(f"{path.name}: stoicheia / CNN words/s = {ours / base:.3f}; LAS {our_scores['LAS']:.2f} vs "
          f"{cnn_scores['LAS']:.2f}, UAS {our_scores['UAS']:.2f} vs {cnn_scores['UAS']:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench parse", description=__doc__.splitlines()[0])
    ap.add_argument("--cnn", help="a spaCy CNN pipeline (tagger/morphologizer/parser) trained on the same folds")
    ap.add_argument("--data", type=Path, nargs="+", action="extend",
                    help="DocBins with gold trees, scored one after the other "
                         "(e.g. corpus/test.spacy corpus/ud_perseus_test_agdt.spacy)")
    ap.add_argument("--n", type=int, default=200, help="sentences (per --data file)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    import spacy

    nlp = stoicheia_parse_pipeline()
    if not set(PARSE_PIPES[1:]) & set(nlp.pipe_names):
        print("no shipped morphosyntax heads: measuring the encoder alone")
    cnn = spacy.load(args.cnn) if args.cnn else None
    if args.data:
        for path in args.data:
            _gold_bench(nlp, cnn, path, args.n, args.threads)
        if cnn is None:
            print("no --cnn pipeline given: ratio and LAS comparison not measured")
        return 0
    texts = ["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε."] * args.n
    _throughput(nlp, texts[:4])  # warm-up
    ours = _throughput(nlp, texts)
    print(_line("stoicheia", nlp, ours, None))
    if cnn is None:
        print("no --cnn pipeline given: ratio and LAS comparison not measured")
        return 0
    _throughput(cnn, texts[:4])
    base = _throughput(cnn, texts)
    print(f"{_line('spaCy CNN', cnn, base, None)}; stoicheia / CNN = {ours / base:.3f}")
    return 0
