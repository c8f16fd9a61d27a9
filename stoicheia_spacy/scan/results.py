"""The scanner's results, one shape whatever the decoder (``decode = "lattice"`` or ``"research"``).

* ``doc._.macrons``: a list of :class:`Macron`, one per dichronon (the ambiguous α ι υ);
* ``span._.scansion`` of each verse (``doc._.verses``): a :class:`Scansion`;
* ``span._.meter`` of each verse: a :class:`Meter`, or None (no syllables, or no metre loaded).

A field one decoder does not produce keeps its empty default (``synizesis`` is the lattice's;
``labels``, ``bracketed`` and ``macronized`` of a :class:`Scansion` come from both, the lattice
writing its own quantities in the research strings' notation). All are frozen;
``to_dict()`` gives JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..records import Record, record

__all__ = ["Macron", "Meter", "Scansion"]


@record
@dataclass(frozen=True, slots=True)
class Macron(Record):
    """One dichronon: its character ``offset`` in ``doc.text``, ``p_long`` (the calibrated
    probability that it is long), ``length`` (1 long, 0 short, None: abstained), the metre's
    vote ``metre`` (+1 long, -1 short, 0 none) and ``metre_margin`` (the nats by which the metre
    holds that weight; 20 where it forces it)."""

    offset: int
    p_long: float
    length: int | None
    metre: int = 0
    metre_margin: float = 0.0


@record
@dataclass(frozen=True, slots=True)
class Scansion(Record):
    """One verse: its ``syllables`` (text; the lattice shows them per word, ``πον | ὃς``), ``pattern`` (the quantities: ``–`` heavy, ``⏑``
    light; the research decode's H/L/V labels as its metrical pattern), the ``decoder`` that
    made it, ``synizesis`` (rule-syllable indices ``k`` merged with ``k + 1``), and in the research
    tools' notation ``labels`` (per letter: 0 none, 1 heavy ends, 2 light ends, 3 verse ends),
    ``bracketed`` (the ``--scan`` string) and ``macronized`` (the ``--macronize`` string)."""

    syllables: tuple[str, ...]
    pattern: str
    decoder: str
    synizesis: tuple[int, ...] = ()
    labels: tuple[int, ...] = ()
    bracketed: str | None = None
    macronized: str | None = None


@record
@dataclass(frozen=True, slots=True)
class Meter(Record):
    """The metre of one verse: ``name`` (the metre, or None when none fits), ``cost`` (nats per
    syllable for the lattice, per letter for the research gate; None: no path), ``used`` (its
    path decided the weights), the ``decoder``; the lattice's ``synizesis``; the research
    decode's ``forced`` (the metre was given), ``labels``, ``pattern`` (H/L/V), ``bracketed``,
    ``costs`` (the gate statistic of every grammar) and ``auto`` (the detected metre's decision
    when the metre was forced)."""

    name: str | None
    cost: float | None
    used: bool
    decoder: str
    synizesis: tuple[int, ...] = ()
    forced: bool = False
    labels: tuple[int, ...] = ()
    pattern: str = ""
    bracketed: str | None = None
    costs: Mapping[str, float | None] = field(default_factory=dict)
    auto: Meter | None = None

    def to_dict(self) -> dict[str, Any]:
        out = Record.to_dict(self)
        out["costs"] = dict(self.costs)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Meter:
        auto = data.get("auto")
        return cls(name=data.get("name"), cost=data.get("cost"), used=bool(data["used"]), decoder=str(data["decoder"]),
                   synizesis=tuple(data.get("synizesis", ())), forced=bool(data.get("forced", False)),
                   labels=tuple(data.get("labels", ())), pattern=str(data.get("pattern", "")),
                   bracketed=data.get("bracketed"), costs=dict(data.get("costs") or {}),
                   auto=auto if auto is None or isinstance(auto, Meter) else Meter.from_dict(auto))
