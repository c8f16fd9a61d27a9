"""Run a command, trace its CPU time, and interrupt it (SIGINT) when it has used a CPU budget.

Arms compared "at equal CPU time" are stopped by this, not by the wall clock: a ``spacy train``
interrupted with SIGINT saves ``model-last`` and keeps the ``model-best`` of its last evaluation.
The trace (one line every ``--every`` seconds: unix time, CPU ticks at 100 per second of the
process and its children) is what ``training_cost.py --trace`` reads.

    python scripts/cpu_budget.py --cpu-seconds 4458 --trace training/logs/cnn2_cpu.txt -- \\
        python -m spacy train training/cnn_resume.cfg --output training/cnn2/fold0__seed0 ...
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

TICKS_PER_SECOND = 100


def cpu_seconds(proc: psutil.Process) -> float:
    """User + system CPU of ``proc`` and its live descendants."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


def run_with_budget(cmd: list[str], budget: float, trace: Path, every: float = 20.0,
                    grace: float = 600.0) -> tuple[int, float, bool]:
    """(return code, CPU seconds used, whether the budget stopped it)."""
    trace.parent.mkdir(parents=True, exist_ok=True)
    # a job started in the background by a non-interactive shell ignores SIGINT, and the ignore is
    # inherited: give the command the default disposition so that the interrupt reaches it
    child = subprocess.Popen(cmd, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    proc = psutil.Process(child.pid)
    used, stopped = 0.0, False
    with trace.open("w") as log:
        while child.poll() is None:
            try:
                used = max(used, cpu_seconds(proc))
            except psutil.NoSuchProcess:
                break
            log.write(f"{int(time.time())} {round(used * TICKS_PER_SECOND)}\n")
            log.flush()
            if used >= budget:
                stopped = True
                child.send_signal(signal.SIGINT)
                break
            try:
                child.wait(timeout=every)
            except subprocess.TimeoutExpired:
                pass
    try:
        code = child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
    return code, used, stopped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-seconds", type=float, required=True, help="CPU budget of the command")
    ap.add_argument("--trace", type=Path, required=True, help="file of sampled CPU ticks")
    ap.add_argument("--every", type=float, default=20.0, help="seconds between samples")
    ap.add_argument("--grace", type=float, default=600.0,
                    help="seconds the interrupted command gets to save before it is killed")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command")
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command given")
    if cmd[0] == "python":  # as spacy project does for a command's own "python": this interpreter
        cmd = [sys.executable, *cmd[1:]]
    code, used, stopped = run_with_budget(cmd, args.cpu_seconds, args.trace, args.every, args.grace)
    how = "stopped at its CPU budget" if stopped else f"exited with {code}"
    print(f"{cmd[0]} {how} after {used:.1f} CPU seconds (trace {args.trace})", file=sys.stderr)
    return 0 if stopped else code


if __name__ == "__main__":
    raise SystemExit(main())
