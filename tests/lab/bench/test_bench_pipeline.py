"""``python -m stoicheia_lab.bench pipeline`` runs and writes every figure (tiny checkpoint,
3 sentences; no timing asserted: the speed target lives in the benchmark's printed ratio)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stoicheia_lab.bench import pipeline as bench_pipeline


def test_bench_pipeline_reports_ratios(tiny_checkpoint: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert bench_pipeline.main(["--source", str(tiny_checkpoint), "--n", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for label in ("full pipeline", "encoder only", "GEMM roofline", "full / encoder"):
        assert label in printed
    metrics = json.loads(out.read_text(encoding="utf-8"))
    assert metrics["sentences"] == 3 and metrics["words"] > 0
    assert metrics["full_words_per_s"] > 0 and metrics["roofline_words_per_s"] > 0
    assert metrics["full_over_encoder"] == pytest.approx(metrics["full_words_per_s"] / metrics["encoder_words_per_s"])
    # every component's share of time is printed and written, and the shares add up to 1
    assert set(metrics["component_share"]) == set(metrics["pipes"])
    assert sum(metrics["component_share"].values()) == pytest.approx(1.0)
    for name in metrics["pipes"]:
        assert name in printed
