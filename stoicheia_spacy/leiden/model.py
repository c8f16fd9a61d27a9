"""Data classes of a parsed Leiden / Ithaca text.

Representation (the contract downstream code relies on):

* ``GappedText.text`` is the *cleaned* text: markup removed, every kept character
  unchanged (no normalisation), restorations and bracketed contents kept.
* A gap occupies **no** characters in ``text``: ``Gap.start`` is its insertion
  point (0..len(text)); several gaps may share one insertion point, in input order.
* ``GappedText.source_offsets`` (int64, ``len(text) + 1``) maps each cleaned-text
  index to the index of that character in the input; the last entry is ``len(input)``.
* Gaps and spans also carry ``source_start/source_end``: the span of their markup
  in the input.
* Flags that cover text (restored, uncertain, erased...) are :class:`Span` objects
  with half-open ``[start, end)`` offsets in the cleaned text; zero-width markers
  (line breaks, editorial queries, DDbDP tags) are zero-width spans.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

#: The markup a text is written in (``epidoc``: TEI XML, read by :mod:`.epidoc`).
Notation = Literal["leiden", "ddbdp", "epidoc"]

__all__ = [
    "GAP_KINDS",
    "SPAN_KINDS",
    "Gap",
    "GappedText",
    "Restoration",
    "Span",
]

# --- gap kinds ---------------------------------------------------------------
#: ``[---]``, ``[.5]``, ``[ca. 5]``, ``[5±3]``, ``[....]``, DDbDP ``|gap=N|``.
LACUNA: Final = "lacuna"
#: Ithaca ``-``: a lost letter that is context, not a restoration target.
LOST: Final = "lost"
#: Ithaca ``?``: a letter to restore.
TARGET: Final = "target"
#: DDbDP ``|gap=N_lines|`` / ``|gap=unknown_lines|``: whole lines lost (width in letters unknown).
LINES: Final = "lines"
#: An editorial restoration hidden by ``strip_restorations`` (``Gap.gold`` holds its text).
RESTORED_GAP: Final = "restored"
GAP_KINDS: Final = (LACUNA, LOST, TARGET, LINES, RESTORED_GAP)

# --- span kinds --------------------------------------------------------------
RESTORED: Final = "restored"  # [αβγ]
UNCERTAIN: Final = "uncertain"  # letters with a dot below
ERASED: Final = "erased"  # ⟦ ⟧
SUPERFLUOUS: Final = "superfluous"  # { }
ADDED: Final = "added"  # ⟨ ⟩ or < >
EXPANSION: Final = "expansion"  # ( ) abbreviation expansion
INSERTION: Final = "insertion"  # DDbDP \ / (interlinear addition)
CORRECTION: Final = "correction"  # DDbDP @^inline^ ... @
LINE_BREAK: Final = "line_break"  # | or / (zero width)
QUERY: Final = "query"  # ? inside brackets (zero width)
TAG: Final = "tag"  # DDbDP |num=..| |digit=..| |vac=..| |extra| (zero width, ``note`` = tag body)
IRREGULAR: Final = "irregular"  # DDbDP * (zero width)
SPAN_KINDS: Final = (
    RESTORED,
    UNCERTAIN,
    ERASED,
    SUPERFLUOUS,
    ADDED,
    EXPANSION,
    INSERTION,
    CORRECTION,
    LINE_BREAK,
    QUERY,
    TAG,
    IRREGULAR,
)


@dataclass(frozen=True)
class Gap:
    """A lacuna at insertion point ``start`` of the cleaned text.

    ``min_width``/``max_width`` count letters (for ``restored`` gaps: characters of
    the hidden restoration, spaces included); ``max_width`` is None when unknown.
    ``approximate`` is True for ``ca.``/``c.`` widths; ``lines`` is the number of
    lost lines of a ``lines`` gap (None when unknown); ``gold`` is the hidden text of
    a ``restored`` gap.
    """

    start: int
    min_width: int
    max_width: int | None
    kind: str
    source_start: int
    source_end: int
    approximate: bool = False
    lines: int | None = None
    gold: str | None = None

    @property
    def known_width(self) -> bool:
        """True when the width is a single known number."""
        return self.max_width is not None and self.max_width == self.min_width

    def widths(self, limit: int | None = None) -> range:
        """Candidate widths ``min..max``; an unknown maximum is replaced by ``limit``."""
        high = self.max_width if self.max_width is not None else limit
        if high is None:
            raise ValueError("gap of unknown width: pass limit=")
        return range(self.min_width, max(high, self.min_width) + 1)


@dataclass(frozen=True)
class Span:
    """A flagged stretch ``[start, end)`` of the cleaned text (zero width for markers)."""

    start: int
    end: int
    kind: str
    source_start: int
    source_end: int
    note: str | None = None

    def __len__(self) -> int:
        return self.end - self.start


#: An editorial restoration is a :class:`Span` of kind ``"restored"``.
Restoration = Span


@dataclass(frozen=True, eq=False)
class GappedText:
    """A cleaned text with its gaps, flagged spans and a map back to the input."""

    text: str
    gaps: list[Gap]
    source_offsets: np.ndarray
    spans: list[Span] = field(default_factory=list)

    def __post_init__(self) -> None:
        offsets = np.asarray(self.source_offsets, dtype=np.int64)
        if offsets.shape != (len(self.text) + 1,):
            raise ValueError(
                f"source_offsets must have len(text) + 1 = {len(self.text) + 1} entries, "
                f"not {offsets.shape}"
            )
        object.__setattr__(self, "source_offsets", offsets)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GappedText):
            return NotImplemented
        return (
            self.text == other.text
            and self.gaps == other.gaps
            and self.spans == other.spans
            and np.array_equal(self.source_offsets, other.source_offsets)
        )

    __hash__ = None  # type: ignore[assignment]

    # --- views ---------------------------------------------------------------
    def spans_of(self, *kinds: str) -> list[Span]:
        """The spans of the given kinds, in text order."""
        return [span for span in self.spans if span.kind in kinds]

    @property
    def restorations(self) -> list[Span]:
        """Editorial restorations ``[αβγ]`` (spans of kind ``restored``)."""
        return self.spans_of(RESTORED)

    @property
    def line_breaks(self) -> np.ndarray:
        """Cleaned-text positions before which a line break was marked (int64)."""
        return np.fromiter(
            (span.start for span in self.spans if span.kind == LINE_BREAK), dtype=np.int64
        )

    def gap_spans(self) -> np.ndarray:
        """Gaps as an int64 array of rows ``(start, min_width, max_width)``; -1 = unknown max."""
        out = np.empty((len(self.gaps), 3), dtype=np.int64)
        for row, gap in enumerate(self.gaps):
            out[row] = (gap.start, gap.min_width, -1 if gap.max_width is None else gap.max_width)
        return out

    def mask(self, *kinds: str) -> np.ndarray:
        """Boolean array over ``text``: True where a span of one of ``kinds`` covers the character."""
        delta = np.zeros(len(self.text) + 1, dtype=np.int64)
        for span in self.spans:
            if span.kind in kinds and span.end > span.start:
                delta[span.start] += 1
                delta[span.end] -= 1
        return np.cumsum(delta[:-1]) > 0

    # --- transformations -----------------------------------------------------
    def strip_restorations(self) -> GappedText:
        """The evaluation view: each restoration becomes a ``restored`` gap of its length.

        The restored text leaves ``text`` (``Gap.gold`` keeps it); its width counts
        every non-combining character, spaces included. Other gaps and spans are moved
        to the new offsets; spans left empty by the removal are dropped (markers kept).
        """
        restored = [span for span in self.spans if span.kind == RESTORED]
        if not restored:
            return self
        drop = self.mask(RESTORED)
        keep = ~drop
        # new index of every old position 0..len(text)
        new_pos = np.zeros(len(self.text) + 1, dtype=np.int64)
        np.cumsum(keep, out=new_pos[1:])
        pieces: list[str] = []
        cursor = 0
        for span in sorted(restored, key=lambda item: item.start):
            pieces.append(self.text[cursor : max(cursor, span.start)])
            cursor = max(cursor, span.end)
        pieces.append(self.text[cursor:])
        new_text = "".join(pieces)
        new_offsets = np.concatenate([self.source_offsets[:-1][keep], self.source_offsets[-1:]])

        events: list[tuple[int, int, int, Gap]] = []
        for order, gap in enumerate(self.gaps):
            start = int(new_pos[gap.start])
            moved = Gap(
                start,
                gap.min_width,
                gap.max_width,
                gap.kind,
                gap.source_start,
                gap.source_end,
                gap.approximate,
                gap.lines,
                gap.gold,
            )
            events.append((start, gap.source_start, order, moved))
        for order, span in enumerate(restored):
            gold = self.text[span.start : span.end]
            width = _count_base_chars(gold)
            if width == 0:
                continue
            gap = Gap(
                start=int(new_pos[span.start]),
                min_width=width,
                max_width=width,
                kind=RESTORED_GAP,
                source_start=span.source_start,
                source_end=span.source_end,
                gold=gold,
            )
            events.append((gap.start, span.source_start, len(self.gaps) + order, gap))
        events.sort(key=lambda item: (item[0], item[1], item[2]))

        spans: list[Span] = []
        for span in self.spans:
            if span.kind == RESTORED:
                continue
            start, end = int(new_pos[span.start]), int(new_pos[span.end])
            if end == start and span.end > span.start:
                continue
            spans.append(
                Span(start, end, span.kind, span.source_start, span.source_end, span.note)
            )
        return GappedText(
            text=new_text,
            gaps=[item[3] for item in events],
            source_offsets=new_offsets,
            spans=spans,
        )


def _count_base_chars(text: str) -> int:
    """Number of characters that are not combining marks."""
    return sum(1 for ch in text if not unicodedata.combining(ch))


def sort_spans(spans: Iterable[Span]) -> list[Span]:
    """Spans in text order; at one start, outer (longer) spans first, then input order."""
    return sorted(spans, key=lambda span: (span.start, -span.end, span.source_start))
