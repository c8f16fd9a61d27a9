"""Linear-time scanner for Leiden, Ithaca and DDbDP gap markup.

What is recognised (``notation="leiden"``, the default):

* Ithaca: a run of ``-`` = a ``lost`` gap of that many letters (context, not a
  target); a run of ``?`` = a ``target`` gap (letters to restore). Inside any
  bracket, ``?`` is an editorial query instead (zero-width ``query`` span).
* Leiden lacunae (kind ``lacuna``): ``[---]``, ``[ - - - ]``, ``[–––]``, ``[…]`` and
  exactly three dots ``[...]`` / ``[. . .]`` have unknown width (``max_width`` None,
  ``min_width`` 1); other runs of dots count letters (``[....]`` = 4, ``[..]`` = 2);
  ``[.5]``, ``[--5--]``, ``[- 5 -]`` = 5; ``[5±3]`` = 2..8; ``[5-8]`` = 5..8;
  ``[ca. 5]``/``[c. 5]``/``[c.5]`` = exactly 5 with ``approximate=True`` (no range is
  invented; :meth:`Gap.widths` with a caller's slack is the place for that);
  ``[c. 5-8]`` = 5..8, approximate.  A width is reported as stated, however large
  (``[ca. 100000]``): the parser allocates nothing per letter; the encoder pipe feeds at most
  ``models.gaps.MAX_GAP_WIDTH`` MASK letters per gap (flagged ``too_wide``) and the restorer
  answers ``too_wide`` above its ``max_width``.
* Restorations ``[αβγ]``: kept in the text, flagged by a ``restored`` span. Inside a
  restoration, runs of dots/dashes (and the whitespace around them) are gaps:
  ``[αβ . .]`` = restored ``αβ`` + a 2-letter lacuna. When such a run sits between
  restored letters with whitespace on both sides, one space is kept before the gap.
* ``⟦ ⟧``/``〚 〛`` erased, ``{ }`` superfluous, ``⟨ ⟩``/``〈 〉``/``< >`` added,
  ``( )`` expansion: contents kept, spans flagged. Different bracket kinds nest
  (``⟦μετ[ὰ]⟧``); a ``[`` inside a ``[`` is an error. An empty restoration
  (``[]``, or ``[|gap=4|]`` holding only a gap) records no span; other empty pairs
  (``<>``, found in DDbDP) give empty spans.
* A letter followed by COMBINING DOT BELOW (U+0323) is kept without the dot and
  flagged ``uncertain`` (adjacent letters merge into one span). A dot below with no
  letter before it is kept as text (documented fallback).
* Line breaks ``|``, ``||`` and ``/`` are removed and recorded as zero-width
  ``line_break`` spans before the next cleaned character: ``ἐ|πὶ`` -> ``ἐπὶ``; when
  whitespace follows the mark, it is dropped when whitespace precedes it, else one
  character of it is kept (``καὶ | ἐπὶ`` -> ``καὶ ἐπὶ``, the break after the space;
  ``κλή| ἐπὶ``: the break before it).
* DDbDP gap tags (both notations): ``|gap=N|`` = lacuna of N, ``|gap=A-B|`` = A..B,
  ``|gap=unknown|`` = unknown lacuna, ``|gap=N_lines|``/``|gap=unknown_lines|`` = a
  ``lines`` gap (``Gap.lines`` = N, the lower bound of ``A-B_lines``).

``notation="ddbdp"`` reads the ORIGINAL column of the DDbDP token files instead: a
``-`` touching a letter is a line break inside a word (``δ-ευτερόβολον``; a ``-``
with whitespace on both sides is a dash and stays text), ``\\ /`` enclose an
interlinear insertion (``insertion`` span, so ``/`` is no line break),
``@^inline^ … @`` encloses a correction (``correction`` span), ``.`` and ``…`` inside
brackets are text (``(…)`` = unresolved abbreviation), ``?`` is always an editorial
query, ``*`` (irregular
form) is removed and recorded as an ``irregular`` marker, and other
``|name|``/``|name=value|`` tags (``vac``, ``num``, ``digit``, ``extra``,
``tachygraphic-marks``...) become zero-width ``tag`` spans whose ``note`` is the body.

Every removed character is accounted for by ``source_offsets`` and the
``source_start/source_end`` of a gap or span; nothing is dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import numpy as np

from stoicheia_spacy.errors import ConfigError, LeidenSyntaxError
from stoicheia_spacy.leiden.model import (
    ADDED,
    CORRECTION,
    ERASED,
    EXPANSION,
    INSERTION,
    IRREGULAR,
    LACUNA,
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
    Span,
    sort_spans,
)
from stoicheia_spacy.textcheck import validate_text

__all__ = ["parse_leiden"]

DOT_BELOW: Final = "\u0323"
_MARKS = "\u0300-\u036f"
_MARKS_NOT_DOT = "\u0300-\u0322\u0324-\u036f"

#: opening bracket -> (closing bracket, span kind)
_PAIRS: Final[dict[str, tuple[str, str]]] = {
    "[": ("]", RESTORED),
    "⟦": ("⟧", ERASED),
    "〚": ("〛", ERASED),
    "{": ("}", SUPERFLUOUS),
    "⟨": ("⟩", ADDED),
    "〈": ("〉", ADDED),
    "<": (">", ADDED),
    "(": (")", EXPANSION),
}
_OPEN_OTHER = "".join(re.escape(ch) for ch in _PAIRS if ch != "[")
_CLOSE_OTHER = "".join(re.escape(close) for close, _ in _PAIRS.values() if close != "]")
_CLOSERS: Final = {close for close, _ in _PAIRS.values()} | {"/", "@"}

# --- pieces of the scanner -----------------------------------------------------
# DDbDP tags: any |name| or |name=value| in "ddbdp" notation, only |gap=...| in "leiden"
# (where a Latin word between two line breaks must stay text)
_TAG_BODY_DDBDP = r"[A-Za-z]+(?:[-_][A-Za-z]+)*(?:=[^|\s\[\]]*)?"
_TAG_BODY_LEIDEN = r"gap=[^|\s\[\]]*"


def _tag(body: str) -> str:
    return rf"(?P<tag>\|(?P<tag_body>{body})\|)"


def _pipe(body: str) -> str:
    """A "|" that does not open a tag; "||" counts as one line break."""
    return rf"\|(?!{body}\|)(?:\|(?!{body}\|))?"


_WHOLE_RE = r"(?P<whole>\[(?P<whole_in>[^\[\]⟦⟧〚〛]*)\])"
_OPEN_SQ = r"(?P<open_sq>\[)"
_CLOSE_SQ = r"(?P<close_sq>\])"
_OPEN = rf"(?P<open>[{_OPEN_OTHER}])"
_CLOSE = rf"(?P<close>[{_CLOSE_OTHER}])"
_QUERY = rf"(?P<query>(?:\?[{_MARKS}]*)+)"
_DASH = rf"(?P<dash>(?:-[{_MARKS}]*)+)"
_HYPHEN = r"(?P<hyphen>(?<=\S)-|-(?=\S))"  # a free-standing " - " is a dash (text)
# Every alternative starts with a character class (no optional prefix), so that the
# regex engine can skip plain text quickly.
_PIPE_LEIDEN = _pipe(_TAG_BODY_LEIDEN)
_PIPE_DDBDP = _pipe(_TAG_BODY_DDBDP)
_LB_LEIDEN = rf"(?P<lb>(?:{_PIPE_LEIDEN}|/)[ \t]*)"
_LB_DDBDP = rf"(?P<lb>{_PIPE_DDBDP}[ \t]*)"
# the base letter was already emitted as plain text; the token is its marks
_DOTTED = rf"(?P<dotted>[{_MARKS_NOT_DOT}]*{DOT_BELOW}[{_MARKS}]*)"
_FILL_CHARS_LEIDEN = r".\-–—…"
_FILL_CHARS_DDBDP = r"–—"  # DDbDP writes gaps as tags; "…" and "." are text there
_DDBDP_EXTRA = (
    r"(?P<corr_open>@\^[a-z]+\^)|(?P<corr_close>@)|(?P<ins_open>\\)|(?P<ins_close>/)|(?P<star>\*)"
)


def _fill(chars: str) -> str:
    return rf"(?P<fillrun>(?P<fill_pre>\s*)(?P<fill>[{chars}](?:\s*[{chars}])*)(?P<fill_post>\s*))"


# Characters a token can start with; the leading lookahead lets the regex engine skip
# plain text with a character-set scan instead of trying every alternative.
_STARTS = re.escape("[]⟦⟧〚〛{}⟨⟩〈〉<>()|/?-\\@*") + _MARKS
_STARTS_INNER = _STARTS + re.escape(".–—…") + r"\s"


def _compile(*alternatives: str, inner: bool = False) -> re.Pattern[str]:
    starts = _STARTS_INNER if inner else _STARTS
    return re.compile(f"(?=[{starts}])(?:" + "|".join(alternatives) + ")")


_SCANNERS: Final[dict[tuple[str, bool], re.Pattern[str]]] = {
    ("leiden", False): _compile(
        _tag(_TAG_BODY_LEIDEN),
        _WHOLE_RE,
        _OPEN_SQ,
        _CLOSE_SQ,
        _OPEN,
        _CLOSE,
        _QUERY,
        _DASH,
        _LB_LEIDEN,
        _DOTTED,
    ),
    ("leiden", True): _compile(
        _tag(_TAG_BODY_LEIDEN),
        _OPEN_SQ,
        _CLOSE_SQ,
        _OPEN,
        _CLOSE,
        _QUERY,
        _LB_LEIDEN,
        _fill(_FILL_CHARS_LEIDEN),
        _DOTTED,
        inner=True,
    ),
    ("ddbdp", False): _compile(
        _tag(_TAG_BODY_DDBDP),
        _WHOLE_RE,
        _OPEN_SQ,
        _CLOSE_SQ,
        _DDBDP_EXTRA,
        _OPEN,
        _CLOSE,
        _QUERY,
        _HYPHEN,
        _LB_DDBDP,
        _DOTTED,
    ),
    ("ddbdp", True): _compile(
        _tag(_TAG_BODY_DDBDP),
        _OPEN_SQ,
        _CLOSE_SQ,
        _DDBDP_EXTRA,
        _OPEN,
        _CLOSE,
        _QUERY,
        _HYPHEN,
        _LB_DDBDP,
        _fill(_FILL_CHARS_DDBDP),
        _DOTTED,
        inner=True,
    ),
}

# --- width specifications inside [ ] -----------------------------------------------
_EDGE = r"[\s.\-–—]*"
_FILL_ONLY = re.compile(r"[\s.\-–—…]*[.\-–—…][\s.\-–—…]*")
_NUMERIC = re.compile(
    rf"{_EDGE}(?P<ca>(?:circa|ca|c)\.?\s*)?(?P<n>\d+)\s*"
    rf"(?:(?:±|\+/?-)\s*(?P<pm>\d+)|[-–]\s*(?P<hi>\d+))?{_EDGE}"
)
_LOOKS_NUMERIC = re.compile(r"[\s.\-–—…\d±+/]*[\d±][\s.\-–—…\d±+/]*")
_CA_PREFIX = re.compile(r"[\s.\-–—]*(?:circa|ca|c)\.")
_GAP_TAG = re.compile(r"gap=(?:(?P<n>\d+)(?:-(?P<hi>\d+))?|(?P<unknown>unknown))(?P<lines>_lines)?")


@dataclass(frozen=True)
class _Width:
    min_width: int
    max_width: int | None
    approximate: bool


def _bracket_width(inner: str, offset: int) -> _Width | None:
    """Width of a whole ``[...]`` lacuna, None when ``inner`` is a restoration.

    ``offset`` (of the ``[``) is used for errors on malformed specifications.
    """
    if _FILL_ONLY.fullmatch(inner):
        if any(ch in "-–—…" for ch in inner) or inner.count(".") == 3:
            return _Width(1, None, False)
        dots = inner.count(".")
        return _Width(dots, dots, False)
    match = _NUMERIC.fullmatch(inner)
    if match is not None:
        n = int(match["n"])
        approximate = match["ca"] is not None
        if match["pm"] is not None:
            low, high = n - int(match["pm"]), n + int(match["pm"])
        elif match["hi"] is not None:
            low, high = n, int(match["hi"])
        else:
            low = high = n
        if low > high:
            raise LeidenSyntaxError(f"lacuna [{inner}] has minimum {low} > maximum {high}", offset)
        if low < 1:
            raise LeidenSyntaxError(f"lacuna [{inner}] allows a width below 1", offset)
        return _Width(low, high, approximate)
    if _CA_PREFIX.match(inner):
        raise LeidenSyntaxError(f"'ca.' without a width in [{inner}]", offset)
    if _LOOKS_NUMERIC.fullmatch(inner):
        raise LeidenSyntaxError(f"malformed lacuna width [{inner}]", offset)
    return None


@dataclass
class _Open:
    kind: str
    closer: str
    source_start: int
    out_start: int
    n_spans: int  # len(spans) when opened: markers inside keep an empty span alive


class _Scanner:
    """One pass over the input; builds the cleaned text piece by piece."""

    def __init__(self, text: str, notation: Notation) -> None:
        self.text = text
        self.notation = notation
        self.pieces: list[str] = []
        self.seg_src: list[int] = []
        self.seg_len: list[int] = []
        self.out = 0
        self.gaps: list[Gap] = []
        self.spans: list[Span] = []
        self.stack: list[_Open] = []
        self.in_square = False
        self.last_uncertain: int | None = None  # index in self.spans of an extendable span

    # --- output ------------------------------------------------------------------
    def emit(self, start: int, end: int) -> None:
        if end > start:
            self.pieces.append(self.text[start:end])
            self.seg_src.append(start)
            self.seg_len.append(end - start)
            self.out += end - start

    def marker(self, kind: str, start: int, end: int, note: str | None = None) -> None:
        self.spans.append(Span(self.out, self.out, kind, start, end, note))

    def gap(self, width: _Width, kind: str, start: int, end: int, lines: int | None = None) -> None:
        self.gaps.append(
            Gap(
                start=self.out,
                min_width=width.min_width,
                max_width=width.max_width,
                kind=kind,
                source_start=start,
                source_end=end,
                approximate=width.approximate,
                lines=lines,
            )
        )

    # --- brackets ----------------------------------------------------------------
    def open(self, kind: str, closer: str, offset: int) -> None:
        if kind == RESTORED:
            if self.in_square:
                raise LeidenSyntaxError("'[' nested inside another '['", offset)
            self.in_square = True
        self.stack.append(_Open(kind, closer, offset, self.out, len(self.spans)))

    def close(self, char: str, start: int, end: int) -> None:
        if not self.stack:
            raise LeidenSyntaxError(f"'{char}' closes nothing", start)
        top = self.stack[-1]
        if top.closer != char:
            raise LeidenSyntaxError(
                f"'{char}' does not close the {top.kind} bracket opened at offset "
                f"{top.source_start} (expected '{top.closer}')",
                start,
            )
        self.stack.pop()
        if top.kind == RESTORED:
            self.in_square = False
            if self.out == top.out_start and len(self.spans) == top.n_spans:
                return  # "[]" or "[|gap=4|]": nothing was restored
        self.spans.append(Span(top.out_start, self.out, top.kind, top.source_start, end))

    # --- main loop ---------------------------------------------------------------
    def run(self) -> GappedText:
        text = self.text
        pos = 0
        while True:
            scanner = _SCANNERS[(self.notation, self.in_square)]
            match = scanner.search(text, pos)
            if match is None:
                self.emit(pos, len(text))
                break
            start, end = match.span()
            self.emit(pos, start)
            pos = self.handle(match)
        if self.stack:
            top = self.stack[-1]
            opener = text[top.source_start]
            raise LeidenSyntaxError(f"'{opener}' is never closed", top.source_start)
        return self.result()

    def handle(self, match: re.Match[str]) -> int:
        """Act on one markup token; return the input position to continue from."""
        group = match.lastgroup
        start, end = match.span()
        text = self.text
        if group == "dotted":
            self.dotted(match)
        elif group == "tag":
            self.tag(match["tag_body"], start, end)
        elif group == "whole":
            width = _bracket_width(match["whole_in"], start)
            if width is None:  # a restoration: re-scan its content in square mode
                self.open(RESTORED, "]", start)
                return start + 1
            self.gap(width, LACUNA, start, end)
        elif group == "open_sq":
            self.open(RESTORED, "]", start)
        elif group == "close_sq":
            self.close("]", start, end)
        elif group == "open":
            closer, kind = _PAIRS[text[start]]
            self.open(kind, closer, start)
        elif group == "close":
            self.close(text[start], start, end)
        elif group == "query":
            if self.stack or self.notation == "ddbdp":
                self.marker(QUERY, start, end)
            else:
                count = match.group().count("?")
                self.gap(_Width(count, count, False), TARGET, start, end)
        elif group == "dash":
            count = match.group().count("-")
            self.gap(_Width(count, count, False), LOST, start, end)
        elif group == "fillrun":
            self.fill(match)
        elif group in ("lb", "hyphen"):
            self.line_break(match)
        elif group == "corr_open":
            self.open(CORRECTION, "@", start)
        elif group == "corr_close":
            self.close("@", start, end)
        elif group == "ins_open":
            self.open(INSERTION, "/", start)
        elif group == "ins_close":
            self.close("/", start, end)
        elif group == "star":
            self.marker(IRREGULAR, start, end)
        else:  # pragma: no cover - every alternative is named
            raise AssertionError(group)
        return end

    def dotted(self, match: re.Match[str]) -> None:
        """Marks with a dot below: flag the letter just emitted, drop the dot itself."""
        start, end = match.span()
        text = self.text
        # the token's own marks before the dot were not emitted yet; the base letter was
        has_base = (
            self.seg_len
            and self.seg_src[-1] + self.seg_len[-1] == start
            and text[start - 1].isalpha()
        )
        if not has_base:  # documented fallback: a dot below without a letter stays text
            self.emit(start, end)
            return
        out_start = self.out - 1
        cursor = start
        for index in range(start, end):
            if text[index] == DOT_BELOW:
                self.emit(cursor, index)
                cursor = index + 1
        self.emit(cursor, end)
        last = self.last_uncertain
        if (
            last is not None
            and self.spans[last].end == out_start
            and self.spans[last].source_end == start - 1
        ):
            prev = self.spans[last]
            self.spans[last] = Span(prev.start, self.out, UNCERTAIN, prev.source_start, end)
        else:
            self.last_uncertain = len(self.spans)
            self.spans.append(Span(out_start, self.out, UNCERTAIN, start - 1, end))

    def tag(self, body: str, start: int, end: int) -> None:
        if not body.startswith("gap"):
            self.marker(TAG, start, end, note=body)
            return
        parsed = _GAP_TAG.fullmatch(body)
        if parsed is None:
            raise LeidenSyntaxError(f"malformed DDbDP gap tag |{body}|", start)
        low = None if parsed["unknown"] else int(parsed["n"])
        high = low if parsed["hi"] is None else int(parsed["hi"])
        if parsed["lines"]:
            self.gap(_Width(1, None, False), LINES, start, end, lines=low)
        elif low is None:
            self.gap(_Width(1, None, False), LACUNA, start, end)
        elif high is None or not 1 <= low <= high:
            raise LeidenSyntaxError(f"DDbDP gap tag |{body}| has an impossible width", start)
        else:
            self.gap(_Width(low, high, False), LACUNA, start, end)

    def fill(self, match: re.Match[str]) -> None:
        """A run of dots/dashes inside a restoration: a lacuna (plus maybe one space)."""
        fill = match["fill"]
        pre, post = match["fill_pre"], match["fill_post"]
        start, end = match.span()
        opened = self.stack[-1].out_start if self.stack else self.out
        next_char = self.text[end] if end < len(self.text) else ""
        inside = self.out > opened and next_char not in _CLOSERS  # not at a bracket edge
        keep_pre = bool(pre) and inside
        keep_post = bool(post) and inside and not keep_pre
        if keep_pre:
            self.emit(start, start + 1)  # one word space before the gap
        if any(ch in "-–—…" for ch in fill):
            width = _Width(1, None, False)
        else:
            dots = fill.count(".")
            width = _Width(dots, dots, False)
        self.gap(width, LACUNA, match.start("fill"), match.end("fill"))
        if keep_post:
            post_at = match.start("fill_post")
            self.emit(post_at, post_at + 1)  # one word space after the gap

    def line_break(self, match: re.Match[str]) -> None:
        """Drop the mark; whitespace after it is kept (one character) unless the text
        already ends with emitted whitespace, so ``καὶ | ἐπὶ`` -> ``καὶ ἐπὶ``."""
        start, end = match.span()
        self.marker(LINE_BREAK, start, end)
        if match.group()[-1] not in " \t":
            return
        before = self.text[start - 1] if start else ""
        emitted_before = bool(self.seg_len) and self.seg_src[-1] + self.seg_len[-1] == start
        if not (before.isspace() and emitted_before):
            trailing = start + len(match.group().rstrip(" \t"))
            self.emit(trailing, trailing + 1)

    def result(self) -> GappedText:
        total = self.out
        lengths = np.asarray(self.seg_len, dtype=np.int64)
        sources = np.asarray(self.seg_src, dtype=np.int64)
        out_starts = np.cumsum(lengths) - lengths
        offsets = np.empty(total + 1, dtype=np.int64)
        offsets[:total] = np.repeat(sources - out_starts, lengths) + np.arange(
            total, dtype=np.int64
        )
        offsets[total] = len(self.text)
        return GappedText(
            text="".join(self.pieces),
            gaps=self.gaps,
            source_offsets=offsets,
            spans=sort_spans(self.spans),
        )


def parse_leiden(
    text: str, *, notation: Notation = "leiden", strip_restorations: bool = False
) -> GappedText:
    """Parse Leiden / Ithaca / DDbDP gap markup into a :class:`GappedText`.

    ``notation`` is ``"leiden"`` (Leiden + Ithaca, the default) or ``"ddbdp"`` (the
    ORIGINAL column of DDbDP token files); an EpiDoc file goes through
    :func:`~stoicheia_spacy.leiden.parse_gaps` (``notation="epidoc"``); see the module
    docstring for the conventions. With ``strip_restorations=True`` editorial restorations become
    ``restored`` gaps of their length (the evaluation view).

    Raises :class:`~stoicheia_spacy.errors.InvalidTextError` for NUL bytes / lone
    surrogates, :class:`~stoicheia_spacy.errors.LeidenSyntaxError` (with the
    ``offset`` of the culprit in ``text``) for malformed markup and
    :class:`~stoicheia_spacy.errors.EpiDocError` for a bad EpiDoc file.
    """
    validate_text(text)
    if notation not in ("leiden", "ddbdp"):
        raise ConfigError(f"unknown notation {notation!r}: use 'leiden', 'ddbdp' or 'epidoc'")
    gapped = _Scanner(text, notation).run()
    return gapped.strip_restorations() if strip_restorations else gapped
