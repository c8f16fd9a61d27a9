"""Cut long texts into pieces that tile them, so that a document of any length is annotated in
bounded memory.

The encoder keeps the hidden states of every layer for every letter of a Doc
((depth + 1) x letters x width floats: about 20 GB for a million letters with the default
backbone), and the parser and restorer work on whole Docs, so ``annotate`` never builds a
Doc longer than ``max_chars`` characters: longer records are cut after a sentence end (else
at whitespace, else hard), each piece is annotated as its own Doc, and the pieces' records
are merged back (:func:`~.convert.merge_records`). ``"".join(pieces) == text`` always.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from ..textnorm import sentence_spans

_SPACE = re.compile(r"\s+")


def split_text(text: str, max_chars: int) -> list[str]:
    """Pieces of at most ``max_chars`` characters that concatenate to ``text``."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    if len(text) <= max_chars:
        return [text]
    ends = sorted(b for _a, b in sentence_spans(text))
    spaces = [m.end() for m in _SPACE.finditer(text)]
    pieces: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        limit = start + max_chars
        k = bisect_right(ends, limit) - 1  # prefer a sentence end in the second half of the window
        if k >= 0 and ends[k] - start >= max_chars // 2:
            cut = ends[k]
            while cut < limit and text[cut].isspace():  # the space after the sentence stays with it
                cut += 1
        else:
            k = bisect_right(spaces, limit) - 1
            cut = spaces[k] if k >= 0 and spaces[k] > start else limit
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces
