"""The bridge between encoded planes and the corruption sampler.

The published sampler lives in ``pretrain.corruption`` (``NoiseConfig``, ``Example``,
``CorruptionSampler``). ``make_sampler`` returns it when that module is present, and
otherwise ``IIDMaskSampler``: 15 % independent masking with the same output fields,
so the loop runs (and is tested) without it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from stoicheia_spacy import alphabet as A

log = logging.getLogger(__name__)

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


class CorruptedLike(Protocol):
    """What the loop reads from a corrupted example (``pretrain.corruption.CorruptedExample``)."""

    input_ids: np.ndarray
    boundary: np.ndarray
    dia: np.ndarray
    punct: np.ndarray
    char_target: np.ndarray
    char_weight: np.ndarray
    bnd_target: np.ndarray
    dia_target: np.ndarray
    punct_target: np.ndarray
    cap_target: np.ndarray


@dataclass
class PlainExample:
    """Uncorrupted planes of one window (the fields of ``pretrain.corruption.Example``)."""

    letters: np.ndarray
    boundary: np.ndarray
    diacritics: np.ndarray
    capitals: np.ndarray
    punctuation: np.ndarray
    lacuna: np.ndarray | None = None


@dataclass
class SimpleCorrupted:
    """Output of ``IIDMaskSampler``; same fields as the published sampler's output."""

    input_ids: np.ndarray
    boundary: np.ndarray
    dia: np.ndarray
    punct: np.ndarray
    char_target: np.ndarray
    char_weight: np.ndarray
    bnd_target: np.ndarray
    dia_target: np.ndarray
    punct_target: np.ndarray
    cap_target: np.ndarray
    pattern: str = "iid"
    rate: float = 0.15


class IIDMaskSampler:
    """Stand-in corruption: mask each letter with probability ``rate`` (weight 1/rate).

    The masked letter's boundary, diacritic and punctuation inputs are set to UNKNOWN;
    all four channel heads and the capitalization head are supervised there.
    """

    def __init__(self, rate: float = 0.15) -> None:
        self.rate = rate

    def __call__(self, example: Any, rng: np.random.Generator) -> SimpleCorrupted:
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
        return SimpleCorrupted(
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
            rate=self.rate,
        )


Sampler = Callable[[Any, np.random.Generator], Any]


def make_example(planes: Any) -> Any:
    """Wrap a ``CharPlanes`` slice as the sampler's input example."""
    try:
        from pretrain.corruption import Example
    except ImportError:
        return PlainExample(
            planes.letters, planes.boundary, planes.diacritics, planes.capitals, planes.punctuation
        )
    return Example.from_planes(planes)


def make_sampler(kind: str = "published") -> Sampler:
    """The corruption sampler: ``published`` (``pretrain.corruption``) or ``iid``."""
    if kind == "iid":
        return IIDMaskSampler()
    try:
        from pretrain.corruption import CorruptionSampler, NoiseConfig
    except ImportError:
        log.warning("pretrain.corruption is not available: using the 15%% iid stand-in sampler")
        return IIDMaskSampler()
    return CorruptionSampler(NoiseConfig())
