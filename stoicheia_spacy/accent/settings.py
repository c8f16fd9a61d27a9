"""The accentuator's settings: one validated, frozen object, registered as a config block.

``[components.stoicheia_accentuator.settings]`` (``@misc = "stoicheia.AccentuatorSettings.v1"``)
holds the plane modes of :class:`~stoicheia_spacy.accent.accentuator.StoicheiaAccentuator`:
``boundary`` [auto | keep | predict | copy | drop], ``diacritics``, ``punctuation`` and
``capitals`` [keep | predict | copy | drop; ``unknown`` is read as ``drop``], ``lowercase``
[false] and ``orthography`` [true] (see :mod:`stoicheia_spacy.accent.predict`); ``candidates`` [5]:
how many of each restored gap's candidates get an accented form (``Candidate.accented``, set by
the restorer's accenting service, :mod:`stoicheia_spacy.restore.accented`; 0: none). spaCy fills
the defaults and checks the types, :class:`~stoicheia_spacy.accent.predict.PlaneControl`
the values; the object is the pipe's plane control. A changed setting is a new object
(:meth:`AccentuatorSettings.replace`). Saved pipelines keep the settings in ``config.cfg``
only; the lexicon pin is a data file of the component folder (``lexicon.json``).
Adding an option touches this class and the code that uses it, nothing else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from spacy.util import registry

from ..errors import ConfigError
from .predict import PlaneControl


@dataclasses.dataclass(frozen=True)
class AccentuatorSettings(PlaneControl):
    """The accentuator's plane modes (defaults: word division ``auto``, capitals kept)."""

    boundary: str = "auto"
    diacritics: str = "keep"
    punctuation: str = "keep"
    capitals: str = "keep"
    lowercase: bool = False
    orthography: bool = True
    candidates: int = 5

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int) or self.candidates < 0:
            raise ConfigError(f"stoicheia_accentuator candidates must be an integer >= 0, got {self.candidates!r}")
        for name in ("lowercase", "orthography"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"stoicheia_accentuator {name} must be true or false, got {getattr(self, name)!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, cfg: Mapping[str, Any]) -> AccentuatorSettings:
        """Settings from a mapping; unknown names raise :class:`ConfigError`."""
        unknown = sorted(set(cfg) - set(cls.names()))
        if unknown:
            raise ConfigError(f"unknown stoicheia_accentuator options {unknown}; choose from {list(cls.names())}")
        return cls(**cfg)

    def replace(self, **changes: Any) -> AccentuatorSettings:
        """A new validated object with ``changes`` (unknown names raise ``ConfigError``)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ConfigError(f"unknown stoicheia_accentuator options {unknown}; choose from {list(self.names())}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}


#: The ``[components.stoicheia_accentuator.settings]`` block.
accentuator_settings = registry.misc.register("stoicheia.AccentuatorSettings.v1", func=AccentuatorSettings)

__all__ = ["AccentuatorSettings", "accentuator_settings"]
