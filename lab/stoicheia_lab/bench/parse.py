"""``python -m stoicheia_lab.bench parse [--cnn MODEL] [--data A.spacy [B.spacy ...]] [--n 200]``:
CPU words/s of tagging + lemmatizing + parsing with the default backbone and its shipped heads,
beside a spaCy CNN pipeline trained on the same data (``--cnn``), printed as a ratio measured in
the same run; with ``--data`` (DocBins with gold trees, e.g. ``corpus/test.spacy`` and
``corpus/ud_perseus_test_agdt.spacy``) both run on each file's gold words and sentences in turn
(models loaded once) and their UAS/LAS (CoNLL-2018, :func:`~stoicheia_lab.scoring.conll.score_conll`)
are printed too. LAS needs the training labels: ``ud_perseus_test.spacy`` keeps UD's relations
(LAS 0 for AGDT-trained parsers), ``ud_perseus_test_agdt.spacy`` has the same sentences in AGDT
2.1 annotation. Without a CNN model or shipped heads it says so and measures what it can.
``--json PATH`` also writes every figure (per file and pipeline: words/s by wall clock and by
process CPU time, scores) with the command line, versions, CPU count and load average."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch

from stoicheia_spacy.assembly import DEFAULT_SOURCE

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


def timed_gold_run(nlp: Any, sents: list[Any]) -> dict[str, Any]:
    """Words/s (wall clock and process CPU time) and CoNLL-2018 scores in % of ``nlp``'s components
    over the gold words of ``sents`` (no tokenizer: every pipeline sees the same words)."""
    from stoicheia_spacy.morph.conllu import span_words

    from ..scoring.conll import score_conll

    list(nlp.pipe(_unannotated(nlp, sents[:8]), batch_size=32))  # warm-up
    docs = _unannotated(nlp, sents)
    start, cpu_start = time.perf_counter(), time.process_time()
    preds = list(nlp.pipe(docs, batch_size=32))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    scores = score_conll([span_words(s) for s in sents], [span_words(p) for p in preds])
    words = sum(len(d) for d in preds)
    return {"words": words, "wall_s": seconds, "cpu_s": cpu_seconds, "words_per_s": words / seconds,
            "words_per_cpu_s": words / cpu_seconds if cpu_seconds > 0 else None,
            "scores": {k: 100 * v.accuracy for k, v in scores.items()}}


def gold_run(nlp: Any, sents: list[Any]) -> tuple[float, dict[str, float]]:
    """(words/s, CoNLL-2018 scores in %) of ``nlp``'s components over the gold words of ``sents``
    (no tokenizer: both pipelines see the same words)."""
    run = timed_gold_run(nlp, sents)
    return run["words_per_s"], run["scores"]


def stoicheia_parse_pipeline(source: str = DEFAULT_SOURCE) -> Any:
    """The default package with only the encoder and the morphosyntax heads enabled."""
    from stoicheia_spacy.assembly import build_pipeline, extend
    from stoicheia_spacy.assets import default_model_dir

    from ..heads import morphosyntax_config

    nlp = build_pipeline(source)
    if not set(PARSE_PIPES[1:]) & set(nlp.pipe_names):
        extend(nlp, morphosyntax_config(default_model_dir() / "morphosyntax"))
    for name in list(nlp.pipe_names):
        if name not in PARSE_PIPES:
            nlp.disable_pipe(name)
    return nlp


def _line(name: str, nlp: Any, wps: float, scores: dict[str, float] | None) -> str:
    text = f"{name} ({'+'.join(nlp.pipe_names)}): {wps:.0f} words/s"
    if scores is not None:
        text += "; " + " ".join(f"{k} {scores[k]:.2f}" for k in REPORTED)
    return text


def _gold_bench(nlp: Any, cnn: Any | None, path: Path, n: int, threads: int) -> dict[str, Any]:
    """Print both pipelines' words/s and scores on the first ``n`` gold sentences of ``path``;
    return them as a metrics record."""
    sents = gold_sentences(path, n)
    words = sum(len(s) for s in sents)
    print(f"{path.name}: {len(sents)} sentences, {words} words (gold tokens and sentences), {threads} thread(s)")
    record: dict[str, Any] = {"path": str(path), "sentences": len(sents), "words": words,
                              "words_per_sentence": words / len(sents) if sents else None, "runs": {}}
    ours = record["runs"]["stoicheia"] = timed_gold_run(nlp, sents)
    print(_line("stoicheia", nlp, ours["words_per_s"], ours["scores"]))
    if cnn is None:
        return record
    base = record["runs"]["spacy_cnn"] = timed_gold_run(cnn, sents)
    print(_line("spaCy CNN", cnn, base["words_per_s"], base["scores"]))
    record["stoicheia_over_cnn_words_per_s"] = ours["words_per_s"] / base["words_per_s"]
    if ours["words_per_cpu_s"] and base["words_per_cpu_s"]:
        record["stoicheia_over_cnn_words_per_cpu_s"] = ours["words_per_cpu_s"] / base["words_per_cpu_s"]
    print(f"{path.name}: stoicheia / CNN words/s = {record['stoicheia_over_cnn_words_per_s']:.3f}; "
          f"LAS {ours['scores']['LAS']:.2f} vs {base['scores']['LAS']:.2f}, "
          f"UAS {ours['scores']['UAS']:.2f} vs {base['scores']['UAS']:.2f}")
    return record


def _environment(threads: int) -> dict[str, Any]:
    """Where and under what load the benchmark runs (the load average matters on a shared machine)."""
    import spacy
    import thinc

    return {"date_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "machine": platform.processor() or platform.machine(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
            "threads": threads, "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(), "torch": torch.__version__, "spacy": spacy.__version__,
            "thinc": thinc.__version__}


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities (e.g. CLAS without content relations) as ``None``."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_metrics(path: Path, result: dict[str, Any]) -> None:
    """Write the benchmark's record (with the load average at the end of the run) as strict JSON."""
    result["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_finite(result), ensure_ascii=False, indent=1, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench parse", description=__doc__.splitlines()[0])
    ap.add_argument("--cnn", help="a spaCy CNN pipeline (tagger/morphologizer/parser) trained on the same folds")
    ap.add_argument("--data", type=Path, nargs="+", action="extend",
                    help="DocBins with gold trees, scored one after the other "
                         "(e.g. corpus/test.spacy corpus/ud_perseus_test_agdt.spacy)")
    ap.add_argument("--n", type=int, default=200, help="sentences (per --data file)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="also write every figure to this metrics JSON")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    import spacy

    result: dict[str, Any] = {
        "benchmark": "parse",
        "command": " ".join(["python -m stoicheia_lab.bench parse", *(sys.argv[1:] if argv is None else argv)]),
        **_environment(args.threads), "n": args.n, "timing": "after an 8-sentence warm-up, batch_size 32",
    }
    nlp = stoicheia_parse_pipeline()
    if not set(PARSE_PIPES[1:]) & set(nlp.pipe_names):
        print("no shipped morphosyntax heads: measuring the encoder alone")
    cnn = spacy.load(args.cnn) if args.cnn else None
    result["pipelines"] = {"stoicheia": {"source": DEFAULT_SOURCE, "pipes": list(nlp.pipe_names)},
                           "spacy_cnn": {"path": args.cnn, "pipes": list(cnn.pipe_names)} if cnn else None}
    if args.data:
        result["files"] = [_gold_bench(nlp, cnn, path, args.n, args.threads) for path in args.data]
        if cnn is None:
            print("no --cnn pipeline given: ratio and LAS comparison not measured")
    else:
        texts = ["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε."] * args.n
        _throughput(nlp, texts[:4])  # warm-up
        ours = _throughput(nlp, texts)
        print(_line("stoicheia", nlp, ours, None))
        result["throughput"] = {"text": texts[0], "repeats": args.n, "stoicheia_words_per_s": ours}
        if cnn is None:
            print("no --cnn pipeline given: ratio and LAS comparison not measured")
        else:
            _throughput(cnn, texts[:4])
            base = _throughput(cnn, texts)
            print(f"{_line('spaCy CNN', cnn, base, None)}; stoicheia / CNN = {ours / base:.3f}")
            result["throughput"].update(spacy_cnn_words_per_s=base, stoicheia_over_cnn=ours / base)
    if args.json is not None:
        write_metrics(args.json, result)
        print(f"metrics written to {args.json}")
    return 0
