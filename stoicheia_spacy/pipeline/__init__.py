"""spaCy pipeline components of stoicheia-spacy (registered through the ``spacy_factories``
entry points; see :mod:`stoicheia_spacy.registrations`)."""

from __future__ import annotations

from . import serialize as _serialize  # noqa: F401  (msgpack encoders: Docs can leave the process)
from .encoder import StoicheiaEncoderPipe, make_stoicheia_encoder

__all__ = ["StoicheiaEncoderPipe", "make_stoicheia_encoder"]
