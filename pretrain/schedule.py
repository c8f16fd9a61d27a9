"""Dev-driven learning-rate schedule and the staged tier anneal.

Warmup (linear, ``warmup_frac`` of ``max_steps``) -> constant -> cosine decay to
``final_lr_frac`` over ``decay_frac * max_steps`` steps. The decay starts when dev bpc
has not improved by ``min_delta`` for ``patience`` evaluations, and at the latest at
``max_steps - decay_len`` so every run ends annealed; training ends with the decay.
During the decay the tier weights go to 1:1:0, then to 1:0:0 once the decay is
``anneal_stage_2_at`` done.
"""

from __future__ import annotations

import math
from typing import Any

from .config import ANNEAL_STAGE_1, ANNEAL_STAGE_2, DataConfig, TrainConfig


class Schedule:
    """Learning-rate factor per optimiser step; resumable through ``state_dict``."""

    def __init__(self, train: TrainConfig, data: DataConfig) -> None:
        self.train = train
        self.data = data
        self.calibrated = False
        self.resize(train.max_steps)
        self.triggered_at: int | None = None
        self.best = math.inf
        self.best_step = -1
        self.bad_evals = 0

    def resize(self, max_steps: int) -> None:
        """Set the run length (a time budget turned into steps); warmup and decay follow."""
        self.max_steps = max(1, int(max_steps))
        self.warmup = round(self.train.warmup_frac * self.max_steps)
        self.decay_len = max(1, round(self.train.decay_frac * self.max_steps))

    @property
    def decay_start(self) -> int:
        """Step at which the cosine decay starts (plateau trigger or the latest start)."""
        latest = max(self.warmup, self.max_steps - self.decay_len)
        return latest if self.triggered_at is None else min(self.triggered_at, latest)

    @property
    def end_step(self) -> int:
        """Number of optimiser steps of the whole run."""
        return self.decay_start + self.decay_len

    def lr_factor(self, step: int) -> float:
        """Multiplier of the peak learning rate for the update made at ``step`` (0-based)."""
        if step < self.warmup:
            return (step + 1) / self.warmup
        start = self.decay_start
        if step < start:
            return 1.0
        progress = min(1.0, (step - start) / self.decay_len)
        final = self.train.final_lr_frac
        return final + (1.0 - final) * 0.5 * (1.0 + math.cos(math.pi * progress))

    def tier_weights(self, step: int) -> tuple[float, float, float]:
        """Tier weights for the data read at ``step``."""
        start = self.decay_start
        if step < start:
            return tuple(self.data.tier_weights)  # type: ignore[return-value]
        progress = (step - start) / self.decay_len
        return ANNEAL_STAGE_1 if progress < self.data.anneal_stage_2_at else ANNEAL_STAGE_2

    def report_dev(self, step: int, bpc: float) -> bool:
        """Record a dev evaluation after ``step`` steps; True when it is the best so far."""
        improved = bpc < self.best - self.train.min_delta
        if bpc < self.best:
            self.best, self.best_step = bpc, step
        if improved:
            self.bad_evals = 0
        else:
            self.bad_evals += 1
            if self.triggered_at is None and self.bad_evals >= self.train.patience and step >= self.warmup:
                self.triggered_at = step
        return self.best_step == step

    def state_dict(self) -> dict[str, Any]:
        return {
            "triggered_at": self.triggered_at,
            "best": self.best,
            "best_step": self.best_step,
            "bad_evals": self.bad_evals,
            "max_steps": self.max_steps,
            "calibrated": self.calibrated,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.triggered_at = state["triggered_at"]
        self.best = float(state["best"])
        self.best_step = int(state["best_step"])
        self.bad_evals = int(state["bad_evals"])
        if "max_steps" in state:
            self.resize(int(state["max_steps"]))
        self.calibrated = bool(state.get("calibrated", False))
