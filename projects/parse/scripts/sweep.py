"""Run the parse-eval workflow over (fold, seed) pairs, then the comparison over all of them.

Each pair is ``python -m weasel run parse-eval . --vars.fold K --vars.train_seed S`` (weasel
skips steps whose outputs are up to date, so an interrupted sweep resumes); the paired
tests of ``compare`` need several pairs (five folds × one seed gives sign-flip p >= 1/16).

    python scripts/sweep.py [--folds 0,1,2,3,4] [--seeds 0] [--workflow parse-eval] [--dry-run]
"""

from __future__ import annotations

import argparse
import subprocess
import sys


def commands(folds: list[int], seeds: list[int], workflow: str) -> list[list[str]]:
    """The weasel invocations of the sweep, in order (the comparison last)."""
    runs = [[sys.executable, "-m", "weasel", "run", workflow, ".", "--vars.fold", str(k), "--vars.train_seed", str(s)]
            for k in folds for s in seeds]
    return [*runs, [sys.executable, "-m", "weasel", "run", "compare", "."]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", default="0,1,2,3,4")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--workflow", default="parse-eval")
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = ap.parse_args(argv)
    folds = [int(x) for x in args.folds.split(",") if x]
    seeds = [int(x) for x in args.seeds.split(",") if x]
    todo = commands(folds, seeds, args.workflow)
    for i, cmd in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {' '.join(cmd[1:])}", flush=True)
        if not args.dry_run:
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
