"""Restoration decoding speed: gaps per CPU-second at beam 20 of the batched beam search
(the whole beam of every gap in one forward per step, context cropped to ``--window``
letters a side) beside a one-forward-per-hypothesis baseline measured in the same run
(same beam, same results), forwards per gap, the cost of a hidden width against the
known one, and the projected CPU-hours of the 3,000-gap protocol; on the default model
with its shipped restoration overlay (``--plain``: without)
(``python -m stoicheia_spacy.bench restore [--quick] [--plain] [--dtype bfloat16]``)."""

from __future__ import annotations

import argparse
import time
from typing import Any

import torch

PASSAGE = ("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι "
           "κάμηλον θήλειαν δευτερόβολον πυρρὰν κεχαραγμένην δεξιῷ σιαγόνι.")


class NaiveScorer:
    """The baseline: every hypothesis row is its own forward."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.forwards = 0

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        parts = []
        for row in range(batch["input_ids"].shape[0]):
            self.forwards += 1
            parts.append(self.inner({k: v[row : row + 1] for k, v in batch.items()}))
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def _queries(widths: list[int]) -> list[Any]:
    from ..leiden import parse_gaps
    from ..restore import build_queries

    out: list[Any] = []
    words = PASSAGE.split(" ")
    for i, L in enumerate(widths):
        word = words[(3 * i + 1) % len(words)]
        cut = min(len(word), L)
        text = PASSAGE.replace(word, f"[.{cut}]" + word[cut:], 1)
        out.extend(t.query for t in build_queries(parse_gaps(text)))
    return out


def main(argv: list[str] | None = None) -> int:
    from ..assets import default_model_dir
    from ..backbone import load_backbone
    from ..restore import ModelScorer, beam_search

    parser = argparse.ArgumentParser(prog="python -m stoicheia_spacy.bench restore")
    parser.add_argument("--quick", action="store_true", help="two short gaps (same beam)")
    parser.add_argument("--beam", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--plain", action="store_true", help="the backbone without the restoration overlay")
    parser.add_argument("--window", type=int, default=32, help="context letters a side")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    widths = [2, 3] if args.quick else [1, 2, 3, 4, 5]
    beam = args.beam
    model = load_backbone(str(default_model_dir()))
    overlay = default_model_dir() / "restorer" / "overlay.safetensors"
    if overlay.is_file() and not args.plain:
        from ..restore.overlay import apply_overlay, read_overlay

        model = apply_overlay(model, *read_overlay(overlay))
    model = model.to(getattr(torch, args.dtype))
    queries = _queries(widths)
    rows = []
    for name, make in (("batched", lambda: ModelScorer(model)), ("naive", lambda: NaiveScorer(ModelScorer(model)))):
        scorer = make()
        start = time.process_time()
        results = beam_search(scorer, queries, beam=beam, context=args.window)
        seconds = time.process_time() - start
        rows.append((name, scorer.forwards, seconds, [r[0].text for r in results]))
    (_, fb, tb, top_b), (_, fn, tn, top_n) = rows
    hidden = [type(q)(q.context, q.insert_at, None, q.left_open, q.right_open) for q in queries]
    start = time.process_time()
    beam_search(ModelScorer(model), hidden, beam=beam, context=args.window, max_letters=max(widths))
    th = time.process_time() - start
    n = len(queries)
    which = "default model" + (" + restoration overlay" if overlay.is_file() and not args.plain else "")
    print(f"gaps: {n} (widths {widths}), beam {beam}, {args.window} letters a side, {which}, {args.dtype}, "
          f"{args.threads} thread(s); times are process CPU seconds")
    print(f"batched: {fb} forwards for all gaps (max L + 1 = {max(widths) + 1}); "
          f"{fb / n:.2f} forwards/gap amortised; {n / tb:.3f} gaps/CPU-s")
    print(f"naive:   {fn} forwards ({fn / n:.1f} per gap); {n / tn:.3f} gaps/CPU-s")
    print(f"speed-up batched/naive: {tn / tb:.2f}x; same top-1: {top_b == top_n}")
    print(f"hidden width (letter counts 1..{max(widths)} in one beam): {n / th:.3f} gaps/CPU-s, "
          f"cost {th / tb:.2f}x the known width")
    print(f"projected: 3,000 gaps like these at beam {beam}: {3000 * tb / n / 3600:.2f} CPU-hours batched, "
          f"{3000 * tn / n / 3600:.2f} naive")
    if args.json:
        import json
        from pathlib import Path

        Path(args.json).write_text(json.dumps({
            "command": "python -m stoicheia_spacy.bench restore " + " ".join(argv or []), "gaps": n, "widths": widths,
            "beam": beam, "window": args.window, "dtype": args.dtype, "overlay": which,
            "batched": {"forwards": fb, "cpu_s": tb, "gaps_per_cpu_s": n / tb},
            "naive": {"forwards": fn, "cpu_s": tn, "gaps_per_cpu_s": n / tn},
            "speedup": tn / tb, "same_top1": top_b == top_n,
            "hidden": {"cpu_s": th, "gaps_per_cpu_s": n / th, "cost_vs_known": th / tb},
            "projected_cpu_hours_3000": {"batched": 3000 * tb / n / 3600, "naive": 3000 * tn / n / 3600},
        }, indent=1), encoding="utf-8")
    return 0 if top_b == top_n else 1
