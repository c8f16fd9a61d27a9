"""Minimal masked-letter + masked-plane corruption for the auxiliary diffusion loss.

This is NOT the published corruption sampler (that lives in the repository tool
``pretrain/corruption.py``, which the package must not import): it is iid masking at one
rate per Doc, enough to keep the backbone's output heads alive while the task heads
fine-tune it (:mod:`stoicheia_spacy.encoder.diffusion`).

* masked letters: each known letter is hidden with probability ``t`` (``t`` drawn per Doc
  from U(``min_rate``, ``max_rate``)): letter -> MASK, its boundary / diacritics /
  punctuation -> UNKNOWN; targets: the letter and its three planes;
* masked planes: with probability ``plane_rate`` per Doc a whole plane (diacritics,
  boundary or punctuation, chosen uniformly) is hidden on every letter: the stripped-text
  setting of accentuation and word division; targets: that plane's values.

Targets are -100 where nothing is scored (letters and planes the text did not know,
e.g. Leiden gap letters or a text without diacritics).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..alphabet import BND_UNKNOWN, DIA_UNKNOWN, MASK_ID, N_ALPHA, PUNCT_UNKNOWN
from ..codec import CharPlanes
from ..errors import ConfigError

IGNORE = -100
#: target name -> (CharPlanes field, UNKNOWN id)
PLANES: dict[str, tuple[str, int]] = {
    "boundary": ("boundary", BND_UNKNOWN),
    "dia": ("diacritics", DIA_UNKNOWN),
    "punct": ("punctuation", PUNCT_UNKNOWN),
}


@dataclass
class Corrupted:
    """Corrupted inputs and per-letter targets (int64, ``IGNORE`` = unscored) of one Doc."""

    inputs: CharPlanes
    targets: dict[str, np.ndarray]


def corrupt_planes(planes: CharPlanes, rng: np.random.Generator, *, min_rate: float = 0.15,
                   max_rate: float = 0.5, plane_rate: float = 0.3) -> Corrupted:
    """Mask letters iid at a per-Doc rate and, sometimes, one whole plane (see the module doc)."""
    if not 0.0 < min_rate <= max_rate <= 1.0 or not 0.0 <= plane_rate <= 1.0:
        raise ConfigError(f"need 0 < min_rate <= max_rate <= 1 and 0 <= plane_rate <= 1, got "
                          f"{min_rate}, {max_rate}, {plane_rate}")
    n = len(planes.letters)
    known = planes.letters < N_ALPHA
    rate = rng.uniform(min_rate, max_rate)
    masked = known & (rng.random(n) < rate)
    if known.any() and not masked.any():
        masked[rng.choice(np.flatnonzero(known))] = True
    letters = planes.letters.copy()
    letters[masked] = MASK_ID
    fields = {field: getattr(planes, field).copy() for field, _ in PLANES.values()}
    targets = {"char": np.where(masked, planes.letters.astype(np.int64), IGNORE)}
    hidden_plane = rng.choice(list(PLANES)) if rng.random() < plane_rate else None
    for name, (field, unknown) in PLANES.items():
        gold = getattr(planes, field).astype(np.int64)
        hide = masked | (known if name == hidden_plane else False)
        scored = hide & known & (gold != unknown)
        targets[name] = np.where(scored, gold, IGNORE)
        fields[field][hide] = unknown
    inputs = replace(planes, letters=letters, **fields)
    return Corrupted(inputs, targets)


__all__ = ["IGNORE", "PLANES", "Corrupted", "corrupt_planes"]
