"""projects/parse arms end to end at CI size on 12 real AGDT sentences: `spacy train` (5 steps)
of the pretrained and random-init recipes (parse.cfg on the golden tiny backbone), spaCy's CNN
pipeline (parse_cnn.cfg) and the subword arm (parse_transformer.cfg on a tiny BERT made
locally), then evaluate.py's scores (the same as `bench parse`'s on gold words) and compare.py's
table and plot."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from scriptload import load_script
from spacy.cli.train import train
from stoicheia_lab.bench.parse import gold_run, gold_sentences

from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "projects" / "parse" / "scripts"
CONFIGS = REPO / "assets" / "configs"
METRICS = ("UPOS", "XPOS", "UFeats", "Lemma", "UAS", "LAS")
torch.set_num_threads(1)


H = load_script(REPO / "tests" / "morph" / "helpers.py", "morph_helpers")
evaluate = load_script(SCRIPTS / "evaluate.py", "parse_evaluate")
compare = load_script(SCRIPTS / "compare.py", "parse_compare")
tiny_trf = load_script(SCRIPTS / "make_tiny_transformer.py", "parse_make_tiny_transformer")

TINY_ENCODER = {f"components.stoicheia_encoder.model.{k}": v for k, v in H.TINY_MODEL.items() if k != "@architectures"}
QUICK = {"training.max_steps": 5, "training.eval_frequency": 5, "training.patience": 0}



def test_every_arm_trains_scores_and_compares(docbin: Path, tmp_path: Path) -> None:
    bert = tiny_trf.make_tiny_transformer(tmp_path / "tiny_bert", tiny_trf.greek_sentences(docbin, 100),
                                          vocab_size=300, hidden=32, layers=1)
    data = {"paths.train": str(docbin), "paths.dev": str(docbin)}
    arms = {
        "pretrained": ("parse.cfg", {**TINY_ENCODER, "paths.backbone": str(TINY)}),
        "random": ("parse.cfg", {**TINY_ENCODER, "paths.backbone": str(TINY),
                                 "initialize.components.stoicheia_encoder.loader.random_init": True}),
        "cnn": ("parse_cnn.cfg", {}),
        "transformer": ("parse_transformer.cfg", {"paths.transformer": str(bert)}),
    }
    metrics = tmp_path / "metrics"
    for arm, (config, overrides) in arms.items():
        out = tmp_path / "training" / arm
        train(CONFIGS / config, out, overrides={**data, **QUICK, **overrides})
        nlp = evaluate.load_model(out / "model-best")
        result = evaluate.evaluate_pipeline(nlp, docbin)
        assert result["sentences"] == 12 and result["words"] == sum(len(s["words"]) for s in H.load_sentences())
        assert all(0.0 <= result[m] <= 100.0 for m in METRICS), (arm, result)
        words_per_s, scores = gold_run(nlp, gold_sentences(docbin, 12))
        assert words_per_s > 0 and all(round(scores[m], 2) == result[m] for m in METRICS)
        evaluate.metrics_path(metrics, arm, 0, 0, "test").parent.mkdir(parents=True, exist_ok=True)
        evaluate.metrics_path(metrics, arm, 0, 0, "test").write_text(json.dumps(result))
    assert evaluate.main([str(tmp_path / "training" / "cnn" / "model-best"), str(docbin), "--arm", "cnn",
                          "--seed", "1", "--metrics", str(metrics), "--limit", "6"]) == 0
    assert json.loads((metrics / "cnn__fold0__seed1__test.json").read_text())["sentences"] == 6

    table = tmp_path / "parse_eval.md"
    assert compare.main([str(metrics), str(table), "--split", "test", "--reference", "pretrained"]) == 0
    text = table.read_text()
    assert table.with_suffix(".png").stat().st_size > 0
    rows = [line.split(" | ")[0].lstrip("| ") for line in text.splitlines() if line.startswith("| ")]
    assert rows[: 1 + len(arms)] == ["arm", "pretrained", "random", "transformer", "cnn"]
    assert "| random | LAS | 1 |" in text and "| cnn | UAS | 1 |" in text
