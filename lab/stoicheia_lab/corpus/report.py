"""Markdown report and zone-size plot of a corpus build (``report`` step)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def plot_zone_sizes(zone_words: list[int], path: Path) -> None:
    """Bar chart of words per zone (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar(range(len(zone_words)), zone_words, color="#4a6fa5")
    ax.set_xlabel("zone")
    ax.set_ylabel("words")
    ax.set_xticks(range(len(zone_words)))
    ax.set_title("Literary corpus: words per zone")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(corpus_dir: Path, out_dir: Path) -> Path:
    """Write ``report.md`` and ``zone_sizes.png`` from the stats and manifests of a build."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = corpus_dir / "stats"
    norm, tiers, works = _load(stats / "normalize.json"), _load(stats / "tiers.json"), _load(stats / "works.json")
    folds, dc = _load(stats / "folds.json"), _load(stats / "doc_clean.json")
    verify = _load(corpus_dir / "manifests" / "verify.json")
    lines = ["# Stoicheia corpus build report", ""]
    if norm:
        lines += ["## Sources (normalize)", "", "| source | records | letters | words | sentences | stripped chars |",
                  "|---|---:|---:|---:|---:|---|"]
        for name, s in norm.items():
            stripped = ", ".join(f"{k} {v:,}" for k, v in s["stripped"].items())
            lines.append(f"| {name} | {s['records']:,} | {s['letters']:,} | {s['words']:,} | {s['sentences']:,} | {stripped} |")
        lines.append("")
    if tiers:
        lines += ["## Tiers", "", f"Pristine threshold {tiers['threshold']}; counts by source and tier:", ""]
        lines += [f"- {src}: " + ", ".join(f"{t} {n}" for t, n in c.items()) for src, c in tiers["counts"].items()]
        lines.append("")
    if works:
        lines += ["## Works and zones", "", f"{works['records']} literary records in {works['clusters']} clusters.", "",
                  "| zone | clusters | words |", "|---:|---:|---:|"]
        lines += [f"| {z} | {c} | {w:,} |" for z, (c, w) in enumerate(zip(works["zone_clusters"], works["zone_words"], strict=True))]
        lines += ["", "![zone sizes](zone_sizes.png)", ""]
        plot_zone_sizes(works["zone_words"], out_dir / "zone_sizes.png")
    if folds:
        lines += ["## Folds (sentences excised from training)", "",
                  "| fold | test | dev | train records | excised / total | n-gram | exact | bag | near |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, c in folds.items():
            lines.append(f"| {name} | {c['test_zone']} | {c['dev_zone']} | {c['train_records']} | "
                         f"{c.get('sentences_excised', 0)} / {c.get('sentences_total', 0)} | {c.get('ngram', 0)} | "
                         f"{c.get('exact', 0)} | {c.get('bag', 0)} | {c.get('near', 0)} |")
        lines.append("")
    if dc:
        lines += ["## Doc-clean", "", f"Documentary records screened against: {dc['documentary_records']}; "
                  f"blocklist passages {dc['blocklist_passages']}, records dropped by id/work {dc['blocklist_records_dropped']}.", ""]
        for split in ("train", "dev"):
            c = dc[split]
            reasons = ", ".join(f"{k} {v}" for k, v in c.items() if k.startswith(("doc_", "blocklist", "dev_")))
            lines.append(f"- {split}: {c['records']} records, {c.get('sentences_excised', 0)} of "
                         f"{c.get('sentences_total', 0)} sentences excised ({reasons})")
        lines.append("")
    if verify:
        lines += ["## Verification", "", "PASSED" if verify["passed"] else f"FAILED: {verify['failed']}", ""]
        lines += [f"- {k}: {v} shared n-grams" for k, v in verify["leaks"].items()]
        lines.append("")
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
