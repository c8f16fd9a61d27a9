"""Restoration decoding speed: forwards per gap (goal ≤ L + 2) and gaps/s of the batched
beam search against a naive decoder measured in the same run (same beam, one forward per
hypothesis), on the default model with its shipped restoration overlay (``--plain``: without)
(``python -m stoicheia_spacy.bench restore [--quick] [--plain]``)."""

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
    parser.add_argument("--quick", action="store_true", help="two short gaps, beam 5")
    parser.add_argument("--beam", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--plain", action="store_true", help="the backbone without the restoration overlay")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    widths = [2, 3] if args.quick else [1, 2, 3, 4, 5]
    beam = 5 if args.quick else args.beam
    model = load_backbone(str(default_model_dir()))
    overlay = default_model_dir() / "restorer" / "overlay.safetensors"
    if overlay.is_file() and not args.plain:
        from ..restore.overlay import apply_overlay, read_overlay

        model = apply_overlay(model, *read_overlay(overlay))
    queries = _queries(widths)
    rows = []
    for name, make in (("batched", lambda: ModelScorer(model)), ("naive", lambda: NaiveScorer(ModelScorer(model)))):
        scorer = make()
        start = time.perf_counter()
        results = beam_search(scorer, queries, beam=beam, window=128)
        seconds = time.perf_counter() - start
        rows.append((name, scorer.forwards, seconds, [r[0].text for r in results]))
    (_, fb, tb, top_b), (_, fn, tn, top_n) = rows
    n = len(queries)
    which = "default model" + (" + restoration overlay" if overlay.is_file() and not args.plain else "")
    print(f"gaps: {n} (widths {widths}), beam {beam}, {which}, {args.threads} thread(s)")
    print(f"batched: {fb} forwards for all gaps (max L + 1 = {max(widths) + 1}); "
          f"{fb / n:.2f} forwards/gap amortised; {n / tb:.2f} gaps/s")
    print(f"naive:   {fn} forwards ({fn / n:.1f} per gap); {n / tn:.2f} gaps/s")
    print(f"speed-up batched/naive: {tn / tb:.2f}x; same top-1: {top_b == top_n}")
    return 0 if top_b == top_n else 1
