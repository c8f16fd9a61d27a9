"""Align codec letter positions to spaCy tokens through ``CharPlanes.offsets``."""

from __future__ import annotations

import numpy as np
from spacy.attrs import IDX
from spacy.tokens import Doc


def align_letters(doc: Doc, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (letter_token, token_lengths) for the letters at ``offsets`` of ``doc.text``.

    A Greek letter is never whitespace, so every letter lies inside exactly one token:
    the last token that starts at or before it. Letters come out in token order.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    if len(doc) == 0:
        if offsets.size:
            raise ValueError("letters were found in a Doc without tokens")
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = doc.to_array(IDX).astype(np.int64)
    letter_token = np.searchsorted(starts, offsets, side="right") - 1
    if letter_token.size and (letter_token[0] < 0 or np.any(np.diff(letter_token) < 0)):
        raise ValueError("letter offsets are not increasing inside the Doc text")
    token_lengths = np.bincount(letter_token, minlength=len(doc)).astype(np.int64)
    return letter_token, token_lengths
