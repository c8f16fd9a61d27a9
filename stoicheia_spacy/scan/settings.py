"""The scanner's settings: one validated, frozen object, registered as a config block.

``[components.stoicheia_scanner.settings]`` (``@misc = "stoicheia.ScannerSettings.v1"``)
holds every option of :class:`~stoicheia_spacy.scan.scanner.ScannerPipe`; spaCy fills
the defaults and checks the types, :meth:`ScannerSettings.__post_init__` the values. The
pipe reads the fields of this one object; a changed setting is a new object
(:meth:`ScannerSettings.replace`, or :meth:`ScannerPipe.configure`). Saved pipelines keep
their settings in ``config.cfg`` only; the scanner's data (heads, metres, macron
calibration, the lexicon pin) are files of its folder.
Adding an option touches this class and the code that uses it, nothing else.

Options (defaults in brackets): ``theta`` [0.1] nats per letter of the metre gate,
``abstain_below`` [0] (macron probabilities whose max is below it leave the vowel
unmarked), ``temperature`` [1] of the macron head, ``rule_eps`` [0.02], ``meters`` [null:
all] names to restrict detection to, ``synizesis_cost`` [1] nats per merge,
``correption_eps`` [0.2], ``decode`` [lattice | research] and ``meter`` [null] (the
verse's forced metre under either decode: a research grammar ``hex``, ``penta``, ``ia6`` …, a
corpus or lattice metre name, or ``elegiac``, whose verses alternate hexameter and pentameter).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from spacy.util import registry

from ..errors import ConfigError
from .research import METER_NAMES, grammar_name

#: Scanner decoders: ours (rule syllables + metre lattice) and the released model's research decode.
DECODERS = ("lattice", "research")


@dataclasses.dataclass(frozen=True)
class ScannerSettings:
    """Every option of the scanner (see the module doc), validated once."""

    theta: float = 0.1
    abstain_below: float = 0.0
    temperature: float = 1.0
    rule_eps: float = 0.02
    meters: Sequence[str] | None = None  # a tuple once validated
    synizesis_cost: float = 1.0
    correption_eps: float = 0.2
    decode: str = "lattice"
    meter: str | None = None

    def __post_init__(self) -> None:
        if self.meters is not None:
            if isinstance(self.meters, str):
                raise ConfigError(f"stoicheia_scanner meters must be a list of names or null, got {self.meters!r}")
            object.__setattr__(self, "meters", tuple(str(m) for m in self.meters))
        for name in ("theta", "abstain_below", "temperature", "rule_eps", "synizesis_cost", "correption_eps"):
            try:
                object.__setattr__(self, name, float(getattr(self, name)))
            except (TypeError, ValueError):
                raise ConfigError(f"stoicheia_scanner {name} must be a number, got {getattr(self, name)!r}") from None
        if self.temperature <= 0:
            raise ConfigError(f"stoicheia_scanner temperature must be > 0, got {self.temperature}")
        if self.abstain_below < 0:
            raise ConfigError(f"stoicheia_scanner abstain_below must be >= 0, got {self.abstain_below}")
        for name in ("rule_eps", "correption_eps"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ConfigError(f"stoicheia_scanner {name} must lie in (0, 1), got {getattr(self, name)}")
        if self.synizesis_cost < 0:
            raise ConfigError(f"stoicheia_scanner synizesis_cost must be >= 0, got {self.synizesis_cost}")
        if self.decode not in DECODERS:
            raise ConfigError(f"stoicheia_scanner decode must be one of {list(DECODERS)}, got {self.decode!r}")
        if self.meter is not None:
            if grammar_name(str(self.meter)) is None:
                raise ConfigError(f"stoicheia_scanner meter {self.meter!r} is not a research metre; expected one of "
                                  f"{sorted(METER_NAMES)}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, strict: bool = True) -> ScannerSettings:
        """Settings from a mapping (``strict``: unknown names raise, else they are ignored)."""
        unknown = set(values) - set(cls.names())
        if unknown and strict:
            raise ConfigError(f"unknown stoicheia_scanner options: {sorted(unknown)}; choose from {list(cls.names())}")
        return cls(**{k: v for k, v in values.items() if k in cls.names()})

    def replace(self, **changes: Any) -> ScannerSettings:
        """A new validated object with ``changes`` (unknown names raise ``ConfigError``)."""
        unknown = set(changes) - set(self.names())
        if unknown:
            raise ConfigError(f"unknown stoicheia_scanner options: {sorted(unknown)}; choose from {list(self.names())}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (what the config block holds)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["meters"] = None if self.meters is None else list(self.meters)
        return out


#: The ``[components.stoicheia_scanner.settings]`` block.
scanner_settings = registry.misc.register("stoicheia.ScannerSettings.v1", func=ScannerSettings)

__all__ = ["DECODERS", "ScannerSettings", "scanner_settings"]
