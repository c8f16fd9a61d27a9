"""The same corpus through every engine gives byte-identical files: in-process, two spawned
workers, and Ray Data on a local two-CPU cluster (1,000 real Greek documents)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stoicheia_spacy.annotate import EngineConfig, annotate

FORMATS = ["jsonl", "conllu", "docbin"]


def _corpus(folder: Path, sentences: list[str], n_docs: int) -> Path:
    """``n_docs`` documents of one or two real sentences each, in two shards."""
    folder.mkdir(parents=True)
    for shard, (a, b) in enumerate(((0, n_docs // 2), (n_docs // 2, n_docs))):
        with (folder / f"part{shard}.jsonl").open("w", encoding="utf-8") as fh:
            for i in range(a, b):
                picked = [sentences[(i * 7 + j * 13) % len(sentences)] for j in range(1 + (i % 4 == 0))]
                fh.write(json.dumps({"id": f"doc{i}", "text": " ".join(picked)}, ensure_ascii=False) + "\n")
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def reference(tmp_path_factory, tiny_pipeline: Path, greek_sentences: list[str]) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("engines")
    src = _corpus(root / "in", greek_sentences, 1000)
    summary = annotate(src, root / "local", formats=FORMATS, config=EngineConfig(model=str(tiny_pipeline)),
                       batch_size=16, progress=False)
    assert summary.records == 1000 and not summary.errors
    return src, _files(root / "local")


def test_spawned_workers_write_the_same_bytes(tmp_path: Path, tiny_pipeline: Path, greek_sentences: list[str]) -> None:
    src = _corpus(tmp_path / "in", greek_sentences[::-1], 120)
    runs = {}
    for workers in (1, 2):
        cfg = EngineConfig(model=str(tiny_pipeline), workers=workers)
        summary = annotate(src, tmp_path / f"out{workers}", formats=FORMATS, config=cfg, batch_size=8, progress=False)
        assert summary.records == 120
        runs[workers] = _files(tmp_path / f"out{workers}")
    assert runs[1] == runs[2]


def test_ray_on_a_two_cpu_cluster_writes_the_same_bytes(reference, tmp_path: Path, tiny_pipeline: Path) -> None:
    ray = pytest.importorskip("ray")
    src, expected = reference
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                                       "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}})
    try:
        cfg = EngineConfig(model=str(tiny_pipeline), workers=2)
        summary = annotate(src, tmp_path / "out", formats=FORMATS, engine="ray", config=cfg, batch_size=16,
                           progress=False)
    finally:
        ray.shutdown()
    assert summary.records == 1000 and summary.words > 10_000
    assert _files(tmp_path / "out") == expected


def test_nlp_pipe_with_two_processes_returns_docs_without_hidden_states(tiny_pipeline: Path,
                                                                     greek_sentences: list[str]) -> None:
    import spacy
    from spacy.tokens import DocBin

    from stoicheia_spacy.annotate.worker import load_pipeline

    nlp = load_pipeline(str(tiny_pipeline))
    texts = greek_sentences[:24]
    serial = list(nlp.pipe(texts, batch_size=8))
    parallel = list(nlp.pipe(texts, batch_size=8, n_process=2))
    assert [[t.tag_ for t in d] for d in parallel] == [[t.tag_ for t in d] for d in serial]
    assert [d.text for d in parallel] == texts
    assert serial[0]._.stoicheia is not None and parallel[0]._.stoicheia is None  # never shipped across
    assert parallel[0]._.accent_text == serial[0]._.accent_text
    docbin = DocBin(store_user_data=True, docs=serial)
    back = list(DocBin().from_bytes(docbin.to_bytes()).get_docs(spacy.blank("grc").vocab))
    assert [d.text for d in back] == texts
