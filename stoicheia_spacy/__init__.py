"""stoicheia-spacy: the Stoicheia character-level masked-diffusion encoder for
Ancient Greek, as a spaCy toolkit.

Importing the package is cheap: the codec and the Leiden parser are pure Python
and numpy; torch and spaCy load only when a name that needs them is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it (imported lazily, PEP 562)
_EXPORTS: dict[str, str] = {
    "CharPlanes": "stoicheia_spacy.codec",
    "encode_planes": "stoicheia_spacy.codec",
    "decode_planes": "stoicheia_spacy.codec",
    "canonicalize": "stoicheia_spacy.codec",
    "parse_gaps": "stoicheia_spacy.leiden",
    "render_restorations": "stoicheia_spacy.leiden",
    "GappedText": "stoicheia_spacy.leiden",
    "Gap": "stoicheia_spacy.leiden",
    "StoicheiaConfig": "stoicheia_spacy.backbone",
    "StoicheiaEncoder": "stoicheia_spacy.backbone",
    "load_backbone": "stoicheia_spacy.backbone",
    "save_backbone": "stoicheia_spacy.backbone",
}

__all__ = sorted(_EXPORTS) + ["__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from .backbone import StoicheiaConfig, StoicheiaEncoder, load_backbone, save_backbone
    from .codec import CharPlanes, canonicalize, decode_planes, encode_planes
    from .leiden import Gap, GappedText, parse_gaps, render_restorations


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stoicheia_spacy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
