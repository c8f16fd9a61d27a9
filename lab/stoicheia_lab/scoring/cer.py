"""Restoration scoring as published: CER, top-1 and top-k exact match, per gap length.

Both strings are NFC-normalised and final / lunate sigma (``ς ϲ``, capital ``Ϲ``)
are folded to ``σ`` / ``Σ`` before comparison; nothing else is normalised (spaces
count, accents count). CER of one gap = Levenshtein(prediction, gold) / len(gold).
Corpus CER is the mean of the per-gap CERs (``cer``, as in the paper's tables,
where every gap length has equal weight by design) and, alongside,
total edits / total gold characters (``cer_micro``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from stoicheia_spacy.errors import ScoringError

_SIGMA = str.maketrans({"ς": "σ", "ϲ": "σ", "Ϲ": "Σ"})


def fold_sigma(text: str) -> str:
    """NFC-normalise and fold final and lunate sigma to σ (capital lunate to Σ)."""
    if not isinstance(text, str):
        raise ScoringError(f"expected a string, got {type(text).__name__}")
    return unicodedata.normalize("NFC", text).translate(_SIGMA)


def cer(prediction: str, gold: str) -> float:
    """Character error rate of one restoration: Levenshtein distance over gold length."""
    p, g = fold_sigma(prediction), fold_sigma(gold)
    if not g:
        raise ScoringError("gold restoration is empty")
    # rapidfuzz is a lab dependency ([lab] extra): imported when scoring
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(p, g) / len(g)


@dataclass(frozen=True)
class RestorationSample:
    """One gap: its gold text and the model's ranked candidates (best first).

    ``length`` is the gap length L used for the per-L breakdown; it defaults to
    ``len(gold)`` (after NFC).
    """

    gold: str
    candidates: Sequence[str]
    length: int | None = None


@dataclass(frozen=True)
class RestorationScores:
    """Corpus scores (fractions in [0, 1]; CER may exceed 1)."""

    n: int
    cer: float  # mean of per-gap CER
    cer_micro: float  # total edits / total gold characters
    top1: float
    topk: float
    k: int
    per_length: dict[int, RestorationScores] = field(default_factory=dict)

    def as_dict(self, percent: bool = True) -> dict[str, float | int]:
        """Flat dict of the headline numbers (in percent by default, as in the paper)."""
        scale = 100.0 if percent else 1.0
        return {
            "n": self.n,
            "cer": self.cer * scale,
            "cer_micro": self.cer_micro * scale,
            "top1": self.top1 * scale,
            f"top{self.k}": self.topk * scale,
        }


def _aggregate(
    dist: np.ndarray, glen: np.ndarray, top1: np.ndarray, topk: np.ndarray, k: int
) -> RestorationScores:
    return RestorationScores(
        n=int(dist.size),
        cer=float(np.mean(dist / glen)),
        cer_micro=float(dist.sum() / glen.sum()),
        top1=float(top1.mean()),
        topk=float(topk.mean()),
        k=k,
    )


def score_restorations(
    samples: Iterable[RestorationSample | tuple[str, Sequence[str]]], *, k: int = 20
) -> RestorationScores:
    """Score ranked restorations: CER of the first candidate, top-1 and top-``k`` exact
    match, overall and per gap length. A sample with no candidates counts as the
    empty prediction (CER 1, no match).
    """
    if k < 1:
        raise ScoringError(f"k must be >= 1, got {k}")
    golds: list[str] = []
    firsts: list[str] = []
    lengths: list[int] = []
    hit_k: list[bool] = []
    for item in samples:
        sample = item if isinstance(item, RestorationSample) else RestorationSample(*item)
        if isinstance(sample.candidates, str):
            raise ScoringError("candidates must be a sequence of strings, not one string")
        gold = fold_sigma(sample.gold)
        if not gold:
            raise ScoringError("gold restoration is empty")
        cands = [fold_sigma(c) for c in sample.candidates[:k]]
        golds.append(gold)
        firsts.append(cands[0] if cands else "")
        lengths.append(len(gold) if sample.length is None else int(sample.length))
        hit_k.append(gold in cands)
    if not golds:
        raise ScoringError("no samples to score")
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    dist = process.cpdist(firsts, golds, scorer=Levenshtein.distance, workers=1).astype(np.float64)
    glen = np.array([len(g) for g in golds], dtype=np.float64)
    top1 = np.array([f == g for f, g in zip(firsts, golds, strict=True)])
    topk = np.array(hit_k)
    length = np.array(lengths)
    overall = _aggregate(dist, glen, top1, topk, k)
    per = {
        int(L): _aggregate(dist[m], glen[m], top1[m], topk[m], k)
        for L in np.unique(length)
        for m in [length == L]
    }
    return RestorationScores(
        overall.n, overall.cer, overall.cer_micro, overall.top1, overall.topk, k, per
    )
