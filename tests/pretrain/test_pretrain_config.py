from __future__ import annotations

import pytest

from pretrain.config import PUBLISHED_TIER_WEIGHTS, RunConfig, build_config
from stoicheia_spacy.errors import ConfigError


def test_published_defaults_match_the_release() -> None:
    cfg = build_config("paper")
    assert cfg.train.lr == 3e-4
    assert cfg.train.betas == (0.9, 0.95)
    assert cfg.train.weight_decay == 0.1
    assert cfg.train.clip == 1.0
    assert cfg.train.warmup_frac == 0.04
    assert cfg.train.final_lr_frac == 0.02
    assert cfg.data.row_len == 8192 and cfg.data.max_window == 4096
    assert cfg.data.tier_weights == PUBLISHED_TIER_WEIGHTS == (1.0, 1.0, 0.3)
    mc = cfg.model_config()
    assert (mc.d_model, mc.n_heads, mc.depth) == (1024, 16, 32)


def test_overrides_are_typed_and_reach_the_model() -> None:
    cfg = build_config(
        "mini",
        "cpu",
        ["train.lr=1e-3", "model.depth=4", "train.betas=0.8,0.9", "train.compile=true", "data.tier_weights=1,1,0"],
    )
    assert cfg.train.lr == 1e-3 and isinstance(cfg.train.lr, float)
    assert cfg.train.betas == (0.8, 0.9)
    assert cfg.train.compile is True
    assert cfg.data.tier_weights == (1.0, 1.0, 0.0)
    assert cfg.data.row_len == 2048  # from the cpu preset
    assert cfg.model_config().depth == 4


def test_round_trip_through_json_dict() -> None:
    cfg = build_config("tiny", "smoke", ["train.seed=7", "model.depth=2"])
    again = RunConfig.from_dict(cfg.to_dict())
    assert again.to_dict() == cfg.to_dict()


@pytest.mark.parametrize(
    "override",
    ["train.nope=1", "optim.lr=1", "train.lr=fast", "lr=1", "train.betas=0.9", "data.max_window=99999"],
)
def test_bad_overrides_raise_config_error(override: str) -> None:
    with pytest.raises(ConfigError):
        build_config("mini", "published", [override])


def test_unknown_model_key_and_training_preset() -> None:
    with pytest.raises(ConfigError):
        build_config("mini", "published", ["model.width=3"]).model_config()
    with pytest.raises(ConfigError):
        build_config("mini", "fastest")
