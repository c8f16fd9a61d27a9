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
    """A date distribution in years (negative = BCE): ``mean``, the point estimate (what
    ``estimator`` names: the ``"weighted median"`` of the most similar dated papyri,
    :mod:`stoicheia_spacy.date.text`, or the ``"ridge mean"`` of the pooled states), the ``level``
    interval ``low``..``high``, and ``histogram``: ``(bin_start, probability)`` pairs of 25-year
    bins (:data:`stoicheia_spacy.date.dating.BIN_YEARS`) with non-zero mass.

    ``applicable`` is False when the text lies outside what the dater was fitted on (``reason``
    says why: it reads as literary, not documentary, or it is too short); then the interval and
    histogram are widened to the span of the dated training papyri, and ``str()`` says that no
    date is given. ``documentary``: the register model's probability that the text is documentary
    (None: the fit has no register model). ``widened``: the factor by which the interval of a short
text was widened (1.0: not). ``to_dict()`` names the point estimate by its estimator
    (``"weighted_median"``)."""

    mean: float
    low: float
    high: float
    level: float
    histogram: tuple[tuple[int, float], ...]
    estimator: str = "weighted median"
    applicable: bool = True
    reason: str | None = None
    documentary: float | None = None
    widened: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "histogram", tuple((int(s), float(p)) for s, p in self.histogram))

    @property
    def key(self) -> str:
        """The JSON key of the point estimate: the estimator's name (``weighted_median``)."""
        return self.estimator.replace(" ", "_")

    def to_dict(self) -> dict[str, Any]:
        data = Record.to_dict(self)
        data[self.key] = data.pop("mean")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DateEstimate:
        data = dict(data)
        key = str(data.get("estimator", "weighted median")).replace(" ", "_")
        if "mean" not in data and key in data:
            data["mean"] = data.pop(key)
        return super(DateEstimate, cls).from_dict(data)

    def __str__(self) -> str:
        if not self.applicable:
            return (f"no date: {self.reason} (the dated papyri it was fitted on span "
                    f"{_year(self.low)} – {_year(self.high)})")
        wider = f", widened x{self.widened:.1f} for a short text" if self.widened > 1.0 else ""
        return f"{_year(self.mean)} ({self.level:.0%} interval {_year(self.low)} – {_year(self.high)}{wider})"


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
