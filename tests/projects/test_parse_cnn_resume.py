"""projects/parse CPU-budgeted legs of the spaCy CNN arm: resume_config.py turns parse_cnn.cfg
into a config whose components are sourced from a trained pipeline, so a second `spacy train`
starts from its weights (not from a fresh init); training_cost.py sums a run traced in legs."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import numpy as np
from scriptload import load_script
from spacy.cli.train import train
from spacy.training.initialize import init_nlp
from thinc.api import Config

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "projects" / "parse" / "scripts"
CNN = REPO / "assets" / "configs" / "parse_cnn.cfg"
QUICK = {"training.max_steps": 4, "training.eval_frequency": 4, "training.patience": 0}

resume = load_script(SCRIPTS / "resume_config.py", "parse_resume_config")
training_cost = load_script(SCRIPTS / "training_cost.py", "parse_training_cost_legs")
evaluate = load_script(SCRIPTS / "evaluate.py", "parse_evaluate_resume")



def _tok2vec_params(nlp) -> list[np.ndarray]:
    model = nlp.get_pipe("tok2vec").model
    return [np.asarray(node.get_param(name)) for node in model.walk() for name in node.param_names
            if node.has_param(name)]


def test_second_leg_starts_from_the_first_legs_weights(docbin: Path, tmp_path: Path) -> None:
    data = {"paths.train": str(docbin), "paths.dev": str(docbin)}
    train(CNN, tmp_path / "leg1", overrides={**data, **QUICK})
    leg1 = evaluate.load_model(tmp_path / "leg1" / "model-last")

    cfg_path = tmp_path / "resume.cfg"
    assert resume.main([str(CNN), str(tmp_path / "leg1" / "model-last"), str(cfg_path),
                        "--batch-start", "800"]) == 0
    cfg = Config().from_disk(cfg_path, interpolate=False)
    assert all(cfg["components"][name] == {"source": str(tmp_path / "leg1" / "model-last")}
               for name in cfg["nlp"]["pipeline"])
    assert cfg["training"]["batcher"]["size"]["start"] == 800

    # initialised for training, the sourced pipeline still has the first leg's weights and labels
    paths = {"paths.train": str(docbin), "paths.dev": str(docbin)}
    nlp = init_nlp(Config().from_disk(cfg_path, overrides=paths))
    assert all(np.array_equal(a, b) for a, b in zip(_tok2vec_params(nlp), _tok2vec_params(leg1), strict=True))
    assert nlp.get_pipe("parser").labels == leg1.get_pipe("parser").labels
    # the lemmatizer trains towards its own trees' labels (spaCy leaves this table empty when
    # a trainable_lemmatizer is read from disk: every token's target was label 0)
    lemmatizer = nlp.get_pipe("trainable_lemmatizer")
    assert len(lemmatizer.labels) > 1
    assert lemmatizer.tree2label == {tree: i for i, tree in enumerate(leg1.get_pipe("trainable_lemmatizer").labels)}
    plain = Config().from_disk(cfg_path, overrides=paths)
    plain["initialize"]["after_init"] = None
    assert init_nlp(plain).get_pipe("trainable_lemmatizer").tree2label == {}  # spaCy's own resume
    fresh = init_nlp(Config().from_disk(CNN, overrides=paths))
    assert not all(np.array_equal(a, b) for a, b in zip(_tok2vec_params(fresh), _tok2vec_params(leg1), strict=True))

    train(cfg_path, tmp_path / "leg2", overrides={**data, **QUICK})  # the callback is registered (--code)
    leg2 = evaluate.load_model(tmp_path / "leg2" / "model-best")
    doc = leg2("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος")
    assert all(t.tag_ and t.dep_ for t in doc)


def test_a_run_traced_in_legs_costs_the_sum_of_its_legs(tmp_path: Path) -> None:
    legs = [tmp_path / "leg1.txt", tmp_path / "leg2.txt"]
    legs[0].write_text("1000 0\n1020 1950\n1040 3900\n")
    legs[1].write_text("5000 0\n5020 1990\n")
    out = tmp_path / "cost.json"
    assert training_cost.main([str(out), "--trace", f"cnn={legs[0]},{legs[1]}"]) == 0
    cost = json.loads(out.read_text())["traces"]["cnn"]
    assert cost == {"trace": f"{legs[0]},{legs[1]}", "legs": 2, "wall_seconds_traced": 60,
                    "cpu_seconds": 58.9, "samples": 5}


def test_a_command_is_interrupted_at_its_cpu_budget_and_saves(tmp_path: Path) -> None:
    budget = load_script(SCRIPTS / "cpu_budget.py", "parse_cpu_budget")
    saved = tmp_path / "model-last"
    busy = ("import pathlib, sys\ntry:\n    while True: sum(range(10000))\n"
            f"except KeyboardInterrupt:\n    pathlib.Path({str(saved)!r}).write_text('saved')\n    sys.exit(1)\n")
    trace = tmp_path / "cpu.txt"
    # as under `nohup ... &`: SIGINT ignored by the caller, an ignore its children would inherit
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert budget.main(["--cpu-seconds", "0.6", "--trace", str(trace), "--every", "0.1", "--grace",
                            "20", "--", sys.executable, "-c", busy]) == 0
    finally:
        signal.signal(signal.SIGINT, previous)
    assert saved.read_text() == "saved"  # SIGINT, so the command's own clean-up ran
    ticks = [int(line.split()[1]) for line in trace.read_text().splitlines()]
    assert len(ticks) >= 2 and ticks == sorted(ticks) and ticks[-1] >= 60
    out = tmp_path / "cost.json"
    assert training_cost.main([str(out), "--trace", f"run={trace}"]) == 0
    assert json.loads(out.read_text())["traces"]["run"]["cpu_seconds"] >= 0.6
    # a command that ends within its budget keeps its exit status
    assert budget.main(["--cpu-seconds", "100", "--trace", str(tmp_path / "quick.txt"), "--",
                        sys.executable, "-c", "raise SystemExit(3)"]) == 3
