"""Issue 43: CPU seconds of the restorer on hidden-width inscription gaps, and its top-20 per gap.

    python scripts/hidden_speed.py --gaps 200 --dump results/hidden_speed_top20.json \\
        [--compare results/before_1.json ... [--after results/after_1.json ...] --out metrics_run17_hidden_speed.json]

The first ``--gaps`` test gaps of ``samples/inscriptions`` with their widths hidden go through
``restore_combined`` exactly as ``insc_eval.py --hidden``'s ``test.restorer_check`` does (the shipped
config's settings, the domain's sources and the parallels index, each gap's own document left out).
``--dump`` writes each gap's top-20 texts and scores; ``--compare`` checks them against earlier
dumps (the "before" runs: same texts in the same order, scores within ``--rtol``) and ``--out`` writes
every run's command and CPU-s a gap (the before runs, the earlier ``--after`` dumps and this run), the
medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from insc_eval import combined_restore, settings_block
from restore_eval import load_split

import stoicheia_spacy
from stoicheia_spacy.parallels.index import ParallelIndex
from stoicheia_spacy.restore.domain_sources import load_domain_sources
from stoicheia_spacy.restore.kneser_ney import load_kn
from stoicheia_spacy.restore.settings import RestorerSettings


def run(a: argparse.Namespace) -> tuple[list[list[tuple[str, float]]], float]:
    """Each gap's top-20 (text, score) and the CPU seconds a gap of ``restore_combined``."""
    c = RestorerSettings.from_dict(settings_block(Path(a.config)))
    index, lm = ParallelIndex(a.index), load_kn(a.kn)
    src = load_domain_sources(Path(a.sources), (c.domain_source_weights or {})["inscription"])
    records = load_split(Path(a.samples), "test", None)[: a.gaps]
    temps = {"default": float(c.temperature), **dict(c.temperatures or {})}
    found, _, cpu = combined_restore(records, c, src, index, lm, "hidden", temps)
    return [[(x.text, float(x.score)) for x in cs[:20]] for cs in found], cpu


def same(a: list[list], b: list[list], rtol: float) -> list[bool]:
    """Per gap: the same texts in the same order, scores equal to ``rtol``."""
    return [len(x) == len(y) and all(p[0] == q[0] and abs(p[1] - q[1]) <= rtol * max(1.0, abs(q[1]))
                                     for p, q in zip(x, y, strict=True)) for x, y in zip(a, b, strict=True)]


def _runs(dumps: list[dict]) -> list[dict]:
    return [{k: d.get(k) for k in ("command", "package", "cpu_s_per_gap")} for d in dumps]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hidden_speed.py")
    ap.add_argument("--config", default="../../assets/models/grc_stoicheia_doc_clean/config.cfg")
    ap.add_argument("--index", default="training/parallels")
    ap.add_argument("--kn", default="training/kn_lm8.npz")
    ap.add_argument("--sources", default="training/domains/inscription")
    ap.add_argument("--samples", default="samples/inscriptions")
    ap.add_argument("--gaps", type=int, default=200)
    ap.add_argument("--dump", required=True, help="JSON of each gap's top-20 and the CPU-s a gap")
    ap.add_argument("--compare", nargs="+", default=None, help="earlier (before) --dumps to check the outputs against")
    ap.add_argument("--after", nargs="*", default=[], help="with --compare: earlier after-run --dumps, their CPU-s kept")
    ap.add_argument("--rtol", type=float, default=1e-9)
    ap.add_argument("--out", default=None, help="with --compare: the metrics JSON")
    a = ap.parse_args(argv)
    command = "python scripts/hidden_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    tops, cpu = run(a)
    package = str(Path(stoicheia_spacy.__file__).parent)  # which copy ran: before or after
    Path(a.dump).write_text(json.dumps({"command": command, "package": package,
                                        "gaps": len(tops), "cpu_s_per_gap": cpu, "top20": tops}, ensure_ascii=False),
                            encoding="utf-8")
    print(json.dumps({"gaps": len(tops), "cpu_s_per_gap": cpu}))
    if a.compare:
        before = [json.loads(Path(p).read_text(encoding="utf-8")) for p in a.compare]
        after = [json.loads(Path(p).read_text(encoding="utf-8")) for p in a.after] + [
            {"command": command, "package": package, "cpu_s_per_gap": cpu}]
        ok = [sum(same(tops, b["top20"], a.rtol)) for b in before]
        b_med = statistics.median(d["cpu_s_per_gap"] for d in before)
        a_med = statistics.median(d["cpu_s_per_gap"] for d in after)
        out = {"command": command, "gaps": len(tops), "rtol": a.rtol, "before_runs": _runs(before),
               "after_runs": _runs(after), "before_cpu_s_per_gap_median": b_med, "after_cpu_s_per_gap_median": a_med,
               "after_over_before": a_med / b_med, "speedup": b_med / a_med,
               "identical_top20_gaps": min(ok), "identical_top20_gaps_per_before_run": ok}
        print(json.dumps(out))
        if a.out:
            Path(a.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
