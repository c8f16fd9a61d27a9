"""``python -m stoicheia_spacy.bench memory long|stream [--model M] [--out FILE]``: memory of annotation.

``long``: one document of ``--letters`` Greek letters (default 1,000,000; real text, the
default model's held-out sample repeated) through ``annotate``'s worker path (pieces of
``--max-chars``), in a fresh process: peak RSS (``ru_maxrss``) after loading the pipeline
and after annotating, words, seconds; the target is < 2 GB.

``stream``: ``--docs`` documents (default 10,000) through ``nlp.pipe(n_process=2)``; the RSS
of the parent and its workers is sampled every ``--every`` documents and the slope of a
least-squares line over the second half (after warm-up) is reported in MB per 1,000
documents: flat means ~0.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..assets import default_model_dir


def greek_text(letters: int) -> str:
    """Real Greek text of at least ``letters`` letters (the dev sample, repeated)."""
    from ..codec import encode_planes

    path = default_model_dir() / "dev_sample.jsonl"
    records = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    sample = " ".join(records)
    per_copy = len(encode_planes(sample))
    return " ".join([sample] * (letters // per_copy + 1))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_long(letters: int, model: str | None, max_chars: int, components: list[str] | None,
             progress: Path | None = None, batch_chars: int = 4096) -> dict[str, Any]:
    """In this process: load the pipeline, annotate one long document, report peak RSS (and,
    with ``progress``, append characters done / peak RSS so far to that JSON-lines file)."""
    from ..annotate.worker import annotate_batch, load_pipeline, set_threads
    from ..codec import encode_planes

    set_threads(1)
    text = greek_text(letters)
    n_letters = len(encode_planes(text))
    nlp = load_pipeline(model, components)
    loaded = _peak_mb()
    start = time.perf_counter()
    if progress is not None:
        with progress.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"chars_done": 0, "peak_rss_mb": round(loaded, 1), "letters": n_letters}) + "\n")
        _log_progress(nlp, progress, start)
    task = json.dumps({"records": [{"id": "long", "text": text}]})
    out = json.loads(annotate_batch(nlp, task, max_chars=max_chars, batch_chars=batch_chars))
    seconds = time.perf_counter() - start
    record = json.loads(out["lines"][0])
    assert record["text"] == text and not out["errors"]
    return {"letters": n_letters, "chars": len(text), "words": out["words"], "pipes": nlp.pipe_names,
            "max_chars": max_chars, "batch_chars": batch_chars, "peak_rss_after_load_mb": round(loaded, 1),
            "peak_rss_mb": round(_peak_mb(), 1), "seconds": round(seconds, 1),
            "letters_per_s": round(n_letters / seconds, 1), "under_2gb": _peak_mb() < 2048}


def _log_progress(nlp: Any, path: Path, start: float) -> None:
    """Wrap ``nlp.pipe`` so that every finished Doc appends (chars done, peak RSS) to ``path``."""
    pipe = nlp.pipe
    done = [0]

    def counting(texts: Any, **kwargs: Any) -> Any:
        for doc in pipe(texts, **kwargs):
            done[0] += len(doc.text)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"chars_done": done[0], "peak_rss_mb": round(_peak_mb(), 1),
                                         "seconds": round(time.perf_counter() - start, 1)}) + "\n")
            yield doc

    nlp.pipe = counting


def tree_rss_mb() -> float:
    """RSS of this process and all its children, in MB."""
    import psutil

    proc = psutil.Process()
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def run_stream(n_docs: int, model: str | None, every: int, components: list[str] | None,
               doc_chars: int = 200) -> dict[str, Any]:
    """``n_docs`` short real documents through ``nlp.pipe(n_process=2)``; RSS samples and slope."""
    import numpy as np

    from ..annotate.worker import load_pipeline, set_threads
    from .annotate import load_records, split_records

    set_threads(1)
    docs = split_records(load_records(default_model_dir() / "dev_sample.jsonl", 50), doc_chars)
    texts = [docs[i % len(docs)]["text"] for i in range(n_docs)]
    nlp = load_pipeline(model, components)
    samples: list[tuple[int, float]] = []
    start = time.perf_counter()
    words = 0
    for i, doc in enumerate(nlp.pipe(texts, n_process=2, batch_size=32), 1):
        words += len(doc)
        if i % every == 0:
            samples.append((i, tree_rss_mb()))
    seconds = time.perf_counter() - start
    x = np.array([s[0] for s in samples[len(samples) // 2:]], float)
    y = np.array([s[1] for s in samples[len(samples) // 2:]], float)
    slope = float(np.polyfit(x, y, 1)[0]) * 1000 if len(x) >= 2 else float("nan")
    return {"docs": n_docs, "doc_chars": doc_chars, "words": words, "seconds": round(seconds, 1), "pipes": nlp.pipe_names,
            "rss_samples_mb": [(i, round(m, 1)) for i, m in samples],
            "slope_mb_per_1000_docs_second_half": round(slope, 3),
            "rss_first_mb": round(samples[0][1], 1) if samples else None,
            "rss_last_mb": round(samples[-1][1], 1) if samples else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_spacy.bench memory", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("long", "stream"))
    parser.add_argument("--model", default=None)
    parser.add_argument("--components", default=None)
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--max-chars", type=int, default=4096)
    parser.add_argument("--batch-chars", type=int, default=4096, help="long: characters per forward")
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--doc-chars", type=int, default=200, help="stream: characters per document")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--progress", type=Path, default=None, help="long: JSON-lines log of chars done and peak RSS")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    components = [c.strip() for c in args.components.split(",")] if args.components else None
    if args.what == "long" and not args.child:  # a fresh process, so that ru_maxrss is this run's
        cmd = [sys.executable, "-m", "stoicheia_spacy.bench", "memory", "long", "--child",
               "--letters", str(args.letters), "--max-chars", str(args.max_chars),
               "--batch-chars", str(args.batch_chars)]
        cmd += ["--model", args.model] if args.model else []
        cmd += ["--components", args.components] if args.components else []
        cmd += ["--out", str(args.out)] if args.out else []
        cmd += ["--progress", str(args.progress)] if args.progress else []
        return subprocess.run(cmd, check=False).returncode
    if args.what == "long":
        result = {"benchmark": "memory long", **run_long(args.letters, args.model, args.max_chars, components, args.progress,
                                                      args.batch_chars)}
        print(f"{result['letters']:,} letters, {result['words']:,} words: peak RSS {result['peak_rss_mb']:,.0f} MB "
              f"({result['peak_rss_after_load_mb']:,.0f} MB after loading), {result['seconds']} s")
    else:
        result = {"benchmark": "memory stream", **run_stream(args.docs, args.model, args.every, components, args.doc_chars)}
        print(f"{result['docs']:,} docs through nlp.pipe(n_process=2): RSS {result['rss_first_mb']} -> "
              f"{result['rss_last_mb']} MB, slope {result['slope_mb_per_1000_docs_second_half']} MB / 1,000 docs")
    result["model"] = args.model or "default pipeline"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0
