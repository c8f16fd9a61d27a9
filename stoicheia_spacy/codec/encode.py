"""Text -> five character planes, vectorised over the whole string.

Rules (see also :mod:`stoicheia_spacy.codec` for the overview):

* A *unit* is one non-combining character plus the combining marks after it.  Marks
  belong to the character right before them; marks after a space, a non-Greek
  character or at the start of the text are *orphans*: not modelled, left in the text,
  never attached to an earlier letter.
* Letters (any case, any normalisation form, the variants ϲ Ϲ ς ϐ ϑ ϕ ϰ ϱ ϖ ϵ ϴ ϒ µ)
  are the positions.  Everything else stays in the text at its offset.
* Words break at whitespace, punctuation and elision marks only; other non-modelled
  characters (brackets, sigla, ϝ, digits, Latin) neither break a word nor are
  positions.
* Elision: U+2019 and its variants (U+0027, U+02BC, U+1FBF, U+1FBD) right after a
  letter; U+0313 (smooth breathing / koronis) on a consonant other than ρ; U+0313 on
  ρ when no letter follows (``παῤ``); U+0313 written *after* the accent of a vowel
  that no letter follows, as the last breathing or accent mark of a vowel without
  iota subscript (``δύ̓``, ``Δί̓``, ``οἷ̓``: a breathing comes before the accent).
  Elision is no plane: the planes record it (``elided``) and decode re-derives it
  from the letters when they do not.
* Prodelision: U+0313 or an elision mark standing between whitespace (or the start
  of the text) and a letter (``νέα ̓στὶ``, ``μὴ ’ξαπατηθῇς``) is recorded on that
  letter (``prodelided``) and decodes as U+2019 before the word.
* Punctuation attaches to the last letter before it, unless a non-modelled letter or
  digit stands in between; only the first mark after a letter counts.  A period,
  ``;``/``?``/``!`` (question/exclamation) ends a sentence: its letter gets boundary
  2, as does the last letter of the text.  High dot and colon do not end sentences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stoicheia_spacy.alphabet import ALPHABET, BND_INTERNAL, BND_SENT_END, BND_WORD_END, PUNCT_NONE

from .planes import CharPlanes
from .tables import (
    CONSONANTS,
    F_ACCENTS,
    F_BREATHINGS,
    F_IOTA,
    F_SMOOTH,
    FLAGS_TO_STATE,
    KIND_BLOCK,
    KIND_ELISION,
    KIND_LETTER,
    KIND_MARK,
    KIND_OTHER,
    KIND_PUNCT,
    KIND_SPACE,
    KIND_XMARK,
    PRODELISION_CPS,
    RHO,
    SENTENCE_END_PUNCT,
    TABLE_SIZE,
    codepoint_tables,
)
from .text import codepoints

_IS_CONSONANT = np.zeros(256, dtype=bool)
_IS_CONSONANT[list(CONSONANTS)] = True
_SENT_END = np.zeros(256, dtype=bool)
_SENT_END[list(SENTENCE_END_PUNCT)] = True
_IS_VOWEL = np.zeros(256, dtype=bool)
_IS_VOWEL[[ALPHABET.index(c) for c in "αεηιουω"]] = True
_SMOOTH_CPS = (0x313, 0x343)  # combining comma above, combining koronis


@dataclass(frozen=True)
class Encoding:
    """Everything :func:`encode_detailed` learns about a text."""

    planes: CharPlanes
    #: bool per letter: the source marked this letter's word as elided
    elided: np.ndarray
    #: sorted int64 offsets of the characters the planes do not represent
    #: (None unless asked for)
    unmodelled: np.ndarray | None


def _empty(n_chars: int, kind: np.ndarray | None, want: bool) -> Encoding:
    unmodelled = None
    if want:
        unmodelled = np.zeros(0, np.int64)
        if kind is not None:
            unmodelled = np.flatnonzero(kind != KIND_SPACE).astype(np.int64)
    return Encoding(CharPlanes.empty(), np.zeros(0, dtype=bool), unmodelled)


def encode_detailed(text: str, *, unmodelled: bool = False) -> Encoding:
    """Encode ``text``; also report elided letters and (optionally) unmodelled offsets."""
    cps = codepoints(text)
    if len(cps) == 0:
        return _empty(0, None, unmodelled)
    tables = codepoint_tables()
    idx = np.minimum(cps, TABLE_SIZE - 1)
    kind = tables.kind[idx]
    is_mark = (kind == KIND_MARK) | (kind == KIND_XMARK)
    starts = np.flatnonzero(~is_mark)  # first char of every unit
    if len(starts) == 0:
        return _empty(len(cps), kind, unmodelled)
    first = int(starts[0])
    uidx = idx[starts]
    ukind = kind[starts]
    uflags = np.bitwise_or.reduceat(tables.flags[idx[first:]], starts - first)
    n_units = len(starts)
    is_letter = ukind == KIND_LETTER
    lu = np.flatnonzero(is_letter)  # unit index of every letter
    n = len(lu)
    if n == 0:
        if unmodelled:
            return _finish_unmodelled_only(kind, is_mark, starts, ukind, is_letter)
        return _empty(len(cps), kind, False)

    letters = tables.letter[uidx[lu]]
    capitals = tables.cap[uidx[lu]]
    flags = uflags[lu]

    # elision written as U+0313 on a consonant (ρ only when no letter follows)
    next_is_letter = np.zeros(n, dtype=bool)
    has_next = lu + 1 < n_units
    next_is_letter[has_next] = is_letter[lu[has_next] + 1]
    smooth = (flags & F_SMOOTH) != 0
    cons = _IS_CONSONANT[letters]
    elided_mark = smooth & cons & ((letters != RHO) | ~next_is_letter)
    flags = np.where(elided_mark, flags & ~np.uint8(F_SMOOTH), flags).astype(np.uint8)
    if smooth.any():  # U+0313 after the accent of a final vowel
        _vowel_elision(cps, idx, starts, lu, letters, flags, next_is_letter, elided_mark)
    diacritics = FLAGS_TO_STATE[flags]

    # rank of the last letter at or before each unit (-1 before the first letter)
    rank = np.cumsum(is_letter) - 1

    # elision marks right after a letter
    eu = np.flatnonzero(ukind == KIND_ELISION)
    e_attached = eu[(eu > 0) & is_letter[np.maximum(eu - 1, 0)]]
    elided = elided_mark.copy()
    elided[rank[e_attached]] = True
    prodelision_cps = _prodelision(cps, kind, starts[lu])
    prodelided = np.zeros(n, dtype=bool)
    prodelided[np.searchsorted(starts[lu], prodelision_cps + 1)] = True

    # word breaks: whitespace, punctuation, elision between two letters
    is_break = (ukind == KIND_SPACE) | (ukind == KIND_PUNCT) | (ukind == KIND_ELISION)
    cum = np.cumsum(is_break)
    boundary = np.full(n, BND_INTERNAL, dtype=np.uint8)
    if n > 1:
        between = cum[lu[1:] - 1] - cum[lu[:-1]]
        boundary[:-1] = np.where((between > 0) | elided_mark[:-1], BND_WORD_END, BND_INTERNAL)

    # punctuation: first mark after a letter, no non-modelled letter/digit in between
    pu = np.flatnonzero(ukind == KIND_PUNCT)
    punctuation = np.full(n, PUNCT_NONE, dtype=np.uint8)
    chosen = np.zeros(0, dtype=np.int64)
    if len(pu):
        anchor_units = np.where(is_letter | (ukind == KIND_BLOCK), np.arange(n_units), -1)
        anchor = np.maximum.accumulate(anchor_units)
        a = np.where(pu > 0, anchor[np.maximum(pu - 1, 0)], -1)
        ok = a >= 0
        ok[ok] = is_letter[a[ok]]
        a_ok = a[ok]
        firsts = np.ones(len(a_ok), dtype=bool)
        firsts[1:] = a_ok[1:] != a_ok[:-1]
        chosen = pu[ok][firsts]
        punctuation[rank[a_ok[firsts]]] = tables.punct[uidx[chosen]]
    boundary[_SENT_END[punctuation]] = BND_SENT_END
    boundary[-1] = BND_SENT_END

    planes = CharPlanes(letters, boundary, diacritics, capitals, punctuation, starts[lu].astype(np.int64),
                        elided=elided, prodelided=prodelided)
    unmod = None
    if unmodelled:
        unmod = _unmodelled(kind, is_mark, starts, ukind, is_letter, chosen, e_attached)
        unmod = np.setdiff1d(unmod, prodelision_cps)
    return Encoding(planes, elided, unmod)


def _vowel_elision(
    cps: np.ndarray,
    idx: np.ndarray,
    starts: np.ndarray,
    lu: np.ndarray,
    letters: np.ndarray,
    flags: np.ndarray,
    next_is_letter: np.ndarray,
    elided_mark: np.ndarray,
) -> None:
    """Mark (in place) final vowels whose last breathing/accent mark is a U+0313
    written after an accent: an elision mark, not a breathing (``δύ̓``)."""
    tables = codepoint_tables()
    cp_flags = tables.flags[idx]
    candidates = np.flatnonzero(_IS_VOWEL[letters] & ~next_is_letter & ((flags & F_SMOOTH) != 0)
                                & ((flags & F_ACCENTS) != 0) & ((flags & F_IOTA) == 0))
    ends = np.append(starts[1:], len(cps))
    for i in candidates.tolist():
        start, end = int(starts[lu[i]]), int(ends[lu[i]])
        marked = np.flatnonzero((cp_flags[start:end] & (F_ACCENTS | F_BREATHINGS)) != 0)
        last = int(marked[-1]) if len(marked) else 0
        if last == 0 or int(cps[start + last]) not in _SMOOTH_CPS:
            continue
        before = np.bitwise_or.reduce(cp_flags[start : start + last])
        if before & F_ACCENTS:
            elided_mark[i] = True
            flags[i] = before | np.bitwise_or.reduce(cp_flags[start + last + 1 : end], initial=0)


def _prodelision(cps: np.ndarray, kind: np.ndarray, letter_starts: np.ndarray) -> np.ndarray:
    """Offsets of prodelision marks: U+0313 or an elision mark between whitespace (or
    the start) and a letter."""
    mark = np.isin(cps[:-1], PRODELISION_CPS)
    if not mark.any():
        return np.zeros(0, dtype=np.int64)
    at = np.flatnonzero(mark)
    ok = (kind[at + 1] == KIND_LETTER) & np.isin(at + 1, letter_starts)
    ok &= (at == 0) | (kind[np.maximum(at - 1, 0)] == KIND_SPACE)
    return at[ok].astype(np.int64)


def _finish_unmodelled_only(
    kind: np.ndarray, is_mark: np.ndarray, starts: np.ndarray, ukind: np.ndarray, is_letter: np.ndarray
) -> Encoding:
    unmod = _unmodelled(kind, is_mark, starts, ukind, is_letter, np.zeros(0, np.int64), np.zeros(0, np.int64))
    return Encoding(CharPlanes.empty(), np.zeros(0, dtype=bool), unmod)


def _unmodelled(
    kind: np.ndarray,
    is_mark: np.ndarray,
    starts: np.ndarray,
    ukind: np.ndarray,
    is_letter: np.ndarray,
    chosen_punct_units: np.ndarray,
    attached_elision_units: np.ndarray,
) -> np.ndarray:
    owner = np.cumsum(~is_mark) - 1  # unit of every char (-1: orphan before any unit)
    owner_is_letter = np.zeros(len(kind), dtype=bool)
    has_owner = owner >= 0
    owner_is_letter[has_owner] = is_letter[owner[has_owner]]
    bad = (kind == KIND_OTHER) | (kind == KIND_BLOCK) | (kind == KIND_XMARK)
    bad |= (kind == KIND_MARK) & ~owner_is_letter
    unit_bad = (ukind == KIND_PUNCT) | (ukind == KIND_ELISION)
    unit_bad[chosen_punct_units] = False
    unit_bad[attached_elision_units] = False
    bad[starts[unit_bad]] = True
    return np.flatnonzero(bad).astype(np.int64)


def encode_planes(text: str) -> CharPlanes:
    """Encode ``text`` into its five character planes (one entry per Greek letter).

    Accepts any normalisation form; characters that are not modelled stay in the
    text and are simply not positions (``offsets`` map letters back to ``text``).
    Raises :class:`~stoicheia_spacy.errors.InvalidTextError` for non-str input, NUL
    characters and lone surrogates."""
    return encode_detailed(text).planes


def unmodelled_offsets(text: str) -> np.ndarray:
    """Sorted offsets of the characters of ``text`` that the planes do not represent
    (non-Greek characters, archaic letters, sigla, unknown or orphan marks, orphan or
    repeated punctuation, elision marks not after a letter).  Whitespace counts as
    represented.  Text for which this is empty round-trips to :func:`canonicalize`
    (up to the elision rule of :func:`decode_planes`)."""
    result = encode_detailed(text, unmodelled=True).unmodelled
    assert result is not None
    return result
