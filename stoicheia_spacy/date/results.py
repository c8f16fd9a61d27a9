"""The dater's and the attributor's results: ``doc._.date`` is a :class:`DateEstimate`,
``doc._.genre`` and ``doc._.dialect`` are :class:`LabelEstimate` s (None: a Doc without
letters). Both are frozen; ``to_dict()`` gives JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..records import Record, record

__all__ = ["DateEstimate", "LabelEstimate"]


def _year(value: float) -> str:
    year = int(round(value))
    return f"{-year} BCE" if year < 0 else f"{year} CE"


@record
@dataclass(frozen=True, slots=True)
class DateEstimate(Record):
    """A date distribution in years (negative = BCE): ``mean``, the point estimate (the ridge
    mean, or the weighted median of :mod:`stoicheia_spacy.date.text`), the ``level`` interval
    ``low``..``high``, and ``histogram``: ``(bin_start, probability)`` pairs of 25-year bins
    (:data:`stoicheia_spacy.date.dating.BIN_YEARS`) with non-zero mass."""

    mean: float
    low: float
    high: float
    level: float
    histogram: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "histogram", tuple((int(s), float(p)) for s, p in self.histogram))

    def __str__(self) -> str:
        return f"{_year(self.mean)} ({self.level:.0%} interval {_year(self.low)} – {_year(self.high)})"


@record
@dataclass(frozen=True, slots=True)
class LabelEstimate(Record):
    """The most probable ``label``, its ``probability`` and all calibrated ``probabilities``
    (label -> probability)."""

    label: str
    probability: float
    probabilities: Mapping[str, float]

    def __post_init__(self) -> None:
        items: Iterable[Any] = self.probabilities.items() if isinstance(self.probabilities, Mapping) \
            else self.probabilities
        object.__setattr__(self, "probabilities", {str(k): float(v) for k, v in items})

    def __str__(self) -> str:
        return f"{self.label} ({self.probability:.0%})"
