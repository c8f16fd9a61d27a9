"""Where a stream's memory goes, in one process: trimmed RSS, spaCy's strings, Python-heap growth by line.

``python -m stoicheia_lab.bench growth [--docs N] [--model M] [--zone] [--trace] [--out FILE]``:
``--docs`` short real sentences (:func:`.memory.short_sentences`; distinct with a corpus
``--source``) through ``nlp.pipe`` in batches of 32 in this process. Every ``--every``
documents: a full garbage collection, the C heap trimmed (:mod:`stoicheia_spacy.heap`), then
RSS and ``len(nlp.vocab.strings)``; slopes over the second half in MB (strings) per 1,000
documents. ``--zone`` runs each batch inside ``nlp.memory_zone()`` (spaCy frees the batch's
new strings and lexemes after it): the difference of the two slopes is what the vocabulary
costs. ``--trace``: ``tracemalloc`` over the second half (several times slower), the growth
of the Python heap (which includes spaCy's string store and lexemes) grouped by the line
that allocated and the innermost line of this package on its stack.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from stoicheia_spacy.heap import trim_heap

from .memory import process_rss_mb, short_sentences, slope_per_1000

BATCH = 32


def _frame(frame: tracemalloc.Frame) -> str:
    name = frame.filename.replace("\\", "/")
    for marker in ("site-packages/", "/stoicheia_spacy/"):
        if marker in name:
            name = ("stoicheia_spacy/" if marker.startswith("/stoicheia") else "") + name.split(marker)[-1]
            break
    return f"{name}:{frame.lineno}"


def traced_growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, docs: int, top: int = 12) -> list[dict[str, Any]]:
    """Growth of traced memory between two snapshots, grouped by (allocating line, innermost
    line of this package), largest first, in MB per 1,000 documents."""
    groups: dict[tuple[str, str | None], int] = defaultdict(int)
    for stat in after.compare_to(before, "traceback"):
        frames = [_frame(f) for f in stat.traceback]  # oldest first
        ours = next((f for f in reversed(frames) if f.startswith("stoicheia_spacy/")), None)
        groups[(frames[-1], ours)] += stat.size_diff
    rows = sorted(groups.items(), key=lambda kv: -abs(kv[1]))[:top]
    return [{"allocated_at": where, "innermost_stoicheia_line": ours,
             "mb_per_1000_docs": round(size / 2**20 * 1000 / docs, 3)} for (where, ours), size in rows]


def run_growth(n_docs: int, model: str | None, every: int, zone: bool, trace: bool,
               source: str = "perseus", mirror: Path | None = None) -> dict[str, Any]:
    """See the module docstring."""
    from stoicheia_spacy.annotate.worker import load_pipeline, set_threads

    set_threads(1)
    texts = short_sentences(n_docs, source, mirror)
    nlp = load_pipeline(model)
    samples: list[dict[str, Any]] = []
    snapshot: tracemalloc.Snapshot | None = None
    traced_from = 0
    words = 0
    start = time.perf_counter()
    for first in range(0, n_docs, BATCH):
        with nlp.memory_zone() if zone else nullcontext():
            words += sum(len(doc) for doc in nlp.pipe(texts[first:first + BATCH], batch_size=BATCH))
        done = min(first + BATCH, n_docs)
        if done // every == first // every and done < n_docs:
            continue
        gc.collect()
        trim_heap()
        samples.append({"docs": done, "words": words, "rss_trimmed_mb": round(process_rss_mb()[0], 1),
                        "strings": len(nlp.vocab.strings), "seconds": round(time.perf_counter() - start, 1)})
        if trace and snapshot is None and done >= n_docs // 2 and done < n_docs:
            tracemalloc.start(12)
            snapshot, traced_from = tracemalloc.take_snapshot(), done
    result: dict[str, Any] = {
        "docs": n_docs, "distinct_docs": len(set(texts)), "source": source, "words": words, "zone": zone,
        "pipes": nlp.pipe_names, "every": every,
        "slope_second_half_per_1000_docs": {
            "rss_trimmed_mb": round(slope_per_1000([(s["docs"], s["rss_trimmed_mb"]) for s in samples]), 3),
            "strings": round(slope_per_1000([(s["docs"], float(s["strings"])) for s in samples]), 1)},
        "samples": samples}
    if snapshot is not None:
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        docs = n_docs - traced_from
        total = sum(s.size_diff for s in after.compare_to(snapshot, "filename"))
        result["traced"] = {"docs": docs, "words": words - next(s["words"] for s in samples if s["docs"] == traced_from),
                            "mb_per_1000_docs": round(total / 2**20 * 1000 / docs, 3),
                            "by_line": traced_growth(snapshot, after, docs)}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench growth", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=4000)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--model", default=None)
    parser.add_argument("--source", default="perseus", help="a corpus source (distinct sentences) or dev_sample (cycled)")
    parser.add_argument("--mirror", type=Path, default=None, help="asset mirror (default: $STOICHEIA_ASSET_MIRROR)")
    parser.add_argument("--zone", action="store_true", help="each batch inside nlp.memory_zone()")
    parser.add_argument("--trace", action="store_true", help="tracemalloc over the second half")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    result = {"benchmark": "growth", **run_growth(args.docs, args.model, args.every, args.zone, args.trace,
                                                    args.source, args.mirror),
              "model": args.model or "default pipeline"}
    slopes = result["slope_second_half_per_1000_docs"]
    print(f"{args.docs:,} docs{' in memory zones' if args.zone else ''}: trimmed RSS "
          f"{result['samples'][0]['rss_trimmed_mb']} -> {result['samples'][-1]['rss_trimmed_mb']} MB; per 1,000 docs "
          f"(2nd half): {slopes['rss_trimmed_mb']} MB, {slopes['strings']:,.0f} strings")
    if "traced" in result:
        print(f"traced Python heap: {result['traced']['mb_per_1000_docs']} MB per 1,000 docs")
        for row in result["traced"]["by_line"]:
            print(f"  {row['mb_per_1000_docs']:8.3f}  {row['allocated_at']}  ({row['innermost_stoicheia_line']})")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0
