"""Restoration decoding speed at beam 20 on gaps of widths 1–10 in equal numbers (the
protocol's mix), one thread, process CPU time.

Three decoders run on the same gaps in the same process: ``naive`` (the baseline: the
same beam search, one forward per hypothesis row), ``batched`` (the whole beam of every
gap in one forward per step, rows grouped by length so that no padding is run: the same
results as ``naive``) and ``fast`` (``batched`` plus the approximations the restorer may
switch on: ``--unmask`` letters per forward at the most confident slots, and the word
breaks read from the forward that committed the last letter instead of one more forward).
It prints gaps per CPU-second, tokens (positions run) per gap, forwards per gap, the
projected CPU-hours of the 3,000-gap protocol (300 gaps per width) for each decoder, the
fp32 and bf16 GEMM rates and the backbone's rate against them, and the cost of a hidden
width against the known one; on the default model with its shipped restoration overlay
(``--plain``: without).

``python -m stoicheia_lab.bench restore [--quick] [--per-width N] [--dtype bfloat16] [--json F]``

``--pipeline`` measures the user path instead: the embedded default restoration pipeline with its
default settings (``stoicheia restore``'s), one thread, one gap per call in the README's decree,
for each width notation (``[.4]``, ``[.10]``, ``[...]``, ``[---]``, ``[ca. 5]``), as CPU seconds
per gap (median of ``--repeat`` calls) and as a ratio against the same sentence without a gap
(encoder forward only), measured in the same run; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from typing import Any

import torch

#: Two documentary sentences (a camel sale, P.Lond. II 320-like) to cut gaps from.
PASSAGE = ("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι "
           "κάμηλον θήλειαν δευτερόβολον πυρρὰν κεχαραγμένην δεξιῷ σιαγόνι καὶ ἀπέχειν "
           "παρὰ σοῦ τὴν συνπεφωνημένην τιμὴν ἀργυρίου δραχμὰς τετρακοσίας καὶ βεβαιώσω "
           "σοι πάσῃ βεβαιώσει ἀπὸ πάντων.")
_GAP = re.compile(r"^[^\W\d_]+(?: [^\W\d_]+)*$")
PROTOCOL_GAPS = 3000


class NaiveScorer:
    """The baseline: every hypothesis row is its own forward."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.forwards = 0

    @property
    def tokens(self) -> int:
        return int(self.inner.tokens)

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        parts = []
        for row in range(batch["input_ids"].shape[0]):
            self.forwards += 1
            parts.append(self.inner({k: v[row : row + 1] for k, v in batch.items()}))
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def gap_queries(per_width: int, widths: range = range(1, 11), text: str = PASSAGE) -> list[Any]:
    """``per_width`` gaps of each width (characters, spaces count) cut from ``text`` at
    spread positions, at least 24 characters from either end, as known-width queries."""
    from stoicheia_spacy.leiden import parse_gaps
    from stoicheia_spacy.restore import build_queries
    from stoicheia_spacy.restore.formats import ithaca_text

    out: list[Any] = []
    for L in widths:
        found, start = 0, 24 + 7 * L
        while found < per_width:
            if start + L > len(text) - 24:
                start = 24 + found  # wrap around (short texts, many gaps)
            gold = text[start : start + L]
            if _GAP.match(gold):  # letters and single inner spaces, as the protocol's gaps
                itext, _ = ithaca_text(text, start, L)
                [target] = [t for t in build_queries(parse_gaps(itext)) if t.gap.kind == "target"]
                out.append(target.query)
                found += 1
            start += 29
    return out


def _gemm_rate(dtype: torch.dtype, n: int = 2048) -> float:
    """Best of three ``n``^3 products in ``dtype`` (FLOP per CPU-second)."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.matmul(a, b)
    best = 0.0
    for _ in range(3):
        t0 = time.process_time()
        torch.matmul(a, b)
        best = max(best, 2 * n**3 / max(time.process_time() - t0, 1e-9))
    return best


def _run(decode: Callable[[Any], list[Any]], scorer: Any) -> tuple[float, list[Any]]:
    start = time.process_time()
    results = decode(scorer)
    return time.process_time() - start, results


def main(argv: list[str] | None = None) -> int:
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import load_backbone
    from stoicheia_spacy.restore import ModelScorer, beam_search

    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench restore")
    parser.add_argument("--quick", action="store_true", help="one gap per width (default two)")
    parser.add_argument("--per-width", type=int, default=None, help="gaps per width 1..10")
    parser.add_argument("--beam", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--plain", action="store_true", help="the backbone without the restoration overlay")
    parser.add_argument("--window", type=int, default=24, help="context letters a side")
    parser.add_argument("--unmask", type=int, default=2, help="letters per forward of the fast decoder")
    parser.add_argument("--chunk", type=int, default=20, help="gaps per batched beam search")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="bfloat16")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--pipeline", action="store_true",
                        help="the user path: one gap per call through the default restoration pipeline")
    parser.add_argument("--repeat", type=int, default=3, help="calls per input (--pipeline; median)")
    parser.add_argument("--compare-float32", action="store_true",
                        help="--pipeline: also time the beam in float32 (the encoder's weights) in the same run")
    args = parser.parse_args(argv)
    if args.pipeline:
        return pipeline_bench(args, argv)
    torch.set_num_threads(args.threads)
    per_width = args.per_width or (1 if args.quick else 2)
    beam = args.beam
    model = load_backbone(str(default_model_dir()))
    overlay = default_model_dir() / "restorer" / "overlay.safetensors"
    if overlay.is_file() and not args.plain:
        from stoicheia_spacy.backbone.overlay import apply_overlay, read_overlay

        model = apply_overlay(model, *read_overlay(overlay))
    model = model.to(getattr(torch, args.dtype)).eval()
    queries = gap_queries(per_width)
    n = len(queries)

    def decoder(**options: Any) -> Callable[[Any], list[Any]]:
        def decode(scorer: Any) -> list[Any]:
            out: list[Any] = []
            for i in range(0, n, args.chunk):
                out += beam_search(scorer, queries[i : i + args.chunk], beam=beam, context=args.window, **options)
            return out
        return decode

    fast_options = {"unmask": args.unmask, "final_forward": False}
    runs: dict[str, dict[str, Any]] = {}
    tops: dict[str, list[str]] = {}
    for name, make, options in (("batched", lambda: ModelScorer(model), {}),
                                ("naive", lambda: NaiveScorer(ModelScorer(model)), {}),
                                ("fast", lambda: ModelScorer(model), fast_options)):
        scorer = make()
        seconds, results = _run(decoder(**options), scorer)
        tops[name] = [r[0].text if r else "" for r in results]
        runs[name] = {"cpu_s": seconds, "gaps_per_cpu_s": n / seconds, "cpu_s_per_gap": seconds / n,
                      "forwards": scorer.forwards, "tokens_per_gap": scorer.tokens / n,
                      "projected_cpu_hours_3000": PROTOCOL_GAPS * seconds / n / 3600, "options": options}
    hidden = [type(q)(q.context, q.insert_at, None, q.left_open, q.right_open) for q in queries]
    hidden_s = {}
    for name, options in (("batched", {}), ("fast", fast_options)):
        hidden_s[name], _ = _run(lambda sc, o=options: [c for i in range(0, n, args.chunk)  # type: ignore[misc]
                                 for c in beam_search(sc, hidden[i : i + args.chunk], beam=beam,
                                                      context=args.window, max_letters=10, **o)],
                                 ModelScorer(model))
    gemm = {"float32": _gemm_rate(torch.float32), "bfloat16": _gemm_rate(torch.bfloat16)}
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    b = runs["batched"]
    rate = 2 * linear * b["tokens_per_gap"] * n / b["cpu_s"]  # linear-layer FLOP per CPU-second
    same = tops["batched"] == tops["naive"]
    which = "default model" + (" + restoration overlay" if overlay.is_file() and not args.plain else "")
    print(f"gaps: {n} ({per_width} per width 1..10), beam {beam}, {args.window} letters a side, {which}, "
          f"{args.dtype}, {args.threads} thread(s); times are process CPU seconds")
    for name, r in runs.items():
        print(f"{name:>8}: {n / r['cpu_s']:.3f} gaps/CPU-s, {r['cpu_s_per_gap']:.2f} CPU-s/gap, "
              f"{r['forwards'] / n:.1f} forwards/gap, {r['tokens_per_gap']:.0f} tokens/gap -> "
              f"{r['projected_cpu_hours_3000']:.2f} CPU-hours for 3,000 gaps {r['options'] or ''}")
    print(f"batched/naive: {runs['naive']['cpu_s'] / b['cpu_s']:.2f}x, same top-1: {same}; "
          f"fast/naive: {runs['naive']['cpu_s'] / runs['fast']['cpu_s']:.2f}x, "
          f"top-1 as batched on {sum(a == c for a, c in zip(tops['fast'], tops['batched'], strict=True))}/{n} gaps")
    print(f"GEMM fp32 {gemm['float32'] / 1e9:.0f}, bf16 {gemm['bfloat16'] / 1e9:.0f} GFLOP/CPU-s; batched "
          f"decoder's linear layers {rate / 1e9:.0f} GFLOP/CPU-s = {rate / gemm[args.dtype]:.2f} of the {args.dtype} GEMM")
    print(f"hidden width (letter counts 1..10 in one beam): cost {hidden_s['batched'] / b['cpu_s']:.2f}x the known "
          f"width (batched), {hidden_s['fast'] / runs['fast']['cpu_s']:.2f}x (fast)")
    if args.json:
        import json
        from pathlib import Path

        Path(args.json).write_text(json.dumps({
            "command": "python -m stoicheia_lab.bench restore " + " ".join(argv or []), "gaps": n,
            "per_width": per_width, "beam": beam, "window": args.window, "dtype": args.dtype, "overlay": which,
            **runs, "speedup_batched_vs_naive": runs["naive"]["cpu_s"] / b["cpu_s"],
            "speedup_fast_vs_naive": runs["naive"]["cpu_s"] / runs["fast"]["cpu_s"], "same_top1": same,
            "gemm_gflops_per_cpu_s": {k: v / 1e9 for k, v in gemm.items()},
            "batched_linear_gflops_per_cpu_s": rate / 1e9,
            "hidden": {"cpu_s_batched": hidden_s["batched"], "cost_vs_known_batched": hidden_s["batched"] / b["cpu_s"],
                       "cpu_s_fast": hidden_s["fast"], "cost_vs_known_fast": hidden_s["fast"] / runs["fast"]["cpu_s"]},
        }, indent=1), encoding="utf-8")
    return 0 if same else 1


#: The README's decree with one gap of each notation (``{}``), and without a gap.
DECREE = "ἔδοξεν τῆι βουλῆι {} δήμωι"
NOTATIONS = ("[.4]", "[.10]", "[...]", "[---]", "[ca. 5]")


def pipeline_bench(args: argparse.Namespace, argv: list[str] | None) -> int:
    """CPU seconds per one-gap call of the default restoration pipeline against a no-gap call."""
    import json
    import statistics
    from pathlib import Path

    from stoicheia_spacy.cli.loading import load_for

    torch.set_num_threads(args.threads)
    nlp = load_for("restore")  # the installed default package, else the embedded model: encoder + restorer
    restorer: Any = nlp.get_pipe("stoicheia_restorer")
    restorer.configure(beam_width=args.beam, n_candidates=20)
    nlp(DECREE.format("[.3]"))  # warm up: the beam's bf16 copy and the first forwards

    def cpu(text: str) -> tuple[float, Any]:
        times, doc = [], None
        for _ in range(max(1, args.repeat)):
            start = time.process_time()
            doc = nlp(text)
            times.append(time.process_time() - start)
        return statistics.median(times), doc

    base, _ = cpu(DECREE.format("καὶ τῶι"))
    rows: dict[str, dict[str, Any]] = {}
    for notation in NOTATIONS:
        seconds, doc = cpu(DECREE.format(notation))
        item = doc._.restorations[0]
        rows[notation] = {"cpu_s": seconds, "ratio_vs_no_gap": seconds / max(base, 1e-9),
                          "top": [c.text for c in item.candidates[:3]], "confident": item.confident}
    float32: dict[str, float] = {}
    if args.compare_float32:  # the same calls with the beam in the encoder's float32 weights
        restorer.configure(dtype="float32")
        for notation in NOTATIONS:
            float32[notation] = cpu(DECREE.format(notation))[0]
        restorer.configure(dtype="bfloat16")
    settings = {k: restorer.cfg[k] for k in ("beam_width", "context", "unmask", "final_forward", "dtype",
                                             "max_letters", "confident_above", "lm_weight", "lm_rescore")}
    settings["lm"] = restorer.lm_path() and Path(restorer.lm_path()).name  # the fused n-gram LM, if any
    print(f"default restoration pipeline, {args.threads} thread(s), median of {args.repeat} calls, "
          f"process CPU seconds; settings {settings}")
    print(f"{'no gap':>10}: {base:.3f} CPU-s")
    for notation, r in rows.items():
        print(f"{notation:>10}: {r['cpu_s']:.3f} CPU-s = {r['ratio_vs_no_gap']:.1f}x the no-gap call; top {r['top']}")
    worst = max(r["cpu_s"] for r in rows.values())
    print(f"slowest gap: {worst:.2f} CPU-s (target <= 2 s)")
    for notation, seconds in float32.items():
        print(f"{notation:>10}: float32 beam {seconds:.3f} CPU-s = {seconds / rows[notation]['cpu_s']:.2f}x the bf16 beam")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": "stoicheia bench restore " + " ".join(argv or []), "threads": args.threads,
            "repeat": args.repeat, "settings": settings, "no_gap_cpu_s": base, "gaps": rows,
            "slowest_cpu_s": worst, "float32_cpu_s": float32}, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0
