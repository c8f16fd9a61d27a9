"""Shallow fusion of the backbone with a character n-gram LM, and union rescoring.

Inside the beam (:class:`FusedScorer`): every step's letter log-probabilities are
``log P_backbone + weight · log P_ngram`` renormalised over the letters (a product of
experts; the n-gram sees the hypothesis's left AND right context through
``masked_logprobs``), and the word-break log-probabilities likewise. With ``weight = 0``
the beam is the backbone's. The weight and the length bonus are fitted on dev gaps only
(``projects/restore``: ``restore-eval-quick``); with a stronger backbone the fitted weight falls.

After the beam (:func:`union_rescore`): the candidate lists of the fused beam and of the
n-gram's own beam are merged; every text gets ``fused + union_weight · ngram`` where a list
that did not find the text contributes its lowest score minus ``floor`` (a candidate another
system missed is at most as good as its worst kept one). The result is ranked with the
restorer's width prior (length bonus), as every candidate list is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..alphabet import BLANK_ID, MASK_ID, N_ALPHA

__all__ = ["FusedScorer", "union_rescore"]

Cands = Sequence[tuple[str, float, int]]


class FusedScorer:
    """A beam scorer: ``backbone`` scorer fused with ``ngram`` scorer at ``weight``."""

    def __init__(self, backbone: Any, ngram: Any, weight: float) -> None:
        self.backbone = backbone
        self.ngram = ngram
        self.weight = float(weight)

    @property
    def forwards(self) -> int:
        return int(getattr(self.backbone, "forwards", 0))

    @property
    def tokens(self) -> int:
        return int(getattr(self.backbone, "tokens", 0))

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        letters, breaks = self.backbone(batch)
        if self.weight == 0:
            return letters, breaks
        ng_letters, ng_breaks = self.ngram(batch)
        fused = letters.clone()
        fused[..., :N_ALPHA] = letters[..., :N_ALPHA] + self.weight * ng_letters[..., :N_ALPHA]
        fused[..., MASK_ID] = float("-inf")
        fused = torch.log_softmax(fused, dim=-1)
        fused[..., BLANK_ID] = torch.where(torch.isfinite(letters[..., BLANK_ID]), fused[..., BLANK_ID],
                                           letters[..., BLANK_ID])
        brk = torch.log_softmax(breaks + self.weight * ng_breaks, dim=-1)
        return fused, brk


def union_rescore(fused: Cands, ngram: Cands, *, union_weight: float, floor: float = 1.0) -> list[tuple[str, float, int]]:
    """The union of two candidate lists ``[(text, logprob, width)]`` with logprob
    ``fused + union_weight · ngram`` (a list missing a text gives it its lowest score minus
    ``floor``), in no particular order: rank it with a :class:`~.widths.WidthPrior`."""
    if not fused and not ngram:
        return []
    f = {t: (lp, w) for t, lp, w in fused}
    g = {t: (lp, w) for t, lp, w in ngram}
    f_floor = min((lp for lp, _ in f.values()), default=0.0) - floor
    g_floor = min((lp for lp, _ in g.values()), default=0.0) - floor
    out = []
    for text in dict.fromkeys([t for t, _, _ in fused] + [t for t, _, _ in ngram]):
        width = (f.get(text) or g[text])[1]
        score = f.get(text, (f_floor, 0))[0] + union_weight * g.get(text, (g_floor, 0))[0]
        out.append((text, float(score), int(width)))
    return out
