from __future__ import annotations

import math

import pytest

from pretrain.config import ANNEAL_STAGE_1, ANNEAL_STAGE_2, build_config
from pretrain.schedule import Schedule


def _schedule(**train: object) -> Schedule:
    cfg = build_config("tiny", "published", [f"train.{k}={v}" for k, v in train.items()])
    return Schedule(cfg.train, cfg.data)


def test_warmup_constant_then_forced_cosine_to_two_percent() -> None:
    s = _schedule(max_steps=100, decay_frac=0.2)
    assert s.warmup == 4
    assert [s.lr_factor(i) for i in range(4)] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert s.lr_factor(50) == 1.0 and s.lr_factor(79) == 1.0
    assert s.decay_start == 80 and s.end_step == 100
    assert s.lr_factor(90) == pytest.approx(0.02 + 0.98 * 0.5)
    assert s.lr_factor(100) == pytest.approx(0.02)
    factors = [s.lr_factor(i) for i in range(80, 101)]
    assert all(a >= b for a, b in zip(factors, factors[1:], strict=False))


def test_plateau_triggers_decay_and_shortens_the_run() -> None:
    s = _schedule(max_steps=1000, decay_frac=0.1, patience=2)
    assert s.report_dev(100, 2.0) is True
    assert s.report_dev(200, 1.5) is True
    # a new best (saved as best.pt) but below min_delta: counts towards patience
    assert s.report_dev(300, 1.49999) is True
    assert s.bad_evals == 1
    assert s.triggered_at is None
    assert s.report_dev(400, 1.6) is False
    assert s.triggered_at == 400
    assert s.decay_start == 400 and s.end_step == 500
    assert s.lr_factor(399) == 1.0 and s.lr_factor(450) < 1.0
    assert s.best == pytest.approx(1.49999) and s.best_step == 300


def test_tier_anneal_stages_follow_the_decay() -> None:
    s = _schedule(max_steps=100, decay_frac=0.2)
    assert s.tier_weights(10) == (1.0, 1.0, 0.3)
    assert s.tier_weights(80) == ANNEAL_STAGE_1 == (1.0, 1.0, 0.0)
    assert s.tier_weights(89) == ANNEAL_STAGE_1
    assert s.tier_weights(90) == ANNEAL_STAGE_2 == (1.0, 0.0, 0.0)


def test_state_round_trip() -> None:
    s = _schedule(max_steps=1000, patience=1)
    s.report_dev(100, 3.0)
    s.report_dev(200, 3.5)
    t = _schedule(max_steps=1000, patience=1)
    t.load_state_dict(s.state_dict())
    assert t.decay_start == s.decay_start == 200
    assert t.best == 3.0 and not math.isinf(t.best)
