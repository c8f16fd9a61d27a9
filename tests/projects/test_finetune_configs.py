"""The fine-tuning configs of record (assets/configs/finetune/) run for a few CPU steps on the
golden tiny backbone through projects/finetune/scripts/chain.py, so they cannot rot: the joint
morphosyntax + diffusion config (stopped by the call deadline, then resumed from model-last, then
exported in bf16 and scored by the parse harness) and the scanner config on real silver lines."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import spacy
import torch
from safetensors.torch import load_file
from scriptload import load_script

from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "assets" / "configs" / "finetune"
SCRIPTS = REPO / "projects" / "finetune" / "scripts"
torch.set_num_threads(1)


H = load_script(REPO / "tests" / "morph" / "helpers.py", "morph_helpers")
chain = load_script(SCRIPTS / "chain.py", "finetune_chain")
silver_docbin = load_script(SCRIPTS / "silver_docbin.py", "finetune_silver_docbin")
evaluate = load_script(REPO / "projects" / "parse" / "scripts" / "evaluate.py", "parse_evaluate_ft")

TINY_ENCODER = {f"components.stoicheia_encoder.model.{k}": v for k, v in H.TINY_MODEL.items() if k != "@architectures"}
QUICK = {"training.max_steps": 3, "training.eval_frequency": 3, "training.patience": 0,
         "training.batcher.size": 300, "nlp.batch_size": 8, "paths.backbone": str(TINY),
         "system.gpu_allocator": None, **TINY_ENCODER}


def test_joint_config_stops_resumes_exports_and_scores(docbin: Path, tmp_path: Path) -> None:
    out = tmp_path / "joint"
    data = {"paths.train": str(docbin), "paths.dev": str(docbin), **QUICK}
    first = chain.run_call(CONFIGS / "joint.cfg", out, data, call_s=0.0, gpu=-1)
    assert first["calls"] == 1 and not first["done"] and (out / "model-last").is_dir()
    second = chain.run_call(CONFIGS / "joint.cfg", out, data, call_s=600.0, gpu=-1)
    assert second["calls"] == 2 and second["done"] and second["best"]
    assert chain.run_call(CONFIGS / "joint.cfg", out, data, call_s=600.0, gpu=-1)["calls"] == 2  # done: no-op
    saved = (out / "model-best" / "config.cfg").read_text()
    assert chain.CALLBACK not in saved and "stoicheia_diffusion" in saved

    export = chain.export_bf16(out / "model-best", tmp_path / "export")
    weights = load_file(export / "stoicheia_encoder" / "model.safetensors")
    assert all(v.dtype == torch.bfloat16 for v in weights.values() if v.is_floating_point())
    nlp = evaluate.load_model(export)
    assert nlp.pipe_names[-1] == "stoicheia_diffusion"

    # what restore_eval.py / accent evaluate.py --model read:
    from stoicheia_spacy.backbone import load_backbone

    sample = tmp_path / "dev_sample.jsonl"
    sample.write_text('{"id": "x", "text": "λέγει"}\n')
    folder = chain.export_backbone(out / "model-best", tmp_path / "backbone", sample)
    assert (folder / "dev_sample.jsonl").is_file()
    trained = load_backbone(str(folder))
    assert trained.config.d_model == H.TINY_MODEL["d_model"]
    result = evaluate.evaluate_pipeline(nlp, docbin)
    assert result["sentences"] == 12 and all(0.0 <= result[m] <= 100.0 for m in ("UPOS", "Lemma", "LAS"))


def test_scanner_config_trains_on_silver(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stoicheia_lab.scan.norma import read_norma

    monkeypatch.setenv("STOICHEIA_ASSET_MIRROR", str(shared_data))  # meter_arms.py reads the mirror from it
    from stoicheia_lab.scan.silver import build_silver

    norma = read_norma(shared_data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    lines, _ = build_silver(shared_data, norma, max_lines=12, use_html=False)
    rows = [{"text": x.text, "macron": x.macron.tolist(), "scan": x.scan.tolist(), "meter": x.meter} for x in lines]
    counts = silver_docbin.write_docbins(rows, tmp_path / "scansion", dev_every=4)
    assert counts == {"train": 9, "dev": 3}
    out = tmp_path / "scanner"
    data = {"paths.train": str(tmp_path / "scansion" / "train.spacy"),
            "paths.dev": str(tmp_path / "scansion" / "dev.spacy"), **QUICK}
    status = chain.run_call(CONFIGS / "scanner.cfg", out, data, call_s=600.0, gpu=-1)
    assert status["done"]
    nlp = spacy.load(out / "model-last")
    doc = nlp(rows[0]["text"])
    assert doc._.verses and doc._.verses[0]._.scansion.pattern

    meter_arms = load_script(SCRIPTS / "meter_arms.py", "finetune_meter_arms")
    metrics = tmp_path / "metrics"
    assert meter_arms.main([str(metrics / "meter" / "joint.json"), "--arm", f"pre0={out / 'model-last'}",
                            "--random", f"rnd0={out / 'model-last'}", "--quick"]) == 0
    scored = json.loads((metrics / "meter" / "joint.json").read_text())
    assert 0.0 <= scored["arms"]["pre0"]["macron"]["accuracy"] <= 1.0
    assert scored["pretrained_vs_random"]["mean_diff"] == 0.0  # the same pipeline twice

    designs = load_script(SCRIPTS / "designs.py", "finetune_designs")
    (metrics / "parse").mkdir()
    for arm, las in (("joint", [60.0, 62.0]), ("frozen", [50.0, 51.0])):
        for seed, value in enumerate(las):
            (metrics / "parse" / f"{arm}__fold0__seed{seed}__test.json").write_text(
                json.dumps({"LAS": value, "UPOS": 90.0, "Lemma": 80.0}))
    assert designs.main([str(metrics)]) == 0
    rows = json.loads((metrics / "designs.json").read_text())
    las_row = rows["parse LAS, shared AGDT test"]
    assert las_row["winner"] == "A" and las_row["A_minus_B"] == 10.5 and las_row["A"]["n"] == 2
    assert rows["parse UPOS, shared AGDT test"]["winner"] == "tie"
    meter_row = rows["macrons, Norma (meter_eval.py marks)"]
    assert meter_row["A"]["n"] == 1 and meter_row["B"]["mean"] is None
    assert rows["macrons, Norma (published protocol, scanner + metre)"]["A"]["n"] == 0
    assert "missing" in (metrics / "designs.md").read_text()


def test_restore_config_of_record_sets_the_finetune_options(shared_data: Path, tmp_path: Path) -> None:
    finetune = load_script(REPO / "projects" / "restore" / "scripts" / "finetune.py", "restore_finetune_cfg")
    out = tmp_path / "restore"
    assert finetune.main(["--config", str(CONFIGS / "restore.cfg"), "--mirror", str(shared_data),
                          "--init", str(TINY), "--top-layers", "1", "--lr", "0.0003", "--out", str(out), "--quick"]) == 0
    report = json.loads((out / "train_report.json").read_text())
    assert report["fold"] == 3 and report["minutes"] == 8.0  # from the config
    assert report["top_layers"] == 1 and report["lr"] == 0.0003 and report["steps"] == 5  # command line / --quick win
    bad = tmp_path / "bad.cfg"
    bad.write_text("[finetune]\nlearning_rate = 0.1\n")
    with pytest.raises(SystemExit, match="learning_rate"):
        finetune.main(["--config", str(bad), "--mirror", str(shared_data), "--out", str(out)])


def test_gpu_step_trains_arms_in_order_and_returns_parts(docbin: Path, tmp_path: Path) -> None:
    gpu_step = load_script(SCRIPTS / "gpu_step.py", "finetune_gpu_step")
    work = tmp_path / "work"
    (work / "corpus" / "fold0").mkdir(parents=True)
    for split in ("train", "dev"):
        (work / "corpus" / "fold0" / f"{split}.spacy").write_bytes(docbin.read_bytes())
    assert gpu_step.arm_spec("frozen_s2")[1]["system.seed"] == 2
    with pytest.raises(SystemExit, match="unknown name"):
        gpu_step.arm_spec("bogus_s0")
    quick = [f"{k}={json.dumps(v)}" for k, v in QUICK.items() if k != "paths.backbone"]
    can_split = importlib.util.find_spec("pretrain.parts") is not None  # the bundle tool (python -m pretrain)
    out = tmp_path / "OUT" if can_split else None
    argv = ["train", "--work", str(work), "--backbone", str(TINY), "--gpu", "-1", "--arms", "joint_s0,frozen_s0",
            "--budget-s", "600", "--max-files", "40", "--set", *quick] + (["--out", str(out)] if out else [])
    assert gpu_step.main(argv) == 0
    for arm in ("joint_s0", "frozen_s0"):
        assert json.loads((work / "training" / arm / "status.json").read_text())["done"]
    frozen = spacy.load(work / "training" / "frozen_s0" / "model-best")
    assert frozen.get_pipe("stoicheia_diffusion").cfg["weight"] == 0.0
    assert frozen.config["components"]["stoicheia_parser"]["model"]["tok2vec"]["grad_factor"] == 0.0
    if out is not None:
        status = json.loads((out / "status.json").read_text())
        assert {v["state"] for v in status.values()} == {"returned now"}
        assert not (work / "export" / "frozen_s0" / "stoicheia_encoder" / "model.safetensors").exists()
        dest = tmp_path / "returned"
        gpu_step.install(out, "joint_s0", dest, TINY)
        installed = gpu_step.install(out, "frozen_s0", dest, TINY)  # the base backbone is put back
        nlp = spacy.load(installed)
        assert nlp("λέγει δὲ ὁ ἀνήρ.")[0].pos_
