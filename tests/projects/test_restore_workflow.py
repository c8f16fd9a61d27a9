"""projects/restore end to end at CI size on real papyri: frozen samples, a quick restoration
fine-tune into an overlay, and restore-eval's four arms, table and plots (tiny backbone)."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import torch

from stoicheia_spacy.restore.formats import parse_chat, plain
from tests.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "projects" / "restore" / "scripts"
torch.set_num_threads(1)


def _script(name: str):
    sys.path.insert(0, str(SCRIPTS))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(SCRIPTS))


DECREE = ("ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι Κεκροπὶς ἐπρυτάνευε Μνησίθεος ἐγραμμάτευε "
          "Εὐπείθης ἐπεστάτει Καλλίας εἶπε τὰς σπονδὰς ἀναγράψαι ἐν στήληι λιθίνηι ")


def _decree_samples(restore_eval, tmp_path: Path) -> Path:
    """Samples (one gap per L) from 100 Attic decrees under PHI-like ids."""
    corpus = tmp_path / "inscriptions.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"PHI {1000 + i}", "text": DECREE * 2}, ensure_ascii=False) + "\n"
                              for i in range(100)), encoding="utf-8")
    samples = tmp_path / "samples"
    assert restore_eval.main(["samples", "--mirror", "", "--corpus", str(corpus), "--fold", "3",
                              "--per-length", "1", "--out", str(samples)]) == 0
    return samples


def test_samples_finetune_and_restore_eval(shared_data: Path, tmp_path: Path) -> None:
    restore_eval, finetune = _script("restore_eval"), _script("finetune")
    mirror = str(shared_data)
    samples = tmp_path / "samples"
    assert restore_eval.main(["samples", "--mirror", mirror, "--fold", "3", "--per-length", "1",
                              "--limit", "4000", "--out", str(samples)]) == 0
    test = [json.loads(x) for x in (samples / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["L"] for r in test) == list(range(1, 11))
    chat = [json.loads(x) for x in (samples / "test.chat.jsonl").read_text(encoding="utf-8").splitlines()]
    for r, c in zip(test, chat, strict=True):  # the Ithaca record format: ? x L at start, only there
        assert set(r) == {"id", "L", "start", "gold", "text"} and len(r["gold"]) == r["L"]
        assert r["text"][r["start"] : r["start"] + r["L"]] == "?" * r["L"] and r["text"].count("?") == r["L"]
        _, start, letters, gold = parse_chat(c)  # the chat format: N letters (spaces not counted)
        assert start == r["start"] and letters == len(r["gold"].replace(" ", "")) and gold == plain(r["gold"])

    overlay = tmp_path / "training"
    assert finetune.main(["--mirror", mirror, "--fold", "3", "--init", str(TINY), "--top-layers", "1",
                          "--out", str(overlay), "--quick"]) == 0
    report = json.loads((overlay / "train_report.json").read_text())
    assert report["held_out_digits"] == [3, 4] and report["steps"] == 5
    assert (overlay / "overlay.safetensors").stat().st_size < (TINY / "model.safetensors").stat().st_size

    out = tmp_path / "results"
    assert restore_eval.main(["evaluate", "--samples", str(samples), "--mirror", mirror, "--fold", "3",
                              "--model", str(TINY), "--overlay", str(overlay), "--per-length", "1", "--dev-per-length", "1",
                              "--beam", "5", "--window", "24",
                              "--ngram-docs", "300", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert list(metrics["arms"]) == ["finetuned", "pretrained", "random_init", "ngram"]
    assert list(metrics["widths"]) == ["known", "hidden", "range", "chat"]
    compared = [*metrics["arms"], "finetuned (hidden)", "finetuned (range)", "finetuned (chat)"]
    assert metrics["main_arm"] == "finetuned"  # McNemar on every pair of arms and width modes
    assert list(metrics["mcnemar"]) == [f"{a} vs {b}" for i, a in enumerate(compared) for b in compared[i + 1 :]]
    for arm, s in metrics["arms"].items():
        assert 0 <= s["overall"]["top1"] <= s["overall"]["top20"] <= 100, arm
        assert s["overall"]["cer"] >= 0 and set(s["per_L"]) == {str(L) for L in range(1, 11)}
    mean_L = sum(r["L"] for r in test) / len(test)
    for arm in ("finetuned", "pretrained", "random_init"):  # the batched beam: at most L + 1 forwards a gap
        assert metrics["speed"][f"test/{arm}/known"]["forwards_per_gap"] <= mean_L + 2
    table = (out / "results.md").read_text(encoding="utf-8")
    assert all(f"| {row} |" in table for row in [*metrics["arms"], *metrics["widths"]])
    assert "| finetuned: width |" in table and metrics["command"].startswith("python scripts/restore_eval.py evaluate ")
    assert (out / "cer_by_L.png").stat().st_size > 1000 and (out / "reliability.png").stat().st_size > 1000


def test_a_users_inscriptions_are_held_out_by_phi_digit(tmp_path: Path) -> None:
    """--corpus: JSON lines {id, text} (here Attic decrees under PHI-like ids) replace the
    papyri; samples come only from ids ending in fold (test) and fold + 1 (dev), and the
    fine-tune reads the others."""
    restore_eval, finetune = _script("restore_eval"), _script("finetune")
    decree = DECREE
    corpus = tmp_path / "inscriptions.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"PHI {1000 + i}", "text": decree * 3}, ensure_ascii=False) + "\n"
                              for i in range(40)), encoding="utf-8")
    held = [r for r in finetune.documents("", None, str(corpus)) if finetune.tm_digit(r) in (3, 4)]
    assert len(held) == 8 and all(r["id"][-1] in "34" for r in held)
    out = tmp_path / "samples"
    assert restore_eval.main(["samples", "--mirror", "", "--corpus", str(corpus), "--fold", "3",
                              "--per-length", "1", "--out", str(out)]) == 0
    test = [json.loads(x) for x in (out / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    dev = [json.loads(x) for x in (out / "dev.jsonl").read_text(encoding="utf-8").splitlines()]
    assert test and all(r["id"].endswith("3") for r in test) and all(r["id"].endswith("4") for r in dev)
    assert all(r["text"][r["start"] : r["start"] + r["L"]] == "?" * r["L"] and r["gold"] in decree for r in test)
    train = list(itertools.islice(finetune.records("", 3, 0.0, None, 0, str(corpus)), 100))
    assert len(train) == 32  # 40 documents minus the 8 of digits 3 and 4


def test_sharded_workers_merge_into_the_unsharded_run(tmp_path: Path) -> None:
    """--shard K/N: two workers decode alternate gaps into their own cache files; the merged run
    holds the same candidates in record order as one unsharded worker, with the CPU seconds summed."""
    restore_eval, _ = _script("restore_eval"), _script("finetune")  # samples imports finetune
    samples = _decree_samples(restore_eval, tmp_path)
    common = ["evaluate", "--samples", str(samples), "--mirror", "", "--model", str(TINY), "--arms", "pretrained",
              "--beam", "3", "--window", "12", "--chunk", "2", "--only-known"]
    for k in (0, 1):
        assert restore_eval.main([*common, "--shard", f"{k}/2", "--out", str(tmp_path / "sharded")]) == 0
    assert restore_eval.main([*common, "--out", str(tmp_path / "whole")]) == 0
    [whole] = (tmp_path / "whole" / "cache").glob("*/test10-*_pretrained-*_known.json")
    cache = tmp_path / "sharded" / "cache" / whole.parent.name / whole.name
    shards = [json.loads(cache.with_name(f"{cache.stem}.shard{k}of2.json").read_text(encoding="utf-8")) for k in (0, 1)]
    expected = json.loads(whole.read_text(encoding="utf-8"))
    assert [s["n"] for s in shards] == [5, 5] and not cache.exists()
    merged = restore_eval.merge_shards(cache, expected["n"])
    assert merged is not None and cache.is_file() and merged["n"] == 10
    assert [c[0][0] for c in merged["cands"]] == [c[0][0] for c in expected["cands"]]
    assert merged["cpu_s"] == sum(s["cpu_s"] for s in shards)
    assert restore_eval.merge_shards(cache, 9) is None  # shards that do not cover the records: no merge
    try:
        restore_eval.main([*common[:-1], "--shard", "2/2", "--out", str(tmp_path / "bad")])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--shard 2/2 without --only-known was accepted")


def test_workers_decode_in_parallel_processes_and_reuse_the_cache(tmp_path: Path) -> None:
    """--workers 2: the runs not in the cache are decoded by sharded worker processes and scored
    like one process's run; a second invocation decodes nothing and says which runs it reused."""
    restore_eval, _ = _script("restore_eval"), _script("finetune")
    samples = _decree_samples(restore_eval, tmp_path)
    common = ["evaluate", "--samples", str(samples), "--mirror", "", "--model", str(TINY), "--arms", "pretrained",
              "--beam", "2", "--window", "8", "--chunk", "5", "--max-letters", "4"]
    out = tmp_path / "parallel"
    assert restore_eval.main([*common, "--workers", "2", "--out", str(out)]) == 0
    par = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    runs = ["dev/pretrained/known", "dev/pretrained/hidden", "dev/pretrained/range",
            "test/pretrained/known", "test/pretrained/hidden", "test/pretrained/range", "test/pretrained/chat"]
    assert par["invocation"]["decoded"] == runs and par["invocation"]["from_earlier_invocations"] == []
    assert len(list((out / "logs").glob("*.shard*of2.log"))) == 2 * len(runs)
    assert restore_eval.main([*common, "--out", str(tmp_path / "single")]) == 0
    single = json.loads((tmp_path / "single" / "metrics.json").read_text(encoding="utf-8"))
    assert par["widths"] == single["widths"] and par["arms"] == single["arms"]
    assert restore_eval.main([*common, "--workers", "2", "--out", str(out)]) == 0  # all cached: nothing decoded
    again = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert again["invocation"]["decoded"] == [] and again["invocation"]["from_earlier_invocations"] == runs
    assert again["widths"] == par["widths"]


def test_the_fused_arm_is_the_main_arm_and_beats_the_backbone_on_a_formula(tmp_path: Path) -> None:
    """--arms fused,finetuned --lm LM: the shipped default (backbone + overlay fused with the
    character n-gram LM) is the main arm (its widths, prior and calibration); on decrees the LM
    has read, fusion restores the formula where the tiny backbone alone does not; without --lm
    the fused arm is refused."""
    import numpy as np

    from stoicheia_spacy.backbone.overlay import save_overlay, trainable_names
    from stoicheia_spacy.codec import encode_planes
    from stoicheia_spacy.restore.char_ngram import SPACE, CharNgramLM
    from stoicheia_spacy.restore.ngram_lm import save_lm

    restore_eval, _ = _script("restore_eval"), _script("finetune")
    samples = _decree_samples(restore_eval, tmp_path)
    p = encode_planes(DECREE * 2)
    symbols = np.insert(p.letters.astype(np.int64), np.flatnonzero(p.boundary > 0) + 1, SPACE)
    save_lm(CharNgramLM(order=6).fit([symbols] * 5), tmp_path / "lm.npz")
    from stoicheia_spacy.backbone import load_backbone

    backbone = load_backbone(str(TINY))
    overlay = save_overlay(backbone, trainable_names(backbone, 1), tmp_path / "overlay")
    common = ["evaluate", "--samples", str(samples), "--mirror", "", "--model", str(TINY), "--overlay", str(overlay),
              "--beam", "3", "--window", "12", "--chunk", "5", "--max-letters", "4", "--dev-per-length", "1"]
    try:
        restore_eval.main([*common, "--arms", "fused,finetuned", "--out", str(tmp_path / "no_lm")])
    except SystemExit as exc:
        assert "--lm" in str(exc.code)
    else:
        raise AssertionError("the fused arm ran without an LM")
    out = tmp_path / "fused"
    assert restore_eval.main([*common, "--arms", "fused,finetuned", "--lm", str(tmp_path / "lm.npz"),
                              "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["main_arm"] == "fused" and list(metrics["arms"]) == ["fused", "finetuned"]
    assert list(metrics["widths"]) == ["known", "hidden", "range", "chat"]
    fused, alone = metrics["arms"]["fused"]["overall"], metrics["arms"]["finetuned"]["overall"]
    assert fused["cer"] < alone["cer"] and fused["top1"] > alone["top1"]
    assert set(json.loads((out / "calibration.json").read_text(encoding="utf-8"))["temperatures"]) >= {"default"}
    # the in-beam weight fitted on dev: each weight decodes the dev gaps, the lowest dev CER wins,
    # the test runs use it and calibration.json hands it to the restorer
    fitted = tmp_path / "fitted"
    assert restore_eval.main([*common, "--arms", "fused,finetuned", "--lm", str(tmp_path / "lm.npz"),
                              "--lm-weights", "0,1", "--confidence-min-gaps", "3", "--out", str(fitted)]) == 0
    fit = json.loads((fitted / "metrics.json").read_text(encoding="utf-8"))["lm_weight"]
    by_weight = fit["dev_cer_known_by_weight"]
    assert fit["fitted_on_dev"] and set(by_weight) == {"0.0", "1.0"}
    assert by_weight[str(fit["weight"])] == min(by_weight.values())
    assert json.loads((fitted / "calibration.json").read_text(encoding="utf-8"))["lm_weight"] == fit["weight"]
    cached = {f.name for f in (fitted / "cache").rglob("*.json")}
    assert any(f"x{fit['weight']:g}_known" in n and n.startswith("test") for n in cached)
    assert sum(n.startswith("dev") and n.endswith("_known.json") and "_fused-" in n for n in cached) == 2
    # the confidence's Platt pair per width bucket with >= 3 dev gaps (all five here); the file is a
    # valid settings block of the restorer
    from stoicheia_spacy.restore.settings import RestorerSettings

    settings = RestorerSettings.from_dict(json.loads((fitted / "calibration.json").read_text(encoding="utf-8")))
    assert set(settings.confidence_slopes) == set(settings.confidence_biases) == {"1-3", "4-6", "7-10", "range", "unknown"}
    by_bucket = json.loads((fitted / "metrics.json").read_text(encoding="utf-8"))["calibration"]["confidence_by_bucket"]
    assert {b: v["slope"] for b, v in by_bucket.items()} == dict(settings.confidence_slopes)
