"""Gap widths: how a gap of L characters is split into letters and word breaks.

The paper's protocol counts spaces: a gap of width L is filled by L characters,
letters and spaces. The model has positions only for letters (a space is the
boundary plane of the letter before it), so a gap of L characters holding ``k``
letters holds ``L - k`` word breaks. The breaks fall on *break slots*: between two
gap letters (``k - 1`` slots), before the first gap letter when the gap touches a
letter on its left (``left_open``) and after the last one when it touches a letter
on its right (``right_open``); a slot holds at most one space. We enumerate every
feasible ``k`` with at most ``ceil(space_ratio * L)`` spaces (a Greek word averages
5–6 letters, so the default 0.25 admits every plausible word division).

Widths that are not one number: a range ``[N±M]`` / ``[A-B]`` enumerates its widths
(ranked by the mean log-probability per character, the published protocol); an
unknown width ``[---]`` is decoded with elastic slots (see :mod:`.beam`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import DecodingError

__all__ = ["Template", "letter_counts", "templates_for"]


@dataclass(frozen=True)
class Template:
    """One decoding layout of a gap: ``slots`` MASK positions.

    Fixed width: ``width`` characters = ``slots`` letters + ``width - slots`` breaks.
    Elastic (``width is None``): ``slots`` positions, each a letter or BLANK (BLANKs
    only at the end); breaks are then placed where the boundary head says so.
    """

    slots: int
    width: int | None

    @property
    def elastic(self) -> bool:
        return self.width is None

    @property
    def spaces(self) -> int:
        return 0 if self.width is None else self.width - self.slots


def letter_counts(width: int, left_open: bool, right_open: bool, space_ratio: float = 0.25) -> list[int]:
    """Feasible letter counts ``k`` for a gap of ``width`` characters (largest first)."""
    if width < 1:
        raise DecodingError(f"gap width must be >= 1, got {width}")
    max_spaces = math.ceil(space_ratio * width)
    out = []
    for k in range(width, 0, -1):
        spaces = width - k
        if spaces > max_spaces:
            break
        if spaces <= (k - 1) + int(left_open) + int(right_open):
            out.append(k)
    return out


def templates_for(
    widths: list[int] | None,
    left_open: bool,
    right_open: bool,
    *,
    space_ratio: float = 0.25,
    elastic_slots: int = 12,
) -> list[Template]:
    """The templates of a gap: every (width, k) pair, or one elastic template when
    ``widths`` is None (unknown width)."""
    if widths is None:
        if elastic_slots < 1:
            raise DecodingError("elastic_slots must be >= 1")
        return [Template(elastic_slots, None)]
    out = [Template(k, w) for w in widths for k in letter_counts(w, left_open, right_open, space_ratio)]
    if not out:
        raise DecodingError(f"no feasible letter count for widths {widths}")
    return out
