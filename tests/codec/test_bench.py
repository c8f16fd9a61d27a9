"""The codec benchmark runs and reports every figure (tiny size; no timing asserted)."""

from __future__ import annotations

import pytest

from stoicheia_spacy.bench import codec as bench_codec


def test_codec_benchmark_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_codec.main(["--mb", "0.05", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    for label in ("baseline unicodedata NFD", "encode_planes", "decode_planes", "canonicalize", "x NFD"):
        assert label in out
