"""AGDT <-> UD glue for the morphologizer: the output groups of the tagging heads and
the UD UPOS/FEATS of a predicted AGDT tag (the mapping itself is
:mod:`stoicheia_spacy.morph.agdt_to_ud`)."""

from __future__ import annotations

from .agdt_tags import N_CLASSES, XPOS_ALPHABETS
from .agdt_to_ud import UPOS_TAGS, agdt_to_feats, agdt_to_upos

#: Class counts of the nine factored XPOS heads (pos, person, ..., degree).
XPOS_GROUPS: tuple[int, ...] = N_CLASSES
#: Output groups of the morphologizer head: UPOS first, then the nine XPOS positions.
MORPH_GROUPS: tuple[int, ...] = (len(UPOS_TAGS), *N_CLASSES)

__all__ = ["MORPH_GROUPS", "UPOS_TAGS", "XPOS_ALPHABETS", "XPOS_GROUPS", "tag_to_ud"]


def tag_to_ud(tag: str, lemma: str = "") -> tuple[str, str]:
    """(UPOS, FEATS) of an AGDT tag (``FEATS`` is ``""`` when empty, as spaCy writes it)."""
    feats = agdt_to_feats(tag)
    return agdt_to_upos(tag, lemma), "" if feats == "_" else feats
