"""``stoicheia bench heapclimb [--pieces N] [--out FILE]``: RSS climb per piece, with and without heap trimming.

Successive distinct pieces of real Perseus text (``annotate``'s cutting, ``--max-chars``)
go one at a time through the pipeline in a memory zone, as the annotate worker runs them,
in two fresh processes run side by side (same machine load): ``keep`` (glibc keeps freed heap) and
``trim`` (``malloc_trim(0)`` after each piece, :mod:`stoicheia_spacy.heap`). The
RSS after each piece and the least-squares slope from piece ``--skip`` + 1 on (MB per
piece) are reported per arm; a slope that vanishes with trimming is freed-but-kept heap,
not retained objects.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def run_arm(pieces: int, max_chars: int, trim: bool, model: str | None, source: str) -> dict[str, Any]:
    """In this process: RSS (MB) after each of ``pieces`` pieces, trimming the heap after each when ``trim``."""
    import psutil

    from stoicheia_spacy.annotate.convert import doc_to_record
    from stoicheia_spacy.annotate.pieces import split_text
    from stoicheia_spacy.annotate.worker import load_pipeline, set_threads
    from stoicheia_spacy.heap import trim_heap

    from .memory import greek_text

    set_threads(1)
    text, _ids = greek_text(max_chars * (pieces + 2), source)
    cut = split_text(text, max_chars)[:pieces]
    nlp = load_pipeline(model)
    proc = psutil.Process()
    rows = []
    start = time.perf_counter()
    for i, piece in enumerate(cut, 1):
        with nlp.memory_zone():
            doc = nlp(piece)
            doc_to_record(doc, "piece")
            doc.user_data.clear()
            del doc
        gc.collect()
        if trim:
            trim_heap()
        rows.append({"piece": i, "chars": len(piece), "rss_mb": round(proc.memory_info().rss / 2**20, 1),
                     "seconds": round(time.perf_counter() - start, 1)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return {"trim": trim, "pipes": nlp.pipe_names, "rows": rows}


def slope(rows: list[dict[str, Any]], skip: int) -> float:
    """Least-squares MB per piece over the rows after the first ``skip``."""
    import numpy as np

    tail = rows[skip:]
    if len(tail) < 2:
        return float("nan")
    return float(np.polyfit([r["piece"] for r in tail], [r["rss_mb"] for r in tail], 1)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench heapclimb", description=__doc__.splitlines()[0])
    parser.add_argument("--pieces", type=int, default=16)
    parser.add_argument("--skip", type=int, default=4, help="warm-up pieces left out of the slope")
    parser.add_argument("--max-chars", type=int, default=4096)
    parser.add_argument("--model", default=None)
    parser.add_argument("--source", default="perseus")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--arm", choices=("keep", "trim"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    common = ["--pieces", str(args.pieces), "--max-chars", str(args.max_chars), "--source", args.source]
    common += ["--model", args.model] if args.model else []
    if args.arm:
        print(json.dumps(run_arm(args.pieces, args.max_chars, args.arm == "trim", args.model, args.source)))
        return 0
    procs = {arm: subprocess.Popen([sys.executable, "-m", "stoicheia_lab.bench", "heapclimb", "--arm", arm, *common],
                                   stdout=subprocess.PIPE, text=True)
             for arm in ("keep", "trim")}  # fresh processes, so that one arm's heap is not the other's
    arms = {}
    for arm, proc in procs.items():
        out, _ = proc.communicate()
        if proc.returncode:
            raise RuntimeError(f"heapclimb arm {arm} failed with status {proc.returncode}")
        arms[arm] = json.loads(out.strip().splitlines()[-1])
        arms[arm]["slope_mb_per_piece"] = round(slope(arms[arm]["rows"], args.skip), 3)
    result = {"benchmark": "heapclimb", "pieces": args.pieces, "max_chars": args.max_chars, "source": args.source,
              "skip": args.skip, "model": args.model or "default pipeline", "arms": arms}
    print(f"RSS climb after piece {args.skip}: {arms['keep']['slope_mb_per_piece']} MB/piece kept, "
          f"{arms['trim']['slope_mb_per_piece']} MB/piece with malloc_trim")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
