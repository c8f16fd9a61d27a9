"""Counts and scale figures of a full corpus-workflow run, for projects/corpus/metrics_full/.

Usage (repo root). The workflow runs one ``/usr/bin/time -v`` per step, its output in one or
more logs, with a sampler writing ``EPOCH STEP RSS_KB`` lines every few seconds to MONITOR::

    cd projects/corpus && for s in fetch normalize tiers folds doc-clean verify report; do
        /usr/bin/time -v nice -n 10 python -m weasel run $s . --vars.sample 0 || break; done > LOG 2>&1
    python projects/pretrain/scripts/corpus_scale.py --corpus projects/corpus/corpus \
        --log LOG [--log LOG2 ...] --monitor MONITOR --out projects/corpus/metrics_full

Writes ``counts.json`` (records, letters, words per source; tiers; per-fold and doc-clean
splits; verify summary), ``scale.json`` (wall seconds and peak RSS per step from the time
reports, the monitor's samples as a fallback, records/s, words/s, and a linear extrapolation
to the paper's ~361 M words) and copies the small products (``manifests/*.json``, ``report.md``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

PAPER_WORDS = 361_000_000


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _jsonl_counts(path: Path) -> dict[str, int]:
    records = letters = words = 0
    if path.is_file():
        from stoicheia_spacy.codec import encode_planes
        from stoicheia_spacy.textnorm import word_keys

        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    text = json.loads(line)["text"]
                    records += 1
                    letters += len(encode_planes(text))
                    words += len(word_keys(text))
    return {"records": records, "letters": letters, "words": words}


def steps_from_monitor(path: Path) -> dict[str, dict[str, float]]:
    """Wall seconds (first to last sample) and peak RSS (MiB) of each workflow step."""
    steps: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in STEP_NAMES or not parts[2].isdigit():
            continue  # a sample of some other process
        t, step, rss = float(parts[0]), parts[1], float(parts[2]) / 1024
        s = steps.setdefault(step, {"start": t, "end": t, "peak_rss_mib": 0.0})
        s["end"] = t
        s["peak_rss_mib"] = max(s["peak_rss_mib"], rss)
    names = list(steps)
    for i, name in enumerate(names):  # a step lasts until the next one starts
        end = steps[names[i + 1]]["start"] if i + 1 < len(names) else steps[name]["end"]
        steps[name] = {"seconds": round(end - steps[name]["start"], 1), "peak_rss_mib": round(steps[name]["peak_rss_mib"], 1)}
    return steps


STEP_NAMES = ("fetch", "normalize", "tiers", "folds", "doc-clean", "verify", "report")


def _clock_seconds(text: str) -> float:
    parts = [float(x) for x in text.split(":")]
    return sum(v * 60 ** i for i, v in enumerate(reversed(parts)))


def steps_from_logs(logs: list[str]) -> dict[str, dict[str, float]]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) per step from
    ``/usr/bin/time -v`` reports, each report belonging to the last weasel step header before it."""
    steps: dict[str, dict[str, float]] = {}
    for log in logs:
        marks = sorted([(m.start(), "step", m.group(1)) for m in re.finditer(r"={3,} ([a-z-]+) ={3,}", log)]
                       + [(m.start(), "wall", m.group(1)) for m in re.finditer(
                           r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", log)]
                       + [(m.start(), "rss", m.group(1)) for m in re.finditer(
                           r"Maximum resident set size \(kbytes\): (\d+)", log)]
                       + [(m.start(), "cpu", m.group(1)) for m in re.finditer(
                           r"(?:User|System) time \(seconds\): ([\d.]+)", log)])
        step = None
        for _, kind, value in marks:
            if kind == "step":
                step = value
            elif step is not None:
                s = steps.setdefault(step, {})
                if kind == "wall":
                    s["seconds"] = round(_clock_seconds(value), 1)
                elif kind == "cpu":
                    s["cpu_seconds"] = round(s.get("cpu_seconds", 0.0) + float(value), 1)
                else:
                    s["peak_rss_mib"] = round(int(value) / 1024, 1)
    return {k: steps[k] for k in STEP_NAMES if k in steps and "seconds" in steps[k]}


def collect_counts(corpus: Path) -> dict[str, Any]:
    """Records, letters and words per source, fold split and doc-clean split; tier, works,
    fold and verify statistics of a corpus folder."""
    stats = corpus / "stats"
    norm = _load(stats / "normalize.json") or {}
    sources = {k: {f: v.get(f) for f in ("records", "letters", "words", "sentences", "kind")}
               for k, v in norm.items() if isinstance(v, dict) and "records" in v}
    folds = {d.name: {s: _jsonl_counts(d / f"{s}.jsonl") for s in ("train", "dev", "test")}
             for d in sorted(corpus.glob("fold_*"), key=lambda d: int(d.name.split("_")[1]))}
    doc_clean = {s: _jsonl_counts(corpus / "doc_clean" / f"{s}.jsonl") for s in ("train", "dev")}
    counts = {
        "sources": sources,
        "tiers": _load(stats / "tiers.json"),
        "works": _load(stats / "works.json"),
        "folds_stats": _load(stats / "folds.json"),
        "doc_clean_stats": _load(stats / "doc_clean.json"),
        "folds": folds,
        "doc_clean": doc_clean,
        "verify": _load(corpus / "manifests" / "verify.json"),
    }
    return counts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--log", type=Path, action="append", required=True, help="workflow log (repeatable)")
    p.add_argument("--command", default="cd projects/corpus && for s in fetch normalize tiers folds doc-clean verify "
                   "report; do /usr/bin/time -v nice -n 10 python -m weasel run $s . --vars.sample 0; done")
    p.add_argument("--machine", default="2 CPU cores shared with ~8 other jobs (timings are upper bounds)")
    p.add_argument("--monitor", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--keep-counts", action="store_true", help="reuse OUT/counts.json (the slow part) when present")
    args = p.parse_args()
    counts_path = args.out / "counts.json"
    if args.keep_counts and counts_path.is_file():
        counts = json.loads(counts_path.read_text(encoding="utf-8"))
    else:
        counts = collect_counts(args.corpus)
        args.out.mkdir(parents=True, exist_ok=True)
        counts_path.write_text(json.dumps(counts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sources, doc_clean = counts["sources"], counts["doc_clean"]

    logs = [path.read_text(encoding="utf-8", errors="replace") for path in args.log]
    monitor = steps_from_monitor(args.monitor) if args.monitor.is_file() else {}
    steps = steps_from_logs(logs) or monitor
    for name, s in steps.items():
        if "peak_rss_mib" not in s and name in monitor:
            s["peak_rss_mib"] = monitor[name]["peak_rss_mib"]
    seconds = sum(s["seconds"] for s in steps.values())
    cpu = sum(s.get("cpu_seconds", 0.0) for s in steps.values())
    records = sum(v["records"] or 0 for v in sources.values())
    words = sum(v["words"] or 0 for v in sources.values())
    letters = sum(v["letters"] or 0 for v in sources.values())
    peak_mib = max([s.get("peak_rss_mib", 0.0) for s in steps.values()] or [0.0])
    factor = PAPER_WORDS / words if words else float("nan")
    done = [name for name in STEP_NAMES[1:] if any(re.search(rf"={{3,}} {re.escape(name)} ={{3,}}", log) for log in logs)]
    complete = (args.corpus / "manifests" / "verify.json").is_file() and all(
        name in steps for name in ("normalize", "tiers", "folds", "doc-clean", "verify"))
    scale = {
        "complete": complete,
        "steps_started": done,
        "command": args.command,
        "machine": args.machine,
        "wall_seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "steps": steps,
        "input": {"records": records, "words": words, "letters": letters},
        "records_per_s": round(records / seconds, 2),
        "words_per_s": round(words / seconds),
        "letters_per_s": round(letters / seconds),
        "peak_rss_mib": round(peak_mib, 1),
        "extrapolation_361M_words": {
            "assumption": "time and peak memory linear in words (the steps stream records except works/folds, "
                          "which hold per-record MinHash signatures and n-gram sets: linear in the text)",
            "factor": round(factor, 2),
            "wall_hours": round(seconds * factor / 3600, 2),
            "cpu_hours": round(cpu * factor / 3600, 2),
            "peak_rss_gib": round(peak_mib * factor / 1024, 1),
        },
    }
    (args.out / "scale.json").write_text(json.dumps(scale, indent=1) + "\n", encoding="utf-8")
    man = args.corpus / "manifests"
    if man.is_dir():
        (args.out / "manifests").mkdir(exist_ok=True)
        for f in man.glob("*.json"):
            if f.stat().st_size < 2_000_000:
                shutil.copyfile(f, args.out / "manifests" / f.name)
    report = args.corpus / "report" / "report.md"
    if report.is_file():
        shutil.copyfile(report, args.out / "report.md")
    print(json.dumps({"doc_clean": doc_clean, "scale": {k: scale[k] for k in ("wall_seconds", "records_per_s", "peak_rss_mib")}}))


if __name__ == "__main__":
    main()
