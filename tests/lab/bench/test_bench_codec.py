"""The codec benchmarks run and report every figure (tiny size; no timing asserted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stoicheia_lab.bench import codec as bench_codec
from stoicheia_lab.bench import roundtrip


def test_codec_benchmark_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_codec.main(["--mb", "0.05", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    for label in ("baseline unicodedata NFD", "encode_planes", "decode_planes", "canonicalize", "x NFD"):
        assert label in out


def test_roundtrip_on_the_ud_test_sets(shared_data: Path, tmp_path: Path) -> None:
    """≥ 99.5 % of all UD Perseus + PROIEL test sentences round-trip; every failure is a
    sentence holding characters the planes do not represent."""
    out = tmp_path / "roundtrip.json"
    assert roundtrip.main(["--data", str(shared_data), "--out", str(out)]) == 0
    metrics = json.loads(out.read_text(encoding="utf-8"))
    assert metrics["all"]["n"] == 2353
    assert metrics["all"]["rate"] >= 0.995
    assert all(kind.startswith("unmodelled") for kind in metrics["all"]["failures_by_class"])
