"""CPU cost and progress of the parse arms, in one JSON: cached-feature runs, their caches, and
traced processes (e.g. ``spacy train``, which records no CPU time itself).

- ``--run NAME=DIR``: a ``train_cached.py`` output folder (its ``checkpoint/state.json``: steps,
  passes, wall and process CPU seconds over every leg, best dev scores);
- ``--cache DIR``: a cache split folder (its ``cpu_seconds.log``: process CPU seconds after each
  chunk, per ``--part``; a restarted process starts counting again, so each run's last figure counts);
- ``--trace NAME=FILE``: lines ``UNIX_SECONDS CPU_TICKS`` sampled from ``/proc/PID/stat``
  (utime + stime, ``CLK_TCK`` = 100) while a process ran.

    python scripts/training_cost.py OUT.json --run hybrid=training/cached_hybrid/fold0__seed0 \\
        --cache corpus/features/KEY/fold0_train --trace cnn=training/logs/cnn_cpu.txt,training/logs/cnn2_cpu.txt
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def run_cost(folder: Path) -> dict[str, Any]:
    state = json.loads((folder / "checkpoint" / "state.json").read_text())
    evals = state.get("evals", [])
    return {"folder": str(folder), "steps": state["step"], "epochs_done": state["epoch"],
            "position_in_epoch": state["pos"], "wall_seconds": round(state.get("seconds", 0.0), 1),
            "cpu_seconds": round(state.get("cpu_seconds", 0.0), 1), "best_on_cached_dev": state.get("best", {}),
            "last_eval": evals[-1] if evals else None, "n_evals": len(evals)}


def cache_cost(split_dir: Path) -> dict[str, Any]:
    """Sum over processes of the CPU seconds each spent (its last logged figure)."""
    last: dict[str, float] = {}
    finished: list[float] = []
    chunks = 0
    for line in (split_dir / "cpu_seconds.log").read_text().splitlines():
        _, part, cpu, _wall = line.split("\t")
        value = float(cpu)
        if part in last and value < last[part]:  # a new process for this part
            finished.append(last[part])
        last[part] = value
        chunks += 1
    total = sum(finished) + sum(last.values())
    return {"folder": str(split_dir), "chunks_logged": chunks, "processes": len(finished) + len(last),
            "cpu_seconds": round(total, 1)}


def trace_cost(paths: list[Path], ticks_per_second: int = 100) -> dict[str, Any]:
    """CPU of a run traced in one file per leg (each leg a new process, its ticks from 0)."""
    wall = ticks = samples = 0
    for path in paths:
        rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
        wall += int(rows[-1][0]) - int(rows[0][0])
        ticks += int(rows[-1][1])
        samples += len(rows)
    return {"trace": ",".join(map(str, paths)), "legs": len(paths), "wall_seconds_traced": wall,
            "cpu_seconds": round(ticks / ticks_per_second, 1), "samples": samples}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--run", action="append", default=[], help="NAME=DIR (train_cached.py output)")
    ap.add_argument("--cache", action="append", default=[], type=Path, help="cache split folder")
    ap.add_argument("--trace", action="append", default=[], help="NAME=FILE[,FILE...] (sampled CPU ticks, one file per leg)")
    args = ap.parse_args(argv)
    result: dict[str, Any] = {
        "runs": {name: run_cost(Path(d)) for name, d in (s.split("=", 1) for s in args.run)},
        "caches": [cache_cost(d) for d in args.cache],
        "traces": {name: trace_cost([Path(f) for f in files.split(",")])
                   for name, files in (s.split("=", 1) for s in args.trace)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
