"""The published pretraining loss and the dev metric, on packed rows.

Letter loss = Σ ce·w / Σ w (w = 1/t at supervised positions); auxiliary loss =
boundary + diacritic + punctuation + capitalization CE, each averaged over its
supervised positions, weighted ``aux_weight`` (0.1). Denominators are taken over the
whole global batch (all micro-batches on all processes), so splitting a batch over
accumulation steps or processes gives the same loss and gradients.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .sampling import IGNORE

#: Head attribute of ``EncoderOutput`` -> target field of a packed row.
AUX_HEADS: tuple[tuple[str, str], ...] = (
    ("boundary", "bnd_target"),
    ("dia", "dia_target"),
    ("punct", "punct_target"),
    ("cap", "cap_target"),
)
LN2 = math.log(2.0)


def collate(rows: Sequence[dict[str, np.ndarray]], device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Stack packed rows into tensors (int64, ``char_weight`` float32) on ``device``."""
    out: dict[str, torch.Tensor] = {}
    for name in rows[0]:
        out[name] = torch.from_numpy(np.stack([r[name] for r in rows])).to(device, non_blocking=True)
    return out


def denominators(rows: Sequence[dict[str, np.ndarray]]) -> torch.Tensor:
    """[Σw, n_bnd, n_dia, n_punct, n_cap] over ``rows`` (float64, CPU)."""
    w = sum(float(r["char_weight"].astype(np.float64).sum()) for r in rows)
    counts = [sum(int((r[t] != IGNORE).sum()) for r in rows) for _, t in AUX_HEADS]
    return torch.tensor([w, *counts], dtype=torch.float64)


def numerators(out: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """[Σ ce·w, Σ ce_bnd, Σ ce_dia, Σ ce_punct, Σ ce_cap] of one micro-batch (float32)."""
    char_logits = out.char.float()
    ce = F.cross_entropy(
        char_logits.flatten(0, 1), batch["char_target"].flatten(), ignore_index=IGNORE, reduction="none"
    )
    terms = [(ce * batch["char_weight"].flatten()).sum()]
    for head, target in AUX_HEADS:
        logits = getattr(out, head).float()
        terms.append(
            F.cross_entropy(logits.flatten(0, 1), batch[target].flatten(), ignore_index=IGNORE, reduction="sum")
        )
    return torch.stack(terms)


def combine(nums: torch.Tensor, dens: torch.Tensor, aux_weight: float) -> torch.Tensor:
    """Loss from numerators and (global) denominators; empty heads contribute zero."""
    d = dens.to(nums.device, torch.float32).clamp_min(1e-12)
    scaled = nums / d
    return scaled[0] + aux_weight * scaled[1:].sum()


def masked_ce_sum(out: Any, batch: dict[str, torch.Tensor]) -> tuple[float, int]:
    """(Σ letter CE in nats, number of supervised letters), unweighted: the bpc parts."""
    logits = out.char.float()
    target = batch["char_target"].flatten()
    ce = F.cross_entropy(logits.flatten(0, 1), target, ignore_index=IGNORE, reduction="sum")
    return float(ce), int((target != IGNORE).sum())


def bits_per_char(ce_sum: float, count: int) -> float:
    """Masked bits per character from summed nats."""
    return ce_sum / max(count, 1) / LN2
