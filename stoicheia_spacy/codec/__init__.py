"""The five-plane codec of the released Stoicheia format (pure Python + numpy).

``encode_planes(text)`` turns any Greek text into :class:`CharPlanes` (one entry per
Greek letter: letters, boundary, diacritics, capitals, punctuation + offsets into
the text); ``decode_planes(planes)`` renders planes as NFC polytonic text;
``canonicalize(text)`` is the spelling that round-trips.  Importing this package
never imports torch.

Conventions (documented in the modules): elision and prodelision are written U+2019;
the encoder records the source's marks (``CharPlanes.elided``/``prodelided``) and
planes without that record re-derive elision by a rule (:func:`elision_mask`); a period and ``;``/``?``/``!`` end a
sentence; MASK renders as U+25CC ``◌``, BLANK/PAD as nothing.
"""

from __future__ import annotations

from .canonical import canonicalize
from .decode import decode_planes, elision_mask
from .encode import Encoding, encode_detailed, encode_planes, unmodelled_offsets
from .planes import PLANE_NAMES, UNKNOWN_IDS, CharPlanes, sentence_spans, word_spans
from .tables import ELISION, MASK_PLACEHOLDER, PUNCT_OUT, SENTENCE_END_PUNCT

__all__ = [
    "CharPlanes",
    "ELISION",
    "Encoding",
    "MASK_PLACEHOLDER",
    "PLANE_NAMES",
    "PUNCT_OUT",
    "SENTENCE_END_PUNCT",
    "UNKNOWN_IDS",
    "canonicalize",
    "decode_planes",
    "elision_mask",
    "encode_detailed",
    "encode_planes",
    "sentence_spans",
    "unmodelled_offsets",
    "word_spans",
]
