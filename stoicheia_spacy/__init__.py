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
    "word_spans": "stoicheia_spacy.codec",
    "sentence_spans": "stoicheia_spacy.codec",
    "unmodelled_offsets": "stoicheia_spacy.codec",
    "elision_mask": "stoicheia_spacy.codec",
    "validate_text": "stoicheia_spacy.textcheck",
    "Span": "stoicheia_spacy.leiden",
    "iter_records": "stoicheia_spacy.corpus",
    "chu_liu_edmonds": "stoicheia_spacy.decoders",
    "load_meters": "stoicheia_spacy.decoders",
    "gated_decode": "stoicheia_spacy.decoders",
    "detect_meter": "stoicheia_spacy.decoders",
    "StoicheiaDocData": "stoicheia_spacy.models",
    "StoicheiaListener": "stoicheia_spacy.models",
    "StoicheiaEncoderPipe": "stoicheia_spacy.pipeline",
    "parse_gaps": "stoicheia_spacy.leiden",
    "render_restorations": "stoicheia_spacy.leiden",
    "GappedText": "stoicheia_spacy.leiden",
    "Gap": "stoicheia_spacy.leiden",
    "read_epidoc": "stoicheia_spacy.leiden",
    "write_epidoc": "stoicheia_spacy.leiden",
    "restore_epidoc": "stoicheia_spacy.leiden",
    "StoicheiaConfig": "stoicheia_spacy.backbone",
    "StoicheiaEncoder": "stoicheia_spacy.backbone",
    "load_backbone": "stoicheia_spacy.backbone",
    "save_backbone": "stoicheia_spacy.backbone",
    "which_model": "stoicheia_spacy.provenance",
}

__all__ = [
    "CharPlanes",
    "Gap",
    "GappedText",
    "Span",
    "StoicheiaConfig",
    "StoicheiaDocData",
    "StoicheiaEncoder",
    "StoicheiaEncoderPipe",
    "StoicheiaListener",
    "canonicalize",
    "chu_liu_edmonds",
    "decode_planes",
    "detect_meter",
    "elision_mask",
    "encode_planes",
    "gated_decode",
    "iter_records",
    "load_backbone",
    "load_meters",
    "parse_gaps",
    "read_epidoc",
    "render_restorations",
    "restore_epidoc",
    "save_backbone",
    "sentence_spans",
    "unmodelled_offsets",
    "validate_text",
    "which_model",
    "word_spans",
    "write_epidoc",
    "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from .backbone import StoicheiaConfig, StoicheiaEncoder, load_backbone, save_backbone
    from .codec import (
        CharPlanes,
        canonicalize,
        decode_planes,
        elision_mask,
        encode_planes,
        sentence_spans,
        unmodelled_offsets,
        word_spans,
    )
    from .corpus import iter_records
    from .decoders import chu_liu_edmonds, detect_meter, gated_decode, load_meters
    from .leiden import (
        Gap,
        GappedText,
        Span,
        parse_gaps,
        read_epidoc,
        render_restorations,
        restore_epidoc,
        write_epidoc,
    )
    from .models import StoicheiaDocData, StoicheiaListener
    from .pipeline import StoicheiaEncoderPipe
    from .provenance import which_model
    from .textcheck import validate_text


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stoicheia_spacy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
