"""The bridge between encoded planes and the corruption sampler.

The published sampler lives in ``pretrain.corruption`` (``NoiseConfig``, ``Example``,
``CorruptionSampler``); ``make_sampler("iid")`` gives ``IIDMaskSampler`` instead, 15 %
independent masking with the same output type, for smoke runs and tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stoicheia_spacy import alphabet as A

from .corruption import CorruptedExample, CorruptionSampler, Example, NoiseConfig

IGNORE = -100

#: Names of the per-position arrays of a corrupted example, in packing order.
INPUT_FIELDS: tuple[str, ...] = ("input_ids", "boundary", "dia", "punct")
TARGET_FIELDS: tuple[str, ...] = (
    "char_target",
    "char_weight",
    "bnd_target",
    "dia_target",
    "punct_target",
    "cap_target",
)


class IIDMaskSampler:
    """Stand-in corruption: mask each letter with probability ``rate`` (weight 1/rate).

    The masked letter's boundary, diacritic and punctuation inputs are set to UNKNOWN;
    all four channel heads and the capitalization head are supervised there.
    """

    def __init__(self, rate: float = 0.15) -> None:
        self.rate = rate

    def __call__(self, example: Any, rng: np.random.Generator) -> CorruptedExample:
        letters = np.asarray(example.letters, dtype=np.int64)
        n = letters.shape[0]
        lacuna = getattr(example, "lacuna", None)
        masked: np.ndarray = np.asarray(rng.random(n) < self.rate, dtype=bool)
        if lacuna is not None:
            masked &= ~np.asarray(lacuna, dtype=bool)
        known = letters < A.N_ALPHA
        masked &= known

        def target(values: Any, unknown: int) -> np.ndarray:
            v = np.asarray(values, dtype=np.int64)
            return np.where(masked & (v != unknown), v, IGNORE)

        inputs = np.where(masked, A.MASK_ID, letters)
        bnd = np.where(masked, A.BND_UNKNOWN, np.asarray(example.boundary, dtype=np.int64))
        dia = np.where(masked, A.DIA_UNKNOWN, np.asarray(example.diacritics, dtype=np.int64))
        punct = np.where(masked, A.PUNCT_UNKNOWN, np.asarray(example.punctuation, dtype=np.int64))
        return CorruptedExample(
            input_ids=inputs,
            boundary=bnd,
            dia=dia,
            punct=punct,
            char_target=np.where(masked, letters, IGNORE),
            char_weight=np.where(masked, 1.0 / self.rate, 0.0).astype(np.float32),
            bnd_target=target(example.boundary, A.BND_UNKNOWN),
            dia_target=target(example.diacritics, A.DIA_UNKNOWN),
            punct_target=target(example.punctuation, A.PUNCT_UNKNOWN),
            cap_target=target(example.capitals, A.CAP_UNKNOWN),
            pattern="iid",
            rate=self.rate,
        )


Sampler = Callable[[Any, np.random.Generator], Any]


def make_example(planes: Any) -> Example:
    """Wrap a ``CharPlanes`` slice as the sampler's input example."""
    return Example.from_planes(planes)


def make_sampler(kind: str = "published") -> Sampler:
    """The corruption sampler: ``published`` (``pretrain.corruption``) or ``iid``."""
    if kind == "iid":
        return IIDMaskSampler()
    return CorruptionSampler(NoiseConfig())
