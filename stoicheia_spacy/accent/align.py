"""Character alignment between a source text and the text rendered from its planes.

The accentuator renders new text (accents, spaces, punctuation inserted), so a Doc built
from it needs a map back to what the user typed.  :class:`Alignment` holds both directions:

* ``rendered_to_source[i]``: for rendered character ``i``, the offset in the source of the
  base character of the same Greek letter, or -1 for characters the model inserted
  (spaces, punctuation, elision marks).  A letter's combining marks map like its base.
* ``source_to_rendered[j]``: for source character ``j``, the offset of the rendered base
  character of the same letter, or -1 when ``j`` is not part of a modelled letter
  (spaces, punctuation, brackets, Latin...; they are not rendered).

Letters correspond in order: letter ``k`` of the planes is letter ``k`` of the rendered text
(MASK letters are matched to the ``◌`` placeholders, BLANK letters render as nothing and
map nowhere).  Computed with numpy over whole strings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..alphabet import MASK_ID, N_ALPHA
from ..codec import MASK_PLACEHOLDER, CharPlanes, encode_planes
from ..codec.tables import KIND_MARK, KIND_XMARK, TABLE_SIZE, codepoint_tables
from ..codec.text import codepoints
from ..errors import InvalidPlanesError


@dataclass(frozen=True)
class Alignment:
    """Both directions of a source <-> rendered character alignment (see module doc)."""

    rendered_to_source: np.ndarray
    source_to_rendered: np.ndarray

    def source_span(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest source span covering the letters of rendered ``[start, end)``
        (None when those characters have no source, e.g. inserted punctuation)."""
        part = self.rendered_to_source[start:end]
        part = part[part >= 0]
        if not len(part):
            return None
        return int(part.min()), int(part.max()) + 1

    def to_dict(self) -> dict[str, list[int]]:
        """JSON-friendly form."""
        return {"rendered_to_source": self.rendered_to_source.tolist(),
                "source_to_rendered": self.source_to_rendered.tolist()}


def cluster_owner(text: str) -> np.ndarray:
    """Per character, the offset of the base character it belongs to (combining marks
    belong to the character before them; a leading orphan mark owns itself)."""
    cps = codepoints(text)
    if not len(cps):
        return np.zeros(0, np.int64)
    kind = codepoint_tables().kind[np.minimum(cps, TABLE_SIZE - 1)]
    is_mark = (kind == KIND_MARK) | (kind == KIND_XMARK)
    idx = np.where(is_mark, -1, np.arange(len(cps)))
    owner = np.maximum.accumulate(idx)
    return np.where(owner < 0, np.arange(len(cps)), owner).astype(np.int64)


def _placeholders(text: str, mask_char: str) -> np.ndarray:
    cps = codepoints(text)
    return np.flatnonzero(cps == ord(mask_char)).astype(np.int64)


def rendered_letter_offsets(planes: CharPlanes, rendered: str, *, mask_char: str = MASK_PLACEHOLDER) -> np.ndarray:
    """Offset in ``rendered`` of every letter of ``planes`` (-1 for BLANK/PAD)."""
    out = np.full(len(planes), -1, np.int64)
    real = planes.letters < N_ALPHA
    masks = planes.letters == MASK_ID
    got = encode_planes(rendered).offsets
    holes = _placeholders(rendered, mask_char)
    if len(got) != int(real.sum()) or len(holes) < int(masks.sum()):
        raise InvalidPlanesError(
            f"rendered text has {len(got)} letters and {len(holes)} placeholders, planes "
            f"{int(real.sum())} letters and {int(masks.sum())} MASK")
    out[real] = got
    out[masks] = holes[: int(masks.sum())]
    return out


def align(source: str, planes: CharPlanes, rendered: str, *, mask_char: str = MASK_PLACEHOLDER) -> Alignment:
    """Align ``source`` (whose letters sit at ``planes.offsets``) with ``rendered``
    (the text decoded from planes with the same letters)."""
    r_letters = rendered_letter_offsets(planes, rendered, mask_char=mask_char)
    s_letters = planes.offsets
    ok = (r_letters >= 0) & (s_letters >= 0)
    r_owner = cluster_owner(rendered)
    s_owner = cluster_owner(source)
    base_r = np.full(len(rendered), -1, np.int64)
    base_r[r_letters[ok]] = s_letters[ok]
    base_s = np.full(len(source), -1, np.int64)
    base_s[s_letters[ok]] = r_letters[ok]
    r2s = base_r[r_owner] if len(rendered) else base_r
    s2r = base_s[s_owner] if len(source) else base_s
    return Alignment(r2s, s2r)
