"""``canonicalize``: the one spelling of a text that the codec round-trips to.

Written independently of the encoder (string rewriting on NFD text, not plane
arithmetic), so the round-trip property tests compare two implementations.

Steps: NFD; fold letter variants (ϲ Ϲ ς ϐ ϑ ϴ ϕ ϰ ϱ ϖ ϵ ϒ µ), circumflex look-alikes
(U+0302 U+0303 U+0311 -> U+0342), elision variants (U+0027 U+02BC U+1FBF U+1FBD ->
U+2019) and ``?`` ``!`` -> ``;``; strip macron, breve, dot below; on every letter put
the modelled marks in the order breathing, diaeresis, accent, iota subscript (one of
each; circumflex > acute > grave, rough > smooth) before any other marks; U+0313 on a
consonant (on ρ: when no letter follows) becomes U+2019, as does U+0313 written after
the accent of a vowel that no letter follows (its last breathing/accent mark, no iota
subscript: ``δύ̓`` -> ``δύ’``) and U+0313 between whitespace (or the start) and a
letter (prodelision: ``νέα ̓στὶ`` -> ``νέα ’στὶ``); whitespace runs -> one space,
none at either end; no space between a letter (or its elision mark) and the
punctuation after it; one space after punctuation or an elision mark that a letter
follows directly; σ at the end of a word -> ς, elsewhere σ (also before an elision mark: θάλασσ’); NFC (so oxia -> tonos,
U+0387 -> U+00B7, U+037E -> ``;``).  Never NFKC.

Characters that are not modelled (Latin, digits, archaic letters, sigla, other
marks) are kept where they are.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

from stoicheia_spacy.alphabet import ALPHABET

from .tables import (
    ELISION,
    ELISION_VARIANTS,
    F_ACCENTS,
    F_BREATHINGS,
    F_IOTA,
    LETTER_VARIANTS,
    MARK_FLAGS,
    PUNCT_CLASS,
    flag_marks,
)
from .text import validate_text

_LETTERS = ALPHABET + ALPHABET.upper()
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_PUNCT = re.escape("".join(sorted(set(PUNCT_CLASS) - {"?", "!"})))
_CONSONANTS = "βγδζθκλμνξπρστφχψ"
_VOWELS = "αεηιουω"
_SMOOTH = "\u0313"

_CLUSTER = re.compile(f"([{_LETTERS}])([{_MARKS}]+)")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(f"(?<=[{_LETTERS}{_MARKS}{ELISION}]) (?=[{_PUNCT}])")
_AFTER_PUNCT = re.compile(f"([{_PUNCT}])(?=[{_LETTERS}])")
_AFTER_ELISION = re.compile(f"(?<=[{_LETTERS}{_MARKS}]){ELISION}(?=[{_LETTERS}])")
_PRODELISION = re.compile(f"(?:(?<=\\s)|^)[{_SMOOTH}{ELISION}](?=[{_LETTERS}])")
_FINAL_SIGMA = re.compile(f"σ(?=[^{_LETTERS}\\s{_PUNCT}{ELISION}]*(?:[\\s{_PUNCT}]|$))")


@cache
def _translation() -> dict[int, str | None]:
    table: dict[int, str | None] = {ord(k): v for k, v in LETTER_VARIANTS.items()}
    for look_alike in "\u0302\u0303\u0311":
        table[ord(look_alike)] = "\u0342"
    for variant in ELISION_VARIANTS:
        table[ord(variant)] = ELISION
    table[ord("?")] = ";"
    table[ord("!")] = ";"
    for stripped in "\u0304\u0306\u0323":
        table[ord(stripped)] = None
    return table


def _flags(marks: str) -> int:
    out = 0
    for mark in marks:
        out |= MARK_FLAGS.get(mark, 0)
    return out


def _cluster(match: re.Match[str]) -> str:
    base, marks = match.group(1), match.group(2)
    following = match.string[match.end() : match.end() + 1]
    return _render_cluster(base, marks, following != "" and following in _LETTERS)


@lru_cache(maxsize=65536)
def _render_cluster(base: str, marks: str, letter_follows: bool) -> str:
    flags = 0
    others = []
    for mark in marks:
        if mark in MARK_FLAGS:
            flags |= MARK_FLAGS[mark]
        else:
            others.append(mark)
    elided = False
    lower = base.lower()
    if _SMOOTH in marks and lower in _CONSONANTS and (lower != "ρ" or not letter_follows):
        elided = True
        flags &= ~MARK_FLAGS[_SMOOTH]
    elif _SMOOTH in marks and lower in _VOWELS and not letter_follows and not flags & F_IOTA:
        placed = [m for m in marks if MARK_FLAGS.get(m, 0) & (F_ACCENTS | F_BREATHINGS)]
        last = marks.rindex(_SMOOTH)
        before = _flags(marks[:last])  # every mark written before it, a diaeresis included (ά̈̓)
        if placed[-1] == _SMOOTH and before & F_ACCENTS:  # δύ̓: written after the accent
            elided = True
            flags = before | _flags(marks[last + 1 :])
    return base + flag_marks(flags) + "".join(others) + (ELISION if elided else "")


def canonicalize(text: str) -> str:
    """The canonical form of ``text`` (see the module docstring).

    For text made only of modelled characters (``unmodelled_offsets(t)`` empty),
    ``decode_planes(encode_planes(t)) == canonicalize(t)`` wherever the decoder's
    elision rule matches the source.  Raises
    :class:`~stoicheia_spacy.errors.InvalidTextError` like :func:`encode_planes`."""
    validate_text(text)
    t = unicodedata.normalize("NFD", text).translate(_translation())
    t = _PRODELISION.sub(ELISION, t)
    t = _CLUSTER.sub(_cluster, t)
    t = _SPACES.sub(" ", t).strip()
    t = _SPACE_BEFORE_PUNCT.sub("", t)
    t = _AFTER_PUNCT.sub(r"\1 ", t)
    t = _AFTER_ELISION.sub(ELISION + " ", t)
    t = _FINAL_SIGMA.sub("ς", t)
    return unicodedata.normalize("NFC", t)
