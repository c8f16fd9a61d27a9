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
    "chu_liu_edmonds": "stoicheia_spacy.morph.mst",
    "load_meters": "stoicheia_spacy.scan.meters",
    "gated_decode": "stoicheia_spacy.scan.viterbi",
    "detect_meter": "stoicheia_spacy.scan.viterbi",
    "StoicheiaDocData": "stoicheia_spacy.encoder.types",
    "StoicheiaListener": "stoicheia_spacy.encoder.listener",
    "StoicheiaEncoderPipe": "stoicheia_spacy.encoder.pipe",
    "parse_gaps": "stoicheia_spacy.leiden",
    "render_restorations": "stoicheia_spacy.leiden",
    "GappedText": "stoicheia_spacy.leiden",
    "Gap": "stoicheia_spacy.leiden",
    "read_epidoc": "stoicheia_spacy.leiden",
    "write_epidoc": "stoicheia_spacy.leiden",
    "restore_epidoc": "stoicheia_spacy.restore.epidoc",
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
    from .encoder.listener import StoicheiaListener
    from .encoder.pipe import StoicheiaEncoderPipe
    from .encoder.types import StoicheiaDocData
    from .leiden import (
        Gap,
        GappedText,
        Span,
        parse_gaps,
        read_epidoc,
        render_restorations,
        write_epidoc,
    )
    from .morph.mst import chu_liu_edmonds
    from .provenance import which_model
    from .restore.epidoc import restore_epidoc
    from .scan.meters import load_meters
    from .scan.viterbi import detect_meter, gated_decode
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
