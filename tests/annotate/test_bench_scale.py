"""The corpus-scale benchmarks (``stoicheia bench memory long|stream``, ``bench annotate``) on
real Greek: the texts they build, the RSS slope, and short runs on the small test pipeline."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from stoicheia_lab.bench import annotate as bench_annotate
from stoicheia_lab.bench.memory import (
    greek_text,
    run_long,
    run_stream,
    short_sentences,
    slope_per_1000,
)

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import ConfigError


def test_perseus_text_reaches_the_letters_and_ends_at_a_line(shared_data: Path) -> None:
    text, ids = greek_text(30_000, "perseus", shared_data)
    letters = len(encode_planes(text))
    last_line = text.rsplit("\n", 1)[-1]
    assert 30_000 <= letters < 30_000 + len(encode_planes(last_line)) + 1
    assert ids and all(i.startswith("perseus:urn:cts:greekLit:") for i in ids)
    assert "ἀ" in text or "ὁ" in text  # polytonic Greek, not a placeholder
    more, more_ids = greek_text(200_000, "perseus", shared_data)
    assert more.startswith(text[:-len(last_line)]) and len(more_ids) > len(ids)  # distinct works, in file order


def test_a_corpus_source_needs_the_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STOICHEIA_ASSET_MIRROR", raising=False)
    with pytest.raises(ConfigError, match="STOICHEIA_ASSET_MIRROR"):
        greek_text(1000, "perseus")


def test_stream_documents_are_distinct_real_sentences(shared_data: Path) -> None:
    docs = short_sentences(300, "perseus", shared_data)
    assert len(docs) == 300 and len(set(docs)) >= 295
    assert all(20 <= len(d) <= 300 for d in docs)
    assert sum(d[-1] in ".;·;" for d in docs) >= 280  # cut at sentence ends


def test_slope_is_fitted_over_the_second_half() -> None:
    warm_up = [(i, 100.0 + i) for i in range(100, 600, 100)]  # steep start-up, left out
    flat = [(i, 900.0) for i in range(600, 1100, 100)]
    assert slope_per_1000(warm_up + flat) == pytest.approx(0.0, abs=1e-6)
    growing = [(i, 500 + 0.002 * i) for i in range(100, 2100, 100)]
    assert slope_per_1000(growing) == pytest.approx(2.0)
    assert math.isnan(slope_per_1000([(1, 1.0)]))


def test_long_run_annotates_the_whole_text_in_pieces(tiny_pipeline: Path, shared_data: Path) -> None:
    result = run_long(3000, str(tiny_pipeline), 1000, None, source="perseus", mirror=shared_data)
    assert result["letters"] >= 3000 and result["pieces"] >= 3
    assert result["words"] > 500 and result["peak_rss_mb"] >= result["peak_rss_after_load_mb"] > 0
    assert result["under_2gb"] is True


def test_stream_samples_parent_and_each_worker(tiny_pipeline: Path) -> None:
    result = run_stream(64, str(tiny_pipeline), 16, None, n_process=2)
    assert result["words"] > 300 and len(result["rss_samples_mb"]) == 4
    assert all(s["parent"] > 0 and len(s["workers"]) >= 2 for s in result["rss_samples_mb"])
    assert set(result["slope_mb_per_1000_docs_second_half"]) == {"total", "parent", "workers"}


def test_annotate_bench_records_both_engines_and_the_load(tmp_path: Path, tiny_pipeline: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake_bench_engine(engine, tasks, workers, model, components):  # the engines are tested in test_engines
        calls.append((engine, workers, len(tasks)))
        return {"engine": engine}

    monkeypatch.setattr(bench_annotate, "bench_engine", fake_bench_engine)
    out = tmp_path / "bench.json"
    assert bench_annotate.main(["--engine", "local,ray", "--docs", "8", "--batch-size", "4", "--out", str(out)]) == 0
    assert calls == [("local", [1, 2], 2), ("ray", [1, 2], 2)]
    assert [e["engine"] for e in json.loads(out.read_text(encoding="utf-8"))["engines"]] == ["local", "ray"]
    with pytest.raises(SystemExit):
        bench_annotate.main(["--engine", "local,spark", "--out", str(out)])


def test_one_local_worker_is_measured_with_the_load(tiny_pipeline: Path) -> None:
    records = [{"id": f"d{i}", "text": t} for i, t in enumerate(short_sentences(24))]
    tasks = [json.dumps({"tag": 0, "records": records[i:i + 8]}, ensure_ascii=False) for i in range(0, 24, 8)]
    result = bench_annotate.bench_engine("local", tasks, [1], str(tiny_pipeline), None)
    run = result["runs"][0]
    assert run["workers"] == 1 and run["words_per_s"] > 0 and run["scaling_vs_first"] == 1.0
    assert len(result["loadavg_before"]) == 3 and len(run["loadavg_after"]) == 3
