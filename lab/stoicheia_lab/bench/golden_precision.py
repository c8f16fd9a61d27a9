"""Golden released-task decisions under each encoder precision: which fixtures change, counted and listed.

``stoicheia bench golden-precision [--precisions float32,int8,bfloat16] [--out JSON]`` (in a
source checkout: it runs the golden tests of ``tests/release``)

For each precision, the golden tests of the released tasks (backbone logits, meter, restoration,
tagger-parser: ``tests/release/test_golden_released.py`` and ``test_golden_tagger_parser.py``,
which read ``../shared/spec/golden/released_tasks`` in place) run in a fresh pytest process with
``STOICHEIA_GOLDEN_PRECISION`` set, so every packaged pipeline they load runs its encoder in that
precision. Written per precision: tests passed, failed and skipped, and the failing test ids with
the first line of each failure. A precision is faithful when nothing fails (the tests compare
decisions exactly and scores within 1e-3, as the fixtures' README says).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
TESTS = ("tests/release/test_golden_released.py", "tests/release/test_golden_tagger_parser.py")


def run_precision(precision: str, root: Path = ROOT) -> dict[str, Any]:
    """The golden tests under ``precision`` (module doc)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        env = {**os.environ, "STOICHEIA_GOLDEN_PRECISION": precision, "PYTHONPATH": str(root)}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                        *TESTS], cwd=root, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        cases = ET.parse(report).getroot().iter("testcase")
        failed, skipped, passed = [], 0, 0
        for case in cases:
            problem = case.find("failure")
            if problem is None:
                problem = case.find("error")
            if problem is not None:
                message = (problem.get("message") or "").strip().splitlines()
                failed.append({"test": f"{case.get('classname')}::{case.get('name')}",
                               "message": message[0][:300] if message else ""})
            elif case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    return {"precision": precision, "passed": passed, "failed": len(failed), "skipped": skipped,
            "faithful": not failed and passed > 0, "failures": failed, "seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench golden-precision", description=__doc__.splitlines()[0])
    parser.add_argument("--precisions", default="float32,float32-fused,int8,bfloat16")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    if not all((ROOT / test).is_file() for test in TESTS):
        print(f"error: the golden tests ({', '.join(TESTS)}) are not beside this package: run from a source checkout",
              file=sys.stderr)
        return 1
    rows = []
    for precision in (p for p in args.precisions.split(",") if p):
        row = run_precision(precision)
        print(json.dumps(row, ensure_ascii=False), flush=True)
        rows.append(row)
    result = {"benchmark": "golden-precision", "tests": list(TESTS), "rows": rows,
              "faithful": [r["precision"] for r in rows if r["faithful"]]}
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
