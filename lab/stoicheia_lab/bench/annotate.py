"""``python -m stoicheia_lab.bench annotate [--model M] [--corpus JSONL] [--docs N] [--workers 1,2]
[--engine local,ray] [--out FILE]``: words/s of ``stoicheia annotate`` per worker count and the
scaling ratio against one worker, measured in the same run (for each engine given).

Each worker count runs the same fixed batches (records of the corpus, default: the default
model's held-out ``dev_sample.jsonl``) through the engine; the rate counts the words annotated
over the workers' busy span (first task begun to last task finished, as the workers report
it), so worker start-up and model loading are left out (``startup_s``: from the call to the
first task begun; ``words_per_s_wall`` includes them). The ratio is only as good as the cores the
machine really has free: ``cpus`` and the load average before and after each engine's runs
are recorded beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from stoicheia_spacy.annotate.engines import EngineConfig, run_engine
from stoicheia_spacy.assets import default_model_dir


def load_records(path: Path, n_docs: int) -> list[dict[str, Any]]:
    """``n_docs`` records of a JSON-lines corpus (cycled when it has fewer)."""
    base = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    base = [{"id": str(r.get("id", i)), "text": r["text"]} for i, r in enumerate(base)]
    return [dict(base[i % len(base)], id=f"{base[i % len(base)]['id']}#{i}") for i in range(n_docs)]


def split_records(records: list[dict[str, Any]], chars: int) -> list[dict[str, Any]]:
    """Records cut into documents of about ``chars`` characters (at whitespace)."""
    out: list[dict[str, Any]] = []
    for rec in records:
        words, piece = rec["text"].split(), []
        for w in words:
            piece.append(w)
            if sum(len(p) + 1 for p in piece) >= chars:
                out.append({"id": f"{rec['id']}:{len(out)}", "text": " ".join(piece)})
                piece = []
        if piece:
            out.append({"id": f"{rec['id']}:{len(out)}", "text": " ".join(piece)})
    return out


def measure(engine: str, tasks: list[str], cfg: EngineConfig) -> dict[str, Any]:
    """One engine run: ``words_per_s`` over the workers' busy span (the first task begun to
    the last finished, from the spans the workers report, so pipeline loading and the
    engine's start-up are left out), and the wall-clock rate including them."""
    start = time.perf_counter()
    wall0 = time.time()
    words = 0
    began, finished = float("inf"), 0.0
    for result in run_engine(engine, iter(tasks), cfg):
        out = json.loads(result)
        words += out["words"]
        began, finished = min(began, out["span"][0]), max(finished, out["span"][1])
    seconds = time.perf_counter() - start
    busy = finished - began
    return {"workers": cfg.workers, "words": words, "startup_s": round(began - wall0, 2),
            "busy_s": round(busy, 2), "seconds": round(seconds, 2),
            "words_per_s": round(words / busy, 1) if busy > 0 else 0.0,
            "words_per_s_wall": round(words / seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench annotate", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="pipeline package or directory (default: the default pipeline)")
    parser.add_argument("--corpus", type=Path, default=None, help="JSON-lines records (default: the default model's dev sample)")
    parser.add_argument("--docs", type=int, default=400, help="documents (~--doc-chars characters each)")
    parser.add_argument("--doc-chars", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--engine", default="local", help="local, ray or both: local,ray")
    parser.add_argument("--components", default=None)
    parser.add_argument("--out", type=Path, default=Path("bench_annotate.json"))
    args = parser.parse_args(argv)

    corpus = args.corpus or default_model_dir() / "dev_sample.jsonl"
    docs = split_records(load_records(corpus, 50), args.doc_chars)
    docs = [dict(docs[i % len(docs)], id=f"d{i}") for i in range(args.docs)]
    tasks = [json.dumps({"tag": 0, "records": docs[i:i + args.batch_size]}, ensure_ascii=False)
             for i in range(0, len(docs), args.batch_size)]
    components = [c.strip() for c in args.components.split(",")] if args.components else None
    engines = [e.strip() for e in args.engine.split(",")]
    unknown = sorted(set(engines) - {"local", "ray"})
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}: choose local, ray")
    workers = [int(x) for x in args.workers.split(",")]
    results = [bench_engine(engine, tasks, workers, args.model, components) for engine in engines]
    result = {"benchmark": "annotate", "model": args.model or "default pipeline", "components": components,
              "docs": len(docs), "doc_chars": args.doc_chars, "batch_size": args.batch_size,
              "cpus": os.cpu_count(), "engines": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


def bench_engine(engine: str, tasks: list[str], workers: list[int], model: str | None,
                 components: list[str] | None) -> dict[str, Any]:
    """Every worker count on one engine, with the load average before and after."""
    load = [round(x, 2) for x in os.getloadavg()]
    runs = []
    for n in workers:
        cfg = EngineConfig(model=model, components=components, workers=n, threads=1)
        before = [round(x, 2) for x in os.getloadavg()]
        runs.append(measure(engine, tasks, cfg))
        runs[-1].update(loadavg_before=before, loadavg_after=[round(x, 2) for x in os.getloadavg()])
        print(f"{engine} engine, {n} worker(s): {runs[-1]['words_per_s']:,.0f} words/s "
              f"({runs[-1]['words']} words, start-up {runs[-1]['startup_s']} s)")
        if engine == "ray":
            import ray

            ray.shutdown()
    base = runs[0]["words_per_s"]
    for run in runs:
        run["scaling_vs_first"] = round(run["words_per_s"] / base, 3) if base else None
    print(f"{engine}: scaling ratio {runs[-1]['workers']} vs {runs[0]['workers']} worker(s): "
          f"{runs[-1]['scaling_vs_first']}")
    return {"engine": engine, "loadavg_before": load, "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "runs": runs}
