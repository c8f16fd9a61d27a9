"""``python -m stoicheia_lab.bench parse --json`` writes every printed figure with the command,
versions and load (12 real AGDT sentences; an oracle stands in for the stoicheia pipeline, a blank
spaCy pipeline for the CNN, so the scores are known: 100 and 0; no timing asserted)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
import spacy
from scriptload import load_script
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab
from stoicheia_lab.bench import parse as bench_parse

HELPERS = Path(__file__).resolve().parents[1] / "morph" / "helpers.py"


class Oracle:
    """Returns the gold sentence of each input (matched by its words)."""

    pipe_names = ["oracle"]

    def __init__(self, gold: list[Doc]) -> None:
        self.vocab = Vocab()
        self.gold = {tuple(t.text for t in d): d for d in gold}

    def pipe(self, docs: Iterable[Doc], batch_size: int = 32) -> Iterator[Doc]:
        for doc in docs:
            yield self.gold[tuple(t.text for t in doc)]


def test_bench_parse_writes_metrics_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    helpers = load_script(HELPERS, "morph_helpers")
    blank = spacy.blank("grc")
    sentences = helpers.load_sentences()
    db = DocBin()
    for sent in sentences:
        db.add(helpers.gold_doc(blank, sent))
    data = tmp_path / "sample.spacy"
    db.to_disk(data)
    blank.to_disk(tmp_path / "cnn")
    gold = bench_parse.gold_sentences(data, 100)
    monkeypatch.setattr(bench_parse, "stoicheia_parse_pipeline", lambda: Oracle(gold))

    out = tmp_path / "metrics" / "bench_parse.json"
    argv = ["--cnn", str(tmp_path / "cnn"), "--data", str(data), "--n", "10", "--json", str(out)]
    assert bench_parse.main(argv) == 0
    metrics = json.loads(out.read_text(encoding="utf-8"), parse_constant=pytest.fail)  # strict JSON: no NaN

    assert metrics["command"] == "python -m stoicheia_lab.bench parse " + " ".join(argv)
    assert len(metrics["loadavg_at_start"]) == 3 and len(metrics["loadavg_at_end"]) == 3
    assert metrics["threads"] == 1 and metrics["spacy"] == spacy.__version__
    assert metrics["pipelines"]["spacy_cnn"]["path"] == str(tmp_path / "cnn")
    (record,) = metrics["files"]
    assert record["sentences"] == 10 and record["words"] == sum(len(s["words"]) for s in sentences[:10])
    ours, cnn = record["runs"]["stoicheia"], record["runs"]["spacy_cnn"]
    assert all(ours["scores"][k] == 100.0 for k in bench_parse.REPORTED)
    assert cnn["scores"]["LAS"] == 0.0 and cnn["scores"]["UPOS"] == 0.0
    assert ours["words"] == cnn["words"] == record["words"]
    assert record["stoicheia_over_cnn_words_per_s"] == pytest.approx(ours["words_per_s"] / cnn["words_per_s"])
