"""Morphosyntax heads on the Stoicheia encoder: factored AGDT tagging with decoding
constrained to attested tags, edit-script lemmatisation and a Dozat-Manning biaffine
parser (torch modules wrapped for thinc), the spaCy factories (:mod:`.morphologizer`,
:mod:`.lemmatizer`, :mod:`.parser`), the AGDT tag inventory and CoNLL-U writing."""

from __future__ import annotations

from ..heads import TokenHeads, build_torch_head, ensure_torch_head, torch_module
from .biaffine import BiaffineScorer
from .constrained import attested_ids, constrained_decode
from .ud import UPOS_TAGS, XPOS_GROUPS, tag_to_ud

__all__ = [
    "BiaffineScorer", "TokenHeads", "UPOS_TAGS", "XPOS_GROUPS", "attested_ids", "build_torch_head",
    "constrained_decode", "ensure_torch_head", "tag_to_ud", "torch_module",
]
