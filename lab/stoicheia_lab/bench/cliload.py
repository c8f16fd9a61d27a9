"""What ``stoicheia restore`` on one gap costs to start: wall, CPU, time in ``spacy.load``, components loaded.

``python -m stoicheia_lab.bench cliload [--baseline CHECKOUT] [--rounds 3] [--out JSON]``

The model is the full default pipeline saved as a folder (what ``make demo`` installs as
``grc_stoicheia_doc_clean``: the encoder and every shipped component), built by each arm's
own code (a pipeline saved by one version need not load in another: the restorer's
settings became one config block) and given to that arm as ``--model``. Each run
is a fresh process (``PYTHONPATH`` = the arm's checkout) that runs the CLI's ``main`` on
``restore TEXT --model FOLDER --top 3``; ``spacy.load`` is wrapped to time it and to record
the components of the pipeline it returned. Arms alternate for ``--rounds`` rounds on one
thread each. Measured per run: wall time of the process (interpreter start included), its
CPU time (user + system), the seconds inside ``spacy.load``, the components loaded, and the
top candidate it printed (both arms must restore the same gap). Written: every run, the
median per arm and after ÷ before.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[3]
TEXT = "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ"

# Builds the full default pipeline with the checkout first on sys.path and saves it.
_BUILD = r"""
import sys
from stoicheia_spacy.assembly import DEFAULT_SOURCE, build_pipeline
nlp = build_pipeline(DEFAULT_SOURCE)
nlp.to_disk(sys.argv[1])
import stoicheia_spacy
print(stoicheia_spacy.__file__)
print(",".join(nlp.pipe_names))
"""

# One CLI run: times spacy.load and reports the pipeline it returned, then the rusage.
_RUN = r"""
import json, resource, sys, time, io, contextlib
import spacy
loads = []
_load = spacy.load
def timed_load(*args, **kwargs):
    start = time.perf_counter()
    nlp = _load(*args, **kwargs)
    loads.append((time.perf_counter() - start, nlp))
    return nlp
spacy.load = timed_load
import torch
torch.set_num_threads(1)
from stoicheia_spacy.cli import main
sys.argv = ["stoicheia", "restore", sys.argv[1], "--model", sys.argv[2], "--top", "3"]
out = io.StringIO()
status = 0
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 0
usage = resource.getrusage(resource.RUSAGE_SELF)
lines = [line for line in out.getvalue().splitlines() if line.strip()]
import stoicheia_spacy
print(json.dumps({"status": status, "package": stoicheia_spacy.__file__, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "spacy_load_s": sum(t for t, _ in loads),
                  "components": [name for _, nlp in loads for name in nlp.pipe_names],
                  "restored": lines[0] if lines else None}, ensure_ascii=False), file=sys.stderr)
"""


def _env(checkout: Path) -> dict[str, str]:
    """The arm's environment: its checkout first on the path (the process runs in a
    neutral folder, so that the current directory is not imported instead)."""
    return dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")


def build_model(checkout: Path, folder: Path) -> list[str]:
    """Save the full default pipeline of ``checkout`` to ``folder``; its component names."""
    done = subprocess.run([sys.executable, "-c", _BUILD, str(folder)], env=_env(checkout), capture_output=True,
                          text=True, check=False, cwd=folder.parent)
    if done.returncode != 0:
        raise SystemExit(f"building the default pipeline failed:\n{done.stderr[-3000:]}")
    package, names = done.stdout.strip().splitlines()[-2:]
    if not package.startswith(str(checkout)):
        raise SystemExit(f"the build imported {package}, not the checkout {checkout}")
    return names.split(",")


def run_once(checkout: Path, model: Path, text: str) -> dict[str, Any]:
    """One fresh-process ``stoicheia restore`` with ``checkout``'s package."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RUN, text, str(model)], env=_env(checkout), capture_output=True,
                          text=True, check=False, cwd=model.parent)
    wall = time.perf_counter() - start
    report = None
    for line in reversed(done.stderr.splitlines()):
        if line.startswith("{\"status\""):
            report = json.loads(line)
            break
    if report is None or report["status"] != 0:
        raise SystemExit(f"stoicheia restore failed in {checkout}:\n{done.stderr[-3000:]}")
    if not report["package"].startswith(str(checkout)):
        raise SystemExit(f"the run imported {report['package']}, not the checkout {checkout}")
    return {"wall_s": wall, **report}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"wall_s": statistics.median(r["wall_s"] for r in runs),
            "cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "spacy_load_s": statistics.median(r["spacy_load_s"] for r in runs),
            "components": runs[0]["components"], "n_components": len(runs[0]["components"]),
            "restored": runs[0]["restored"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench cliload", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="Another checkout (the 'before' arm), e.g. a git worktree of main")
    parser.add_argument("--rounds", type=int, default=3, help="Runs per arm, alternating")
    parser.add_argument("--text", default=TEXT, help="The text restored (one gap)")
    parser.add_argument("--out", type=Path, help="Write the JSON here")
    args = parser.parse_args(argv)
    arms = {"after": PACKAGE_ROOT}
    if args.baseline is not None:
        arms = {"before": args.baseline.resolve(), **arms}
    with tempfile.TemporaryDirectory(prefix="cliload-") as tmp:
        models, built = {}, {}
        for arm, checkout in arms.items():
            models[arm] = Path(tmp) / arm / "grc_stoicheia_doc_clean"
            models[arm].parent.mkdir()
            built[arm] = build_model(checkout, models[arm])
            print(f"{arm} model: {len(built[arm])} components ({', '.join(built[arm])})", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
        for round_ in range(args.rounds):
            for arm, checkout in arms.items():
                result = run_once(checkout, models[arm], args.text)
                runs[arm].append(result)
                print(f"round {round_ + 1} {arm}: wall {result['wall_s']:.2f} s, CPU {result['cpu_s']:.2f} s, "
                      f"spacy.load {result['spacy_load_s']:.2f} s, {len(result['components'])} components",
                      flush=True)
    summary = {arm: summarise(r) for arm, r in runs.items()}
    out: dict[str, Any] = {
        "command": "stoicheia bench cliload" + (f" --baseline {args.baseline}" if args.baseline else "")
                   + f" --rounds {args.rounds}",
        "what": f"stoicheia restore {args.text!r} --model <full default pipeline folder> --top 3, fresh process each run",
        "model_components": built, "text": args.text, "threads": 1,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "load_average_at_end": list(os.getloadavg())},
        "arms": {arm: str(path) for arm, path in arms.items()}, "median": summary, "runs": runs,
    }
    if "before" in summary:
        before, after = summary["before"], summary["after"]
        out["after_over_before"] = {key: after[key] / before[key] for key in ("wall_s", "cpu_s", "spacy_load_s")}
        if before["restored"] != after["restored"]:
            print(f"warning: the arms restored differently: {before['restored']!r} vs {after['restored']!r}")
    for arm, s in summary.items():
        print(f"{arm}: median wall {s['wall_s']:.2f} s, CPU {s['cpu_s']:.2f} s, spacy.load {s['spacy_load_s']:.2f} s, "
              f"{s['n_components']} components")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
