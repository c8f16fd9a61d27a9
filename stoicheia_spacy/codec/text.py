"""Input validation shared by encode and canonicalize (see :mod:`stoicheia_spacy.textcheck`)."""

from __future__ import annotations

import numpy as np

from stoicheia_spacy.textcheck import validate_text

__all__ = ["codepoints", "validate_text"]


def codepoints(text: object) -> np.ndarray:
    """The code points of ``text`` as a uint32 array (index = str index), after the
    checks of :func:`validate_text`."""
    validate_text(text)
    assert isinstance(text, str)
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
