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

Widths that are not one number: a range ``[N±M]`` / ``[A-B]`` enumerates its widths;
an unknown width ``[---]`` enumerates letter counts ``k = 1..max_letters`` with free word
breaks (``unknown="enumerate"``, the default) or uses ``elastic_slots`` slots that may end
in BLANK (``unknown="elastic"``, the pretraining objective). Candidates of different widths
are ranked with a width prior (see :class:`WidthPrior` and :mod:`.beam`).

Bounded cost: a gap whose smallest candidate width exceeds ``max_width`` is not decoded
(:func:`too_wide`); the pipe reports it as ``status = "too_wide"``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import DecodingError

__all__ = ["MAX_WIDTH", "Template", "WidthPrior", "letter_counts", "templates_for", "too_wide"]

#: Default cap on a decoded gap (characters): wider gaps are reported, not restored.
MAX_WIDTH = 64


@dataclass(frozen=True)
class Template:
    """One decoding layout of a gap: ``slots`` MASK positions.

    Fixed width: ``width`` characters = ``slots`` letters + ``width - slots`` breaks.
    Free width (``width is None``): ``slots`` letters, word breaks wherever the boundary
    head puts them; with ``blank`` (elastic) each slot is a letter or BLANK (BLANKs only
    at the end).
    """

    slots: int
    width: int | None
    blank: bool = False

    @property
    def elastic(self) -> bool:
        return self.blank

    @property
    def free(self) -> bool:
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


def too_wide(widths: tuple[int, ...] | list[int] | None, max_width: int) -> bool:
    """True when even the narrowest candidate width exceeds ``max_width``."""
    return widths is not None and min(widths) > max_width


def templates_for(
    widths: list[int] | None,
    left_open: bool,
    right_open: bool,
    *,
    space_ratio: float = 0.25,
    elastic_slots: int = 12,
    unknown: str = "enumerate",
    max_letters: int = 10,
    max_width: int = MAX_WIDTH,
) -> list[Template]:
    """The templates of a gap: every (width, k) pair (widths above ``max_width`` dropped);
    for an unknown width (``widths`` None) one free template per letter count
    ``1..max_letters`` (``unknown="enumerate"``) or one elastic template."""
    if widths is None:
        if unknown == "elastic":
            if elastic_slots < 1:
                raise DecodingError("elastic_slots must be >= 1")
            return [Template(elastic_slots, None, blank=True)]
        if unknown != "enumerate":
            raise DecodingError(f"unknown must be 'enumerate' or 'elastic', got {unknown!r}")
        if not 1 <= max_letters <= max_width:
            raise DecodingError(f"max_letters must be in 1..{max_width}, got {max_letters}")
        return [Template(k, None) for k in range(1, max_letters + 1)]
    if too_wide(widths, max_width):
        raise DecodingError(f"gap of width {min(widths)} exceeds the maximum of {max_width} characters")
    widths = [w for w in widths if w <= max_width]
    out = [Template(k, w) for w in widths for k in letter_counts(w, left_open, right_open, space_ratio)]
    if not out:
        raise DecodingError(f"no feasible letter count for widths {widths}")
    return out


@dataclass(frozen=True)
class WidthPrior:
    """How candidates of different widths are ranked against each other.

    ``key = logprob + length_bonus * width + log_prior[width]`` (``rank="total"``) or
    ``key = (logprob + length_bonus * width) / width + log_prior[width]`` (``rank="mean"``,
    the published rule for ranges when both extras are zero). ``log_prior`` holds
    log-probabilities of widths ``1..len(log_prior)`` (fitted on dev gap widths); widths
    beyond it get the last value. Candidates of one known width are ranked the same way by
    either rule.
    """

    rank: str = "total"
    length_bonus: float = 0.0
    log_prior: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.rank not in ("total", "mean"):
            raise DecodingError(f"rank must be 'total' or 'mean', got {self.rank!r}")

    def prior(self, width: int) -> float:
        if not self.log_prior:
            return 0.0
        return float(self.log_prior[min(width, len(self.log_prior)) - 1])

    def key(self, logprob: float, width: int) -> float:
        adjusted = logprob + self.length_bonus * width
        if self.rank == "mean":
            adjusted /= max(width, 1)
        return adjusted + self.prior(width)

    @classmethod
    def fit(cls, widths: list[int], *, rank: str = "total", length_bonus: float = 0.0,
            max_width: int = 10, smoothing: float = 1.0) -> WidthPrior:
        """Add-``smoothing`` relative frequencies of the dev gaps' widths ``1..max_width``."""
        counts = [smoothing] * max_width
        for w in widths:
            if 1 <= w <= max_width:
                counts[w - 1] += 1
        total = sum(counts)
        return cls(rank, length_bonus, tuple(math.log(c / total) for c in counts))
