from __future__ import annotations

import json
from pathlib import Path

import pytest

from pretrain.bench import flops_per_letter, main
from pretrain.config import build_config
from pretrain.model import build_model, matrix_parameter_names, param_groups


def test_flops_per_letter_of_paper_is_six_times_the_matrix_parameters_plus_attention() -> None:
    cfg = build_config("paper").model_config()
    # 32 blocks of 4·d² + 3·2752·d matrix weights, plus the heads: ~398M weights per letter
    dense = 6 * (32 * (4 * 1024**2 + 3 * 2752 * 1024) + 1024 * (27 + 3 + 48 + 2 + 6))
    attn = 12 * 1024 * (24 * 511 + 8 * 4096)
    assert flops_per_letter(cfg, 4096) == pytest.approx(dense + attn)


def test_quick_bench_reports_throughput(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    assert main(["--quick", "--device", "cpu", "--threads", "1", "--warmup", "0", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["preset"] == "tiny" and result["letters_s"] > 0 and 0 < result["mfu"]
    assert result["data"] == "synthetic" and report["meta"]["command"].startswith("python -m pretrain bench --quick")


def test_weight_decay_only_on_matrices() -> None:
    model = build_model(build_config("tiny").model_config())
    decay, no_decay = param_groups(model, matrix_parameter_names(model), 0.1)
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.ndim >= 2 for p in decay["params"]) and all(p.ndim == 1 for p in no_decay["params"])
    names = {id(p): n for n, p in model.named_parameters()}
    assert {names[id(p)] for p in no_decay["params"]} >= {"norm_out.w", "blocks.0.attn.q_norm.w"}
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))
