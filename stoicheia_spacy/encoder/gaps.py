"""Text -> the planes the backbone reads: Leiden / Ithaca gaps become MASK letters.

:func:`encode_text` is the one route from a Doc's text to model input (the
``stoicheia_encoder`` pipe, its listeners' initialization and the accentuator all use
it). With ``notation`` ``"leiden"`` (default) or ``"ddbdp"`` the text is read once with
:func:`stoicheia_spacy.leiden.parse_gaps`; every gap is fed as MASK letters whose other
planes are UNKNOWN:

* width: the gap's width when known; the rounded middle of a range (``[5-8]`` → 6);
  :data:`UNKNOWN_GAP_WIDTH` letters (a placeholder) when unknown (``[---]``, lost lines);
* at most :data:`MAX_GAP_WIDTH` letters: a wider gap (``[ca. 100000]``) is fed with that
  many MASK letters and flagged ``too_wide``, so no markup can make the forward huge;
* a word end after the gap's last letter when whitespace follows the markup.

Offsets: a text letter's ``offsets`` entry is its index in the text; MASK letters have
-1 and are found through the :class:`GapRun` list (``source_start``/``source_end`` span
the markup in the text). Text whose markup does not parse (e.g. an unbalanced ``(`` in
prose) is encoded as plain text: no gaps, and the parser's message is returned
(documented fallback; the pipe never raises on it).

``hide_unmarked`` (default in the pipe): a plane the text does not mark is fed as
UNKNOWN, so that the backbone's heads predict it (what the accentuator decodes): the
diacritics when no letter carries one; the punctuation when the text has neither a
diacritic nor a punctuation mark; the word division when it has neither a diacritic
nor a word break. Edited polytonic text (any diacritic) is fed exactly as written.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from ..alphabet import (
    BND_SENT_END,
    BND_UNKNOWN,
    BND_WORD_END,
    CAP_LOWER,
    DIA_UNKNOWN,
    MASK_ID,
    PUNCT_NONE,
    PUNCT_UNKNOWN,
)
from ..codec import CharPlanes, encode_planes
from ..errors import ConfigError, LeidenSyntaxError
from ..leiden import parse_gaps
from ..leiden.render import format_gap, format_gap_tag

if TYPE_CHECKING:  # pragma: no cover
    from ..codec import CharPlanes
    from ..leiden import Gap

#: MASK letters fed for a gap of unknown width (``[---]``, ``|gap=unknown|``, lost lines).
UNKNOWN_GAP_WIDTH = 5
#: The most MASK letters one gap is fed with; wider gaps are capped and flagged ``too_wide``.
MAX_GAP_WIDTH = 128
#: Markup notations :func:`encode_text` reads (``None``: plain text, brackets are text).
NOTATIONS: tuple[str | None, ...] = ("leiden", "ddbdp", None)


@dataclass(frozen=True)
class GapRun:
    """A gap of the text as fed to the backbone.

    ``index`` is its index in ``parse_gaps(text).gaps``; ``start``/``width`` the MASK
    letters ``planes[start:start + width]``; ``markup`` its canonical notation
    (``[.4]``, ``[---]``, ``|gap=4|``); ``source_start``/``source_end`` the span of its
    markup in the text; ``gap`` the parsed :class:`~stoicheia_spacy.leiden.Gap`;
    ``too_wide`` is True when the gap was wider than :data:`MAX_GAP_WIDTH`.
    """

    index: int
    start: int
    width: int
    markup: str
    source_start: int
    source_end: int
    gap: Gap | None = None
    too_wide: bool = False

    @property
    def letters(self) -> slice:
        """The gap's MASK letters in the planes."""
        return slice(self.start, self.start + self.width)


def gap_width(gap: Gap, unknown_width: int = UNKNOWN_GAP_WIDTH, max_width: int = MAX_GAP_WIDTH) -> tuple[int, bool]:
    """(MASK letters fed for ``gap``, whether it was capped); see the module doc."""
    if gap.max_width is None:
        width = unknown_width
    else:
        width = round((gap.min_width + gap.max_width) / 2)
    width = max(1, width)
    return min(width, max_width), width > max_width


def encode_text(
    text: str,
    *,
    notation: str | None = "leiden",
    unknown_width: int = UNKNOWN_GAP_WIDTH,
    max_width: int = MAX_GAP_WIDTH,
    strict: bool = False,
) -> tuple[CharPlanes, list[GapRun], str | None]:
    """(planes with gaps as MASK letters, the gaps, the markup error or None); see the
    module doc. ``strict`` raises ``LeidenSyntaxError`` instead of the plain-text fallback."""
    if notation not in NOTATIONS:
        raise ConfigError(f"notation must be one of {list(NOTATIONS)}, got {notation!r}")
    if not 1 <= unknown_width <= max_width:
        raise ConfigError(f"need 1 <= unknown_width <= max_width, got {unknown_width} and {max_width}")
    if notation is None:
        return encode_planes(text), [], None

    try:
        gapped = parse_gaps(text, notation=notation)  # type: ignore[arg-type]
    except LeidenSyntaxError as exc:
        if strict:
            raise
        return encode_planes(text), [], str(exc)
    planes = encode_planes(gapped.text)
    planes.offsets[:] = np.where(planes.offsets >= 0, gapped.source_offsets[np.maximum(planes.offsets, 0)], -1)
    if not gapped.gaps:
        return planes, [], None
    n = len(planes)
    cuts = np.searchsorted(planes.offsets, [g.source_start for g in gapped.gaps], side="left")
    sized = [gap_width(g, unknown_width, max_width) for g in gapped.gaps]
    widths = np.array([w for w, _ in sized], dtype=np.int64)
    if n and cuts[-1] == n:  # a gap after the last letter: that letter is no longer the text's end
        planes.boundary[-1] = BND_UNKNOWN
    at = np.repeat(cuts, widths)
    fill = {"letters": MASK_ID, "boundary": BND_UNKNOWN, "diacritics": DIA_UNKNOWN,
            "capitals": CAP_LOWER, "punctuation": PUNCT_UNKNOWN}
    arrays = {name: np.insert(getattr(planes, name), at, value).astype(np.uint8) for name, value in fill.items()}
    elided = None if planes.elided is None else np.insert(planes.elided, at, False)
    out = CharPlanes(**arrays, offsets=np.insert(planes.offsets, at, -1), elided=elided)
    starts = cuts + np.concatenate([[0], np.cumsum(widths)[:-1]])
    spaced = np.array([g.source_end < len(text) and text[g.source_end].isspace() for g in gapped.gaps])
    out.boundary[(starts + widths - 1)[spaced]] = BND_WORD_END
    fmt = format_gap_tag if notation == "ddbdp" else format_gap
    runs = [GapRun(i, int(st), int(w), fmt(g), g.source_start, g.source_end, g, capped)
            for i, (g, st, w, (_, capped)) in enumerate(zip(gapped.gaps, starts, widths, sized, strict=True))]
    return out, runs, None


def hide_unmarked(planes: CharPlanes) -> CharPlanes:
    """The planes fed to the backbone: those the text does not mark become UNKNOWN
    (see the module doc); gap letters are UNKNOWN already. Returns ``planes`` itself
    when nothing is hidden."""
    text_letters = planes.letters != MASK_ID
    if not text_letters.any():
        return planes
    dia = planes.diacritics[text_letters]
    has_dia = bool(((dia != 0) & (dia != DIA_UNKNOWN)).any())
    if has_dia:
        return planes
    punct = planes.punctuation[text_letters]
    has_punct = bool(((punct != PUNCT_NONE) & (punct != PUNCT_UNKNOWN)).any())
    bnd = planes.boundary[text_letters][:-1]
    has_breaks = bool(((bnd == BND_WORD_END) | (bnd == BND_SENT_END)).any())
    out = planes.copy()
    out.diacritics[text_letters] = DIA_UNKNOWN
    if not has_punct:
        out.punctuation[text_letters] = PUNCT_UNKNOWN
    if not has_breaks:
        out.boundary[text_letters] = BND_UNKNOWN
    return out


def select_letters(planes: CharPlanes, keep: np.ndarray) -> CharPlanes:
    """The letters of ``planes`` where ``keep`` is True (e.g. ``~data.gap_letters``: the text's own)."""
    arrays: dict[str, Any] = {f.name: getattr(planes, f.name) for f in fields(planes)}
    selected: dict[str, Any] = {k: (None if v is None else np.asarray(v)[keep]) for k, v in arrays.items()}
    return CharPlanes(**selected)


def alignment_offsets(planes: CharPlanes, gaps: list[GapRun]) -> np.ndarray:
    """Offsets of every letter for token alignment: a gap's MASK letters take the
    offset of the start of its markup (so they belong to the token holding it)."""
    offsets = np.asarray(planes.offsets, dtype=np.int64).copy()
    for run in gaps:
        offsets[run.letters] = run.source_start
    return offsets


__all__ = ["MAX_GAP_WIDTH", "NOTATIONS", "UNKNOWN_GAP_WIDTH", "GapRun", "alignment_offsets", "encode_text",
           "gap_width", "hide_unmarked", "select_letters"]
