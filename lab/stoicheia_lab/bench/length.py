"""Time and peak memory of the default pipeline against a document's length: linear or not.

``python -m stoicheia_lab.bench length [--lengths 1000,2000,...,128000] [--word 20000]
[--gap 2000,8000] [--threads 1] [--out JSON] [--plot PNG]``

Real Greek (the 200 UD Perseus sentences of the test fixture, cycled) in three shapes,
each case in its own process (so that its peak RSS is its own), through ``nlp(text)`` of
the default pipeline, every component timed in CPU seconds (``time.process_time``):

* ``line``: one line of ``N`` letters of words, punctuation and line breaks removed, so
  one sentence as long as the document (the parser's arc matrix is per sentence);
* ``word``: ``--word`` letters with no space at all (one token as long as the document);
* ``gap``: one 10-letter gap (``[..........]``) in the middle of ``--gap`` documents, the
  restorer's cost per gap against the document's length;
* ``kb``: ``--kb`` kilobytes of UTF-8, the fixture's sentences as they are (punctuation,
  accents) joined by spaces (200 KB: about 110,000 letters).

Printed and written: per case seconds per component, seconds per 1,000 letters, peak RSS
and its growth over the loaded pipeline; per shape the log-log slope of time (and of RSS
growth) against length over the longer half (1.0 is linear) and the ratio of
seconds-per-letter at the longest length to the shortest. ``--plot`` draws time and RSS
against length (log-log) with matplotlib.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

from .pipeline import DEFAULT_SOURCE, FIXTURE

PACKAGE_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_LENGTHS = (1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000)
GAP = "[" + "." * 10 + "]"

# Runs in a fresh process: reads the job (JSON) on stdin, prints one JSON line.
_CHILD = r"""
import json, resource, sys, time
import torch
job = json.load(sys.stdin)
torch.set_num_threads(job["threads"])
from stoicheia_spacy.assembly import build_pipeline
nlp = build_pipeline(job["source"])
nlp(job["warmup"])
def rss_mb():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 2**20
loaded = rss_mb()
doc = nlp.make_doc(job["text"])
seconds = {}
start_wall = time.perf_counter()
for name, proc in nlp.pipeline:
    start = time.process_time()
    doc = proc(doc)
    seconds[name] = time.process_time() - start
wall = time.perf_counter() - start_wall
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "wall_s": wall, "tokens": len(doc), "sentences": len(list(doc.sents)),
                  "rss_loaded_mb": loaded, "rss_peak_mb": peak}))
"""


def greek_letters(spaced: bool) -> str:
    """The fixture's sentences as one line: letters (with their diacritics) and, if
    ``spaced``, single spaces between words; no punctuation, no line breaks."""
    raw = FIXTURE.read_text(encoding="utf-8")
    kept = "".join(ch if unicodedata.category(ch)[0] in "LM" else " " for ch in raw)
    words = kept.split()
    return " ".join(words) if spaced else "".join(words)


def n_letters(text: str) -> int:
    return sum(1 for ch in text if unicodedata.category(ch)[0] == "L")


def cut(source: str, letters: int) -> str:
    """The first ``letters`` letters of ``source`` cycled (with the spaces between them)."""
    text = (source + " ") * (letters // n_letters(source) + 1)
    ends = [i for i, ch in enumerate(text) if unicodedata.category(ch)[0] == "L"]  # once per case, untimed
    return text[:ends[letters - 1] + 1].strip()


def sentences_bytes(size: int) -> str:
    """The fixture's sentences (punctuation kept) joined by spaces, cycled and cut to at most
    ``size`` bytes of UTF-8 at a space."""
    one = " ".join(line.strip() for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip())
    text = " ".join([one] * (size // len(one.encode("utf-8")) + 1))
    raw = text.encode("utf-8")[:size].decode("utf-8", errors="ignore")
    return raw[:raw.rfind(" ")] if " " in raw else raw


def with_gap(text: str) -> str:
    """``text`` with a 10-letter gap in the middle (at a space)."""
    middle = text.find(" ", len(text) // 2)
    middle = len(text) // 2 if middle < 0 else middle
    return text[:middle] + " " + GAP + text[middle:]


def run_case(text: str, source: str, threads: int, checkout: Path = PACKAGE_ROOT) -> dict[str, Any]:
    """One case in a fresh process with ``checkout`` (default: this one) first on ``sys.path``
    (``-P``: not the working directory)."""
    env = dict(os.environ)
    paths = [str(checkout), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    job = {"text": text, "source": source, "threads": threads, "warmup": "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"}
    done = subprocess.run([sys.executable, "-P", "-c", _CHILD], input=json.dumps(job), capture_output=True,
                          text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"case failed ({len(text)} characters):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def loglog_slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) on log(x) over the longer half of ``points``."""
    pts = sorted((x, y) for x, y in points if x > 0 and y > 0)
    pts = pts[len(pts) // 2 - (1 if len(pts) % 2 == 0 and len(pts) > 2 else 0):] if len(pts) > 2 else pts
    if len(pts) < 2:
        return None
    xs, ys = [math.log(x) for x, _ in pts], [math.log(y) for _, y in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Slopes and the per-letter ratio of one shape's rows."""
    rows = sorted(rows, key=lambda r: r["letters"])
    total = [(r["letters"], r["cpu_s"]) for r in rows]
    grown = [(r["letters"], r["rss_growth_mb"]) for r in rows]
    per_pipe = {name: loglog_slope([(r["letters"], r["seconds"][name]) for r in rows]) for name in rows[0]["seconds"]}
    return {"time_slope": loglog_slope(total), "rss_growth_slope": loglog_slope(grown),
            "per_letter_last_over_first": (rows[-1]["cpu_s"] / rows[-1]["letters"]) / (rows[0]["cpu_s"] / rows[0]["letters"]),
            "component_time_slopes": per_pipe}


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(10, 4))
    for shape, marker in (("line", "o"), ("word", "s"), ("gap", "^"), ("kb", "D")):
        rows = sorted(result["cases"].get(shape, []), key=lambda r: r["letters"])
        if not rows:
            continue
        xs = [r["letters"] for r in rows]
        ax_t.plot(xs, [r["cpu_s"] for r in rows], marker=marker, label=shape)
        ax_m.plot(xs, [max(r["rss_growth_mb"], 1.0) for r in rows], marker=marker, label=shape)
    line = sorted(result["cases"].get("line", []), key=lambda r: r["letters"])
    if line:
        x0, y0 = line[0]["letters"], line[0]["cpu_s"]
        xs = [r["letters"] for r in line]
        ax_t.plot(xs, [y0 * x / x0 for x in xs], "k:", label="linear")
    for ax, label in ((ax_t, "CPU seconds of nlp(text)"), (ax_m, "peak RSS over the loaded pipeline (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("letters in the document")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"default pipeline, {result['threads']} thread(s): time and memory against length")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench length", description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default=",".join(map(str, DEFAULT_LENGTHS)), help="letters of the line cases")
    parser.add_argument("--word", default="20000", help="letters of the unspaced cases (comma-separated; '' for none)")
    parser.add_argument("--gap", default="2000,8000", help="letters of the one-gap cases ('' for none)")
    parser.add_argument("--kb", default="", help="kilobytes (1000 bytes of UTF-8) of the fixture's sentences as they "
                        "are, joined by spaces, one case each ('' for none; e.g. 200)")
    parser.add_argument("--source", default=DEFAULT_SOURCE)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--checkout", type=Path, default=PACKAGE_ROOT,
                        help="the package checkout the cases run (default: this one; e.g. a `git archive` of main)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args(argv)

    def ints(spec: str) -> list[int]:
        return [int(x) for x in spec.split(",") if x.strip()]

    spaced, unspaced = greek_letters(True), greek_letters(False)
    plan = ([("line", n, cut(spaced, n)) for n in ints(args.lengths)]
            + [("word", n, cut(unspaced, n)) for n in ints(args.word)]
            + [("gap", n, with_gap(cut(spaced, n))) for n in ints(args.gap)])
    for kb in ints(args.kb):
        text = sentences_bytes(kb * 1000)
        plan.append(("kb", n_letters(text), text))
    cases: dict[str, list[dict[str, Any]]] = {}
    started = time.perf_counter()
    for shape, letters, text in plan:
        got = run_case(text, args.source, args.threads, args.checkout)
        cpu = sum(got["seconds"].values())
        row = {"letters": letters, "characters": len(text), **got, "cpu_s": cpu,
               "s_per_1000_letters": cpu / letters * 1000,
               "rss_growth_mb": got["rss_peak_mb"] - got["rss_loaded_mb"]}
        cases.setdefault(shape, []).append(row)
        top = max(got["seconds"], key=got["seconds"].get)
        print(f"{shape:4s} {letters:7,d} letters: {cpu:8.2f} CPU s ({row['s_per_1000_letters']:.3f} s/1k), "
              f"peak {got['rss_peak_mb']:7.0f} MB (+{row['rss_growth_mb']:.0f}), {got['tokens']} tokens, "
              f"{got['sentences']} sentence(s); slowest {top} {got['seconds'][top]:.2f} s", flush=True)
    result: dict[str, Any] = {
        "benchmark": "length", "command": "python -m stoicheia_lab.bench length " + " ".join(argv),
        "source": args.source, "checkout": str(args.checkout), "threads": args.threads, "machine": platform.processor() or platform.machine(),
        "text": "tests/fixtures/ud_sentences_200.txt, cycled; line: words and spaces, no punctuation or line break",
        "timing": "CPU seconds of the child process per component (time.process_time); peak RSS from ru_maxrss",
        "elapsed_s": time.perf_counter() - started, "cases": cases,
        "summary": {shape: summarise(rows) for shape, rows in cases.items() if len(rows) > 1},
    }
    for shape, info in result["summary"].items():
        slope, mem = info["time_slope"], info["rss_growth_slope"]
        print(f"{shape}: time ~ letters^{slope:.2f}" + (f", RSS growth ~ letters^{mem:.2f}" if mem else "")
              + f"; s/letter longest / shortest {info['per_letter_last_over_first']:.2f}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if args.plot is not None:
        plot(result, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
