"""Shared validation of input text, used by the codec and the Leiden parser.

A text is accepted when it is a ``str`` without NUL characters and without lone
surrogates (code points U+D800..U+DFFF, which Python allows in ``str`` but which
cannot be encoded as UTF-8). Everything else (any script, any combining mark,
right-to-left text) is accepted: what a component does with it is its own business.
"""

from __future__ import annotations

import re

from stoicheia_spacy.errors import InvalidTextError

__all__ = ["validate_text"]

# One C-level scan over the string; no Python loop over characters.
_BAD = re.compile("[\x00\ud800-\udfff]")


def validate_text(text: object, *, what: str = "text") -> None:
    """Raise :class:`InvalidTextError` unless ``text`` is a str free of NUL bytes and lone surrogates.

    The error message names the offending offset (and the error has an ``offset``
    attribute, -1 for a wrong type).
    """
    if not isinstance(text, str):
        raise InvalidTextError(f"{what} must be a str (expected str, got {type(text).__name__})")
    match = _BAD.search(text)
    if match is None:
        return
    offset = match.start()
    char = match.group()
    reason = "NUL character" if char == "\x00" else f"lone surrogate U+{ord(char):04X}"
    raise InvalidTextError(f"{what} contains a {reason} at offset {offset}", offset)
