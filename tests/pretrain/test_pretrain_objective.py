from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from pretrain import objective as O
from pretrain.config import build_config
from pretrain.data import TrainStream
from pretrain.model import build_model
from pretrain.sampling import IIDMaskSampler


def _setup(corpus: Path, encoder: Any) -> tuple[Any, list[Any]]:
    cfg = build_config("tiny", "smoke", ["data.dev_fraction=0"])
    torch.manual_seed(0)
    model = build_model(cfg.model_config())
    rows = TrainStream([corpus], cfg.data, IIDMaskSampler(), seed=1, encoder=encoder).next_rows(4)
    return model, rows


def _fwd(model: Any, batch: dict[str, torch.Tensor]) -> Any:
    return model(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])


def test_loss_is_the_published_formula(corpus: Path, encoder: Any) -> None:
    model, rows = _setup(corpus, encoder)
    batch = O.collate(rows)
    out = _fwd(model, batch)
    loss = O.combine(O.numerators(out, batch), O.denominators(rows), 0.1)
    t = batch["char_target"].flatten()
    keep = t != -100
    ce = F.cross_entropy(out.char.flatten(0, 1)[keep], t[keep], reduction="none")
    w = batch["char_weight"].flatten()[keep]
    expected = (ce * w).sum() / w.sum()
    for head, name in O.AUX_HEADS:
        tt = batch[name].flatten()
        expected = expected + 0.1 * F.cross_entropy(getattr(out, head).flatten(0, 1)[tt != -100], tt[tt != -100])
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)


def test_split_batches_give_the_same_gradient(corpus: Path, encoder: Any) -> None:
    model, rows = _setup(corpus, encoder)
    dens = O.denominators(rows)
    whole = O.collate(rows)
    O.combine(O.numerators(_fwd(model, whole), whole), dens, 0.1).backward()
    g_whole = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    for part in (rows[:1], rows[1:3], rows[3:]):
        b = O.collate(part)
        O.combine(O.numerators(_fwd(model, b), b), dens, 0.1).backward()
    for a, b in zip(g_whole, (p.grad for p in model.parameters()), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-7)


def test_bits_per_char() -> None:
    import math

    assert O.bits_per_char(math.log(2) * 10, 10) == 1.0
    assert O.bits_per_char(0.0, 0) == 0.0
