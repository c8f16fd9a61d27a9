"""Cold start of every task command (restore, accentuate, parse, scan, date) against ``import torch, spacy``.

``stoicheia bench cli [--model DIR] [--rounds 5] [--threads 1] [--out JSON]``

Each run is a fresh process: ``python -m stoicheia_spacy.cli COMMAND TEXT --model DIR`` (the
README's inputs: one gap for ``restore``, a verse for ``scan``, ...), and the baseline is
``python -c "import torch, spacy"``, the least any command must pay. Without ``--model`` the
full default pipeline is built by this checkout (:func:`stoicheia_spacy.assembly.build_pipeline`
of the embedded model) and saved to a temporary folder, as ``make demo`` installs it. Arms
alternate for ``--rounds`` rounds (after one warm-up round that fills the page cache);
measured per run: wall seconds and CPU seconds (user + system of the child), and the exit
status. Written: every run, the median per arm, and each command's median ÷ the baseline's
(wall and CPU; the target is ≤ 2).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The command lines measured (the model folder is appended as ``--model``).
COMMANDS: dict[str, list[str]] = {
    "restore": ["restore", "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ", "--top", "3"],
    "accentuate": ["accentuate", "μηνιν αειδε θεα πηληιαδεω αχιληος"],
    "parse": ["parse", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"],
    "scan": ["scan", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε"],
    "date": ["date", "ἔδοξε τῇ βουλῇ καὶ τῷ δήμῳ"],
}
BASELINE = [sys.executable, "-c", "import torch, spacy"]


def build_default(folder: Path) -> list[str]:
    """Save the full default pipeline (this checkout's code) to ``folder``; its pipe names."""
    code = ("import sys; from stoicheia_spacy.assembly import DEFAULT_SOURCE, build_pipeline; "
            "nlp = build_pipeline(DEFAULT_SOURCE); nlp.to_disk(sys.argv[1]); print(','.join(nlp.pipe_names))")
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1].split(",")


def timed(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall and CPU seconds of one child process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "status": proc.returncode,
            "first_line": lines[0][:120] if lines else proc.stderr.strip().splitlines()[-1:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench cli", description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="a saved pipeline folder [the default, built here]")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of every run [1]")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated subset of the commands")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    names = [n for n in args.commands.split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        pipes = None
        if model is None:
            model = Path(tmp) / "default"
            pipes = build_default(model)
        arms = {"import torch, spacy": BASELINE,
                **{n: [sys.executable, "-m", "stoicheia_spacy.cli", *COMMANDS[n], "--model", str(model)] for n in names}}
        for arm in arms.values():  # warm-up: page cache, bytecode
            timed(arm, env)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in arms}
        for _ in range(args.rounds):
            for name, arm in arms.items():
                runs[name].append(timed(arm, env))
    median = {name: {key: round(statistics.median(r[key] for r in rs), 3) for key in ("wall_s", "cpu_s")}
              for name, rs in runs.items()}
    base = median["import torch, spacy"]
    ratios = {name: {"wall": round(m["wall_s"] / base["wall_s"], 3), "cpu": round(m["cpu_s"] / base["cpu_s"], 3)}
              for name, m in median.items() if name in names}
    result = {"benchmark": "cli", "rounds": args.rounds, "threads": args.threads, "pipes": pipes,
              "python": platform.python_version(), "median": median, "ratio_to_import": ratios,
              "all_ok": all(r["status"] == 0 for rs in runs.values() for r in rs), "runs": runs}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"median": median, "ratio_to_import": ratios, "all_ok": result["all_ok"]}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
