"""Before/after timing of the corpus steps from ``folds`` on, on one subset, in one run.

Usage (repo root, after the workflow's ``tiers`` step wrote ``corpus/tiered/literary.jsonl``)::

    python projects/corpus/scripts/speedup.py --tiered projects/corpus/corpus/tiered/literary.jsonl \
        --records 120 --baseline-rev e28f9d2 --out projects/corpus/metrics_full/speedup.json

The package as of ``--baseline-rev`` and as of ``--after-rev`` (``git archive`` of each) run
``folds``, ``doc-clean`` and ``verify`` in fresh processes on copies of the first ``--records``
tiered records and ``--doc-records`` documentary records (under cProfile), the two arms
alternating step by step. The script records wall and CPU seconds, peak RSS and the top
functions of each, the speed ratio per step (by CPU time: the machine is shared), and whether
the two output trees are byte-identical.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from stoicheia_lab.corpus.sources import DOCUMENTARY

ROOT = Path(__file__).resolve().parents[3]
STEPS = ("folds", "doc-clean", "verify")

_CHILD = """
import cProfile, io, json, pstats, resource, sys, time
from pathlib import Path
from stoicheia_lab.corpus import pipeline
corpus, step, blocklist = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
call = {"folds": lambda: pipeline.step_folds(corpus),
        "doc-clean": lambda: pipeline.step_doc_clean(corpus, blocklist),
        "verify": lambda: pipeline.step_verify(corpus, blocklist)}[step]
prof = cProfile.Profile()
t = time.perf_counter()
prof.runcall(call)
seconds = time.perf_counter() - t
stats = pstats.Stats(prof)
top = sorted(((v[3], v[2], f"{k[0].rsplit('/', 2)[-1]}:{k[2]}") for k, v in stats.stats.items()), reverse=True)
use = resource.getrusage(resource.RUSAGE_SELF)
import stoicheia_spacy
print(json.dumps({"package": stoicheia_spacy.__file__, "seconds": round(seconds, 2), "cpu_seconds": round(use.ru_utime + use.ru_stime, 2), "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "top_cumulative": [{"function": f, "cumulative_s": round(c, 2), "own_s": round(o, 2)} for c, o, f in top[2:14]]}))
"""


def _same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all(filecmp.cmp(a / f, b / f, shallow=False) for f in files_a)


def _package(rev: str, dest: Path) -> Path:
    """``stoicheia_spacy`` as of git revision ``rev``, extracted under ``dest``."""
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "stoicheia_spacy"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _head(path: Path, n: int) -> list[str]:
    with path.open(encoding="utf-8") as fh:
        return [line for _, line in zip(range(n), fh, strict=False)]


def _run(package_root: Path, corpus: Path, step: str, blocklist: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(package_root), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # cwd is the package root: ``python -c`` puts the cwd first on sys.path
    out = subprocess.run([sys.executable, "-c", _CHILD, str(corpus), step, str(blocklist)], env=env,
                         cwd=package_root, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiered", type=Path, required=True, help="tiered/literary.jsonl of a workflow run")
    p.add_argument("--records", type=int, default=120, help="first N records form the subset")
    p.add_argument("--doc-records", type=int, default=500,
                   help="first N records of each documentary file in normalized/ beside tiered/")
    p.add_argument("--baseline-rev", default="e28f9d2", help="git revision of the package before the speed-up")
    p.add_argument("--after-rev", default="HEAD", help="git revision of the package after it")
    p.add_argument("--blocklist", type=Path, default=ROOT / "projects" / "corpus" / "blocklist.txt")
    p.add_argument("--steps", default=",".join(STEPS), help="comma-separated steps, in workflow order")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    steps = [s for s in STEPS if s in args.steps.split(",")]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pkgs = {"after": _package(args.after_rev, tmp / "pkg_after"),
                "before": _package(args.baseline_rev, tmp / "pkg_before")}
        lines = _head(args.tiered, args.records)
        words = sum(len(json.loads(line)["text"].split()) for line in lines)
        normalized = args.tiered.parent.parent / "normalized"
        documentary = {f.name: _head(f, args.doc_records) for f in sorted(normalized.glob("*.jsonl"))
                       if f.stem in DOCUMENTARY}
        results: dict[str, Any] = {arm: {} for arm in pkgs}
        for arm in pkgs:
            corpus = tmp / arm
            (corpus / "tiered").mkdir(parents=True)
            (corpus / "tiered" / "literary.jsonl").write_text("".join(lines), encoding="utf-8")
            (corpus / "normalized").mkdir()
            for name, doc_lines in documentary.items():
                (corpus / "normalized" / name).write_text("".join(doc_lines), encoding="utf-8")
        for step in steps:  # arms alternate step by step, so a change of machine load hits both
            for arm, pkg in pkgs.items():
                results[arm][step] = _run(pkg, tmp / arm, step, args.blocklist)
                assert results[arm][step]["package"].startswith(str(pkg)), results[arm][step]["package"]
                print(arm, step, results[arm][step]["seconds"], "s", flush=True)
        identical = _same_tree(tmp / "before", tmp / "after")
    total = {arm: round(sum(r["seconds"] for r in results[arm].values()), 2) for arm in results}
    cpu = {arm: round(sum(r["cpu_seconds"] for r in results[arm].values()), 2) for arm in results}
    report = {
        "command": "python projects/corpus/scripts/speedup.py " + " ".join(sys.argv[1:]),
        "subset": {"records": len(lines), "whitespace_words": words, "source": str(args.tiered.name),
                   "documentary_records": {k: len(v) for k, v in documentary.items()}},
        "after_rev": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.after_rev],
                                    capture_output=True, text=True, check=True).stdout.strip(),
        "baseline_rev": args.baseline_rev,
        "outputs_identical": identical,
        "seconds": {arm: {s: results[arm][s]["seconds"] for s in steps} | {"total": total[arm]} for arm in results},
        "cpu_seconds": {arm: {s: results[arm][s]["cpu_seconds"] for s in steps} | {"total": cpu[arm]} for arm in results},
        "speedup_cpu": {s: round(results["before"][s]["cpu_seconds"] / results["after"][s]["cpu_seconds"], 2)
                        for s in steps} | {"total": round(cpu["before"] / cpu["after"], 2)},
        "speedup_wall": {s: round(results["before"][s]["seconds"] / results["after"][s]["seconds"], 2)
                         for s in steps} | {"total": round(total["before"] / total["after"], 2)},
        "peak_rss_mib": {arm: max(r["peak_rss_mib"] for r in results[arm].values()) for arm in results},
        "profiles": results,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("subset", "outputs_identical", "cpu_seconds", "speedup_cpu")}))


if __name__ == "__main__":
    main()
