"""``python -m stoicheia_lab.bench components``: both arms run in their own processes and every
figure is written (tiny checkpoint, 3 sentences; no timing asserted: the comparison lives in the
benchmark's printed ratios); the same-shape products are exactly the counted forward FLOPs; the
pieces are real Perseus verse and prose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stoicheia_lab.bench import components
from stoicheia_lab.bench.backbone import forward_flops

from stoicheia_spacy.backbone import load_backbone


def test_bench_components_times_both_arms(tiny_checkpoint: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "components.json"
    argv = ["--source", str(tiny_checkpoint), "--n", "3", "--letters", "0", "--rounds", "1",
            "--baseline", str(components.PACKAGE_ROOT), "--out", str(out)]
    assert components.main(argv) == 0
    printed = capsys.readouterr().out
    assert "after/before" in printed and "stoicheia_encoder" in printed and "words/s" in printed
    metrics = json.loads(out.read_text(encoding="utf-8"))
    for arm in ("before", "after"):
        run = metrics["arms"][arm]["sentences"]
        assert set(run["seconds"]) == set(metrics["pipes"]) and run["words"] > 0
        assert run["words_per_s"] == pytest.approx(run["words"] / sum(run["seconds"].values()))
    assert metrics["arms"]["before"]["sentences"]["words"] == metrics["arms"]["after"]["sentences"]["words"]
    assert metrics["speedup_words_per_s"]["sentences"] > 0


def test_same_shape_products_are_the_counted_flops(tiny_checkpoint: Path) -> None:
    backbone = load_backbone(tiny_checkpoint)
    letters = 4 * backbone.config.char_window  # whole blocks: the blocked kernel's count exactly
    linear, attention = components.forward_shapes(backbone, letters)
    assert components._flops(linear) + components._flops(attention) == forward_flops(backbone, letters, letters)
    gemm = components.gemm_comparison(str(tiny_checkpoint), {"piece": letters}, {"piece": 1.0})
    assert gemm["piece"]["same_shape_gemm_s"] > 0 and gemm["square_gemm_gflops"] > 0


def test_pieces_are_perseus_verse_and_prose(shared_data: Path) -> None:
    texts = components.pieces(shared_data, 600)
    assert texts["verse"].startswith("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον")
    assert texts["prose"].startswith("Ῥωμαίοις ὁ δῆμος καὶ ἡ βουλὴ")
    assert all(len(t) <= 600 for t in texts.values())
    assert texts["verse"].count("\n") >= 5 and "\n" not in texts["prose"]
