"""StoicheiaConfig mirrors config.json; the encoder validates its inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder, mlp_hidden
from stoicheia_spacy.errors import ConfigError, InvalidInputError
from tests.conftest import TINY

from .helpers import ILIAD_1, greek_inputs

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_golden_config_roundtrip(fixtures_dir: Path) -> None:
    raw = json.loads((TINY / "config.json").read_text())
    cfg = StoicheiaConfig.from_dict(raw)
    assert cfg.to_dict() == raw
    assert cfg == StoicheiaConfig.preset("tiny")


def test_paper_preset_parameter_count() -> None:
    assert mlp_hidden(1024) == 2752
    cfg = StoicheiaConfig.preset("paper")
    with torch.device("meta"):
        model = StoicheiaEncoder(cfg)
    assert model.num_parameters() == 404_998_144


@pytest.mark.parametrize("name,dims", [("tiny", (64, 4, 4, 8)), ("mini", (256, 8, 8, 256)), ("base", (512, 8, 16, 256))])
def test_presets(name: str, dims: tuple[int, int, int, int]) -> None:
    cfg = StoicheiaConfig.preset(name)
    assert (cfg.d_model, cfg.n_heads, cfg.depth, cfg.char_window) == dims
    assert [cfg.is_global(i) for i in range(8)] == [False, False, False, True] * 2


def test_bad_configs() -> None:
    with pytest.raises(ConfigError, match="n_heads"):
        StoicheiaConfig.preset("tiny", n_heads=5)
    with pytest.raises(ConfigError, match="attn_impl"):
        StoicheiaConfig.preset("tiny", attn_impl="magic")
    with pytest.raises(ConfigError, match="preset"):
        StoicheiaConfig.preset("huge")
    with pytest.raises(ConfigError, match="missing"):
        StoicheiaConfig.from_dict({"d_model": 64})


def test_config_module_does_not_import_torch() -> None:
    code = "import sys, stoicheia_spacy.backbone.config as c; c.StoicheiaConfig.preset('mini'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT,
                         env={"PYTHONPATH": str(REPO_ROOT)}, check=True)
    assert out.stdout.strip() == "False"


def test_bad_inputs_raise_clear_errors() -> None:
    model = StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()
    inputs = greek_inputs(ILIAD_1)
    bad = dict(inputs, dia=inputs["dia"] + 49)
    with pytest.raises(InvalidInputError, match="dia"):
        model(**bad)
    with pytest.raises(InvalidInputError, match="shape"):
        model(**dict(inputs, punct=inputs["punct"][:, :-1]))
    with pytest.raises(InvalidInputError, match="integer"):
        model(**dict(inputs, boundary=inputs["boundary"].float()))
    with pytest.raises(InvalidInputError):
        model(**{k: v[:, :0] for k, v in inputs.items()})
