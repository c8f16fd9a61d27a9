"""Thinc architectures of the Stoicheia backbone (registered on import)."""

from __future__ import annotations

from .encoder import build_char_encoder, set_backbone_weights, torch_backbone
from .listener import StoicheiaListener, build_stoicheia_listener
from .loader import create_backbone_loader
from .pooler import build_word_pooler
from .types import StoicheiaDocData

__all__ = [
    "StoicheiaDocData",
    "StoicheiaListener",
    "build_char_encoder",
    "build_stoicheia_listener",
    "build_word_pooler",
    "create_backbone_loader",
    "set_backbone_weights",
    "torch_backbone",
]
