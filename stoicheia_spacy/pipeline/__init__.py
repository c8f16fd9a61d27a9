"""spaCy pipeline components of stoicheia-spacy (factories register on import)."""

from __future__ import annotations

from .. import models as _models  # noqa: F401  (registers the architectures the factories use)
from .encoder import StoicheiaEncoderPipe, make_stoicheia_encoder

__all__ = ["StoicheiaEncoderPipe", "make_stoicheia_encoder"]
