"""Input validation shared by encode and canonicalize."""

from __future__ import annotations

import numpy as np

from stoicheia_spacy.errors import InvalidTextError


def _check_type(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidTextError(f"expected str, got {type(text).__name__}")
    return text


def _surrogate_error(text: str, exc: UnicodeEncodeError) -> InvalidTextError:
    return InvalidTextError(f"lone surrogate U+{ord(text[exc.start]):04X} at offset {exc.start}")


def validate_text(text: object) -> str:
    """Return ``text`` if it is a str without NUL characters or lone surrogates,
    else raise :class:`InvalidTextError` (naming the offending offset)."""
    codepoints(text)
    return text  # type: ignore[return-value]


def codepoints(text: object) -> np.ndarray:
    """The code points of ``text`` as a uint32 array (index = str index), after the
    checks of :func:`validate_text`."""
    text = _check_type(text)
    try:
        raw = text.encode("utf-32-le")
    except UnicodeEncodeError as exc:
        raise _surrogate_error(text, exc) from None
    cps = np.frombuffer(raw, dtype=np.uint32)
    if "\x00" in text:
        raise InvalidTextError(f"NUL character at offset {text.index(chr(0))}")
    return cps
