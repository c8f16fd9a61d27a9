"""The registered Thinc architectures (the ``spacy_architectures`` entry points all point here):

- ``stoicheia.CharEncoder.v1`` (:mod:`.encoder`), ``stoicheia.StoicheiaListener.v1``
  (:mod:`.listener`), ``stoicheia.WordPooler.v1`` (:mod:`.pooler`),
  ``stoicheia.BackboneReference.v1`` (:mod:`.reference`), ``stoicheia.BackboneLoader.v1``
  (misc, :mod:`.loader`);
- ``stoicheia.TokenHeads.v1`` and ``stoicheia.BiaffineParser.v1`` (:mod:`.morphosyntax`);
- ``stoicheia.ScannerHeads.v1`` (:mod:`.scanner`);
- ``stoicheia.WordFeatures.v1`` (backbone vectors + form embeddings, :mod:`.word_features`);
- ``stoicheia.ReleasedWordPooler.v1`` (:mod:`.released_pooler`).
"""

from __future__ import annotations

from .encoder import build_char_encoder, doc_inputs, set_backbone_weights, torch_backbone
from .gaps import MAX_GAP_WIDTH, UNKNOWN_GAP_WIDTH, GapRun, encode_text
from .listener import StoicheiaListener, build_stoicheia_listener
from .loader import create_backbone_loader
from .pooler import build_word_pooler
from .reference import BackboneReference, build_backbone_reference
from .types import StoicheiaDocData
from .word_features import build_word_features

__all__ = [
    "MAX_GAP_WIDTH",
    "UNKNOWN_GAP_WIDTH",
    "BackboneReference",
    "GapRun",
    "StoicheiaDocData",
    "StoicheiaListener",
    "build_backbone_reference",
    "build_char_encoder",
    "build_stoicheia_listener",
    "build_word_features",
    "build_word_pooler",
    "create_backbone_loader",
    "doc_inputs",
    "encode_text",
    "set_backbone_weights",
    "torch_backbone",
]
