"""Render a :class:`GappedText` back to Leiden markup, with restorations filled in.

Canonical notation written for gaps without a restoration:

* ``lacuna`` and stripped ``restored`` gaps: ``[---]`` (unknown width), ``[.N]``,
  ``[ca. N]`` (approximate), ``[N±M]`` (symmetric range), ``[A-B]`` /
  ``[ca. A-B]`` (other ranges);
* Ithaca gaps: ``-`` x N (``lost``) and ``?`` x N (``target``);
* ``lines`` gaps: the DDbDP tag ``|gap=N_lines|`` / ``|gap=unknown_lines|``.

A gap with a restoration is written ``[restoration]``. Spans are written back with
their brackets (``⟦ ⟧ { } ⟨ ⟩ ( )``), uncertain letters with a dot below, line
breaks as ``|``, tags as ``|body|``; so ``parse_gaps(render_restorations(g, {}))``
gives back the same text, gaps and spans as ``g`` (source offsets aside).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Final

from stoicheia_spacy.errors import InvalidTextError
from stoicheia_spacy.leiden.model import (
    ADDED,
    CORRECTION,
    ERASED,
    EXPANSION,
    INSERTION,
    IRREGULAR,
    LINE_BREAK,
    LINES,
    LOST,
    QUERY,
    RESTORED,
    SUPERFLUOUS,
    TAG,
    TARGET,
    UNCERTAIN,
    Gap,
    GappedText,
    Notation,
)
from stoicheia_spacy.textcheck import validate_text

__all__ = ["format_gap", "format_gap_tag", "render_restorations"]

_BRACKETS: Final[dict[str, tuple[str, str]]] = {
    RESTORED: ("[", "]"),
    ERASED: ("⟦", "⟧"),
    SUPERFLUOUS: ("{", "}"),
    ADDED: ("⟨", "⟩"),
    EXPANSION: ("(", ")"),
    INSERTION: ("\\", "/"),
    CORRECTION: ("@^inline^", "@"),
}
_MARKERS: Final[dict[str, str]] = {LINE_BREAK: "|", QUERY: "?", IRREGULAR: "*"}
#: characters a restoration may not contain (they would be read back as markup)
_MARKUP = re.compile(r"[\[\]⟦⟧〚〛{}⟨⟩〈〉<>()|/\\?\-.…*@\u0323]")
_LETTER = re.compile(r"([^\W\d_])")


def format_gap(gap: Gap) -> str:
    """Canonical markup of a gap without a restoration."""
    if gap.kind == LOST:
        return "-" * gap.min_width
    if gap.kind == TARGET:
        return "?" * gap.min_width
    if gap.kind == LINES:
        return f"|gap={'unknown' if gap.lines is None else gap.lines}_lines|"
    low, high = gap.min_width, gap.max_width
    if high is None:
        return "[---]"
    prefix = "ca. " if gap.approximate else ""
    if low == high:
        return f"[{prefix}{low}]" if gap.approximate else f"[.{low}]"
    if not gap.approximate and (low + high) % 2 == 0:
        return f"[{(low + high) // 2}±{(high - low) // 2}]"
    return f"[{prefix}{low}-{high}]"


def _restoration_list(
    gapped: GappedText, restorations: Mapping[int, str] | Sequence[str | None]
) -> list[str | None]:
    n = len(gapped.gaps)
    out: list[str | None] = [None] * n
    items: list[tuple[object, str | None]]
    if isinstance(restorations, Mapping):
        items = list(restorations.items())
    elif isinstance(restorations, str):
        raise InvalidTextError("restorations must be a mapping or a sequence, not a str")
    else:
        if len(restorations) != n:
            raise InvalidTextError(
                f"{len(restorations)} restorations given for {n} gaps (use None to keep a gap)"
            )
        items = list(enumerate(restorations))
    for index, value in items:
        if not isinstance(index, int) or not 0 <= index < n:
            raise InvalidTextError(f"restoration for gap {index!r}, but there are {n} gaps")
        if value is None:
            continue
        validate_text(value, what=f"restoration {index}")
        bad = _MARKUP.search(value)
        if bad is not None:
            raise InvalidTextError(
                f"restoration {index} contains markup character {bad.group()!r} at offset {bad.start()}"
            )
        out[index] = value
    return out


def render_restorations(
    gapped: GappedText,
    restorations: Mapping[int, str] | Sequence[str | None] | None = None,
    *,
    notation: Notation = "leiden",
) -> str:
    """Leiden markup of ``gapped`` with gap ``i`` filled by ``restorations[i]`` as ``[text]``.

    ``restorations`` maps gap indices to text (missing / None = keep the gap, written
    in canonical notation, see :func:`format_gap`) or is a sequence aligned with
    ``gapped.gaps``. With ``notation="ddbdp"`` gaps are written as DDbDP tags
    (``|gap=N|``, ``|gap=A-B|``, ``|gap=unknown|``), to be read back with
    ``parse_gaps(..., notation="ddbdp")``. A gap inside a restoration is written as dots (``[αβ..]``) or
    dashes (unknown width), or by closing and reopening the bracket when its width
    cannot be written that way. Raises :class:`~stoicheia_spacy.errors.InvalidTextError`
    for an index out of range, a sequence of the wrong length, or a restoration
    containing markup characters.
    """
    fills = _restoration_list(gapped, {} if restorations is None else restorations)
    # Events at one cleaned-text position are written in input order (source offset):
    # an opening bracket precedes its contents, a closing one follows them.
    events: list[tuple[int, int, int, str, str]] = []
    uncertain: list[tuple[int, int]] = []
    for order, span in enumerate(gapped.spans):
        if span.kind == UNCERTAIN:
            uncertain.append((span.start, span.end))
        elif span.kind in _BRACKETS:
            opener, closer = _BRACKETS[span.kind]
            events.append((span.start, span.source_start, order, "open", opener))
            events.append((span.end, span.source_end - 1, order, "close", closer))
        elif span.kind == TAG:
            events.append((span.start, span.source_start, order, "mark", f"|{span.note or ''}|"))
        elif span.kind in _MARKERS:
            events.append((span.start, span.source_start, order, "mark", _MARKERS[span.kind]))
    base = len(gapped.spans)
    for index, gap in enumerate(gapped.gaps):
        events.append((gap.start, gap.source_start, base + index, "gap", str(index)))
    events.sort(key=lambda item: (item[0], item[1], item[2]))

    dotted = _merge(uncertain, len(gapped.text))
    dotted_starts = [low for low, _ in dotted]
    text = gapped.text
    out: list[str] = []
    cursor = 0
    in_square = False
    for position, _, _, action, payload in events:
        if position > cursor:
            out.append(_text_chunk(text, cursor, position, dotted, dotted_starts))
            cursor = position
        if action == "gap":
            index = int(payload)
            out.append(_gap_markup(gapped.gaps[index], fills[index], in_square, notation))
            continue
        if payload == "[":
            in_square = action == "open"
        elif payload == "]":
            in_square = False
        out.append(payload)
    out.append(_text_chunk(text, cursor, len(text), dotted, dotted_starts))
    return "".join(out)


def _gap_markup(gap: Gap, fill: str | None, in_square: bool, notation: Notation) -> str:
    if fill is not None:
        return fill if in_square else f"[{fill}]"
    if notation == "ddbdp":
        return format_gap_tag(gap)
    if not in_square:
        return format_gap(gap)
    if gap.kind not in (LOST, TARGET, LINES) and not gap.approximate:
        if gap.max_width is None:
            return "---"
        if gap.max_width == gap.min_width:
            return "." * gap.min_width
    return f"]{format_gap(gap)}["


def format_gap_tag(gap: Gap) -> str:
    """DDbDP tag of a gap: ``|gap=N|``, ``|gap=A-B|``, ``|gap=unknown|``, ``|gap=N_lines|``."""
    if gap.kind == LINES:
        return f"|gap={'unknown' if gap.lines is None else gap.lines}_lines|"
    if gap.max_width is None:
        return "|gap=unknown|"
    if gap.max_width == gap.min_width:
        return f"|gap={gap.min_width}|"
    return f"|gap={gap.min_width}-{gap.max_width}|"


def _merge(edges: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """Merged, sorted uncertain intervals."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(edges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, min(end, length)))
    return merged


def _text_chunk(
    text: str, start: int, end: int, dotted: list[tuple[int, int]], starts: list[int]
) -> str:
    """``text[start:end]`` with a dot below after each letter of an uncertain interval."""
    if not dotted:
        return text[start:end]
    parts: list[str] = []
    cursor = start
    index = max(bisect_right(starts, start) - 1, 0)
    while index < len(dotted) and dotted[index][0] < end:
        low, high = dotted[index]
        index += 1
        if high <= cursor:
            continue
        low, high = max(low, cursor), min(high, end)
        parts.append(text[cursor:low])
        parts.append(_LETTER.sub("\\1\u0323", text[low:high]))
        cursor = high
    parts.append(text[cursor:end])
    return "".join(parts)
