"""Five character planes -> NFC polytonic text, by table lookup.

Rendering of each position: letter (capital when the capitals plane says 1, final
sigma ``ς`` for a lower-case σ whose boundary is word- or sentence-final, unless
elided: ``θάλασσ’``), its
diacritics, then an elision mark U+2019 when :func:`elision_mask` says so, then its
punctuation mark (``,`` ``·`` U+00B7 ``:`` ``.`` ``;``), then one space when its
boundary is word- or sentence-final, except after the last position.  A word whose
first letter is ``prodelided`` (source metadata) starts with U+2019 (``’στὶ``).

UNKNOWN ids render what is known: unknown diacritics -> bare letter, unknown
boundary -> no space (and no final sigma), unknown punctuation -> none, unknown
capitals -> lower case.  MASK renders as U+25CC DOTTED CIRCLE (``◌``, with its
known diacritics; configurable), BLANK and PAD render as nothing (their boundary
and punctuation still render; doubled spaces are collapsed).
"""

from __future__ import annotations

import unicodedata
from functools import cache

import numpy as np

from stoicheia_spacy.alphabet import (
    ACCENT_ACUTE,
    ACCENT_GRAVE,
    ALPHABET,
    BLANK_ID,
    BND_SENT_END,
    BND_UNKNOWN,
    BND_WORD_END,
    CAP_UNKNOWN,
    CAP_UPPER,
    DIA_UNKNOWN,
    MASK_ID,
    N_CHAR_IDS,
    N_DIA,
    N_PUNCT,
    PAD_ID,
    PUNCT_NONE,
    PUNCT_UNKNOWN,
)
from stoicheia_spacy.errors import InvalidPlanesError

from .encode import encode_planes
from .planes import CharPlanes
from .tables import (
    CONSONANTS,
    ELISION,
    FINAL_CONSONANTS,
    MASK_PLACEHOLDER,
    PUNCT_OUT,
    RHO,
    SIGMA,
    state_marks,
)

_FINAL_SIGMA_CODE = N_CHAR_IDS  # pseudo letter code 27
_N_LETTER_CODES = N_CHAR_IDS + 1
_N_SUFFIX = 2 * N_PUNCT * 2  # elision x punctuation x space

_IS_CONSONANT = np.zeros(256, dtype=bool)
_IS_CONSONANT[list(CONSONANTS)] = True
_ELIDABLE = _IS_CONSONANT.copy()
_ELIDABLE[list(FINAL_CONSONANTS)] = False
_ELIDABLE[RHO] = True  # decided by the ρ rule below


_VOWELS = np.zeros(256, dtype=bool)
_VOWELS[[ALPHABET.index(c) for c in "αεηιοωυ"]] = True
_IOTA, _UPSILON = ALPHABET.index("ι"), ALPHABET.index("υ")
_BEFORE_IOTA = np.zeros(256, dtype=bool)  # first vowels of the diphthongs αι ει οι υι
_BEFORE_IOTA[[ALPHABET.index(c) for c in "αεου"]] = True
_BEFORE_UPSILON = np.zeros(256, dtype=bool)  # first vowels of αυ ευ ηυ ου ωυ
_BEFORE_UPSILON[[ALPHABET.index(c) for c in "αεηοω"]] = True
_CODE_WIDTH = 6  # words compared against the word lists have at most this many letters
_LETTER_BASE = 32
_DIA_BASE = N_DIA + 1


def _window_code(values: np.ndarray, starts: np.ndarray, length: np.ndarray, base: int) -> np.ndarray:
    """Code of each word's values (first :data:`_CODE_WIDTH`); -1 for longer words."""
    code = np.zeros(len(starts), dtype=np.int64)
    last = len(values) - 1
    for k in range(_CODE_WIDTH):
        pos = np.minimum(starts + k, last)
        code += np.where(k < length, values[pos].astype(np.int64) + 1, 0) * base**k
    return np.where(length <= _CODE_WIDTH, code, -1)


def _codes(words: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(letter codes, diacritic codes) of lower-case words, sorted by letter code."""
    planes = [encode_planes(w) for w in words]
    starts = np.zeros(1, dtype=np.int64)
    letter_codes, dia_codes = [], []
    for p in planes:
        length = np.array([len(p)])
        letter_codes.append(int(_window_code(p.letters, starts, length, _LETTER_BASE)[0]))
        dia_codes.append(int(_window_code(p.diacritics, starts, length, _DIA_BASE)[0]))
    order = np.argsort(letter_codes)
    return np.array(letter_codes)[order], np.array(dia_codes)[order]


#: Consonant-final words that are not elided: ἐκ οὐκ οὐχ (+ crasis κοὐκ κοὐχ).
NOT_ELIDED: tuple[str, ...] = ("ἐκ", "οὐκ", "οὐχ", "κοὐκ", "κοὐχ")
#: Unaccented ρ-final words that are not elided: the enclitic περ.
NOT_ELIDED_RHO: tuple[str, ...] = ("περ",)
#: Frequent elided forms the letter rules cannot see (they end in a vowel, ν, or ρ
#: after an accented vowel), matched with their exact diacritics (case aside):
#: δύ’ (δύο) and Δί’ (νὴ Δί’, μὰ Δί’) are no unelided word.
ELIDED_FORMS: tuple[str, ...] = (
    "δι", "ἵν", "ἆρ", "ἄρ", "ἀν", "τιν", "ἐκεῖν", "δεῦρ", "χαῖρ", "πότερ", "δύ", "δί",
)  # fmt: skip


@cache
def _word_lists() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {
        "not_elided": _codes(NOT_ELIDED),
        "not_elided_rho": _codes(NOT_ELIDED_RHO),
        "elided": _codes(ELIDED_FORMS),
    }


def _in_list(letter_code: np.ndarray, dia_code: np.ndarray | None, name: str) -> np.ndarray:
    """Words whose letters (and, when ``dia_code`` is given, diacritics) are in a list."""
    lex_letters, lex_dia = _word_lists()[name]
    hit = np.zeros(len(letter_code), dtype=bool)
    for letters, dia in zip(lex_letters.tolist(), lex_dia.tolist(), strict=True):  # short lists; δι and δί
        same = letter_code == letters
        hit |= same if dia_code is None else same & (dia_code == dia)
    return hit


def _span_count(flags: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    cum = np.concatenate([[0], np.cumsum(flags)])
    return cum[ends + 1] - cum[np.maximum(starts, 0)]


def elision_mask(planes: CharPlanes) -> np.ndarray:
    """Bool per letter: decode renders an elision mark U+2019 after this letter.

    Elision is not a plane, so it is re-derived from the letters.  A word-final
    letter (boundary 1 or 2) is elided when no letter of its word has a grave accent
    (elided words never do; indeclinable names like Ἰακὼβ do) and either

    * the word is one of :data:`ELIDED_FORMS` (exact diacritics: δι ἵν ἆρ δύ); or
    * its last letter is a consonant that cannot end a Greek word (anything but
      ν ρ σ ξ ψ), the word is not ἐκ οὐκ οὐχ κοὐκ κοὐχ (any accents/case), and it
      does not carry an acute on the last of two or more syllables (Ἀβραάμ, Ἰσραήλ:
      an elided word keeps its accent on a non-final syllable or is a monosyllable,
      as in ἔστ’ πάντ’ οὔτ’); or
    * its last letter is ρ after another consonant (σφόδρ’, ἔρρ’), or ρ in a word
      without any accent other than the enclitic περ (παρ’), with the same acute test.

    Known misses are listed in ``tests/codec/test_roundtrip.py``.
    """
    n = len(planes)
    letters = planes.letters
    boundary = planes.boundary
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    is_end = (boundary == BND_WORD_END) | (boundary == BND_SENT_END)
    ends = np.flatnonzero(is_end & (letters < MASK_ID))
    if len(ends) == 0:
        return out
    prev_end = np.maximum.accumulate(np.where(is_end, np.arange(n), -1))
    starts = np.where(ends > 0, prev_end[np.maximum(ends - 1, 0)] + 1, 0)
    length = ends - starts + 1
    dia = planes.diacritics
    known = dia < DIA_UNKNOWN
    accent = np.where(known, dia // 12, 0)
    diaeresis = known & (dia % 2 == 1)

    # syllable nuclei: vowels that are not the second half of a diphthong
    prev = np.concatenate([[PAD_ID], letters[:-1]]).astype(np.intp)
    second = ~diaeresis & (
        ((letters == _IOTA) & _BEFORE_IOTA[prev]) | ((letters == _UPSILON) & _BEFORE_UPSILON[prev])
    )
    second[np.concatenate([[True], is_end[:-1]])] = False  # a diphthong never spans words
    nucleus = _VOWELS[letters] & ~second
    n_syllables = _span_count(nucleus, starts, ends)
    last_nucleus = np.maximum.accumulate(np.where(nucleus, np.arange(n), -1))[ends]
    acute_final = (n_syllables >= 2) & (_span_count(accent == ACCENT_ACUTE, last_nucleus, ends) > 0)
    name_like = acute_final & (planes.capitals[starts] == CAP_UPPER)

    has_grave = _span_count(accent == ACCENT_GRAVE, starts, ends) > 0
    has_accent = _span_count(accent != 0, starts, ends) > 0
    letter_code = _window_code(letters, starts, length, _LETTER_BASE)
    dia_code = _window_code(np.where(known, dia, N_DIA), starts, length, _DIA_BASE)
    last = letters[ends]
    prev_cons = (length >= 2) & _IS_CONSONANT[letters[np.maximum(ends - 1, 0)]]
    double_sigma = (last == SIGMA) & (length >= 2) & (letters[np.maximum(ends - 1, 0)] == SIGMA)
    rho_rule = prev_cons | (~has_accent & ~_in_list(letter_code, None, "not_elided_rho"))
    cons_rule = _ELIDABLE[last] & ~_in_list(letter_code, None, "not_elided")
    by_letter = ~name_like & (np.where(last == RHO, rho_rule, cons_rule) | double_sigma)
    ok = ~has_grave & (_in_list(letter_code, dia_code, "elided") | by_letter)
    out[ends[ok]] = True
    return out


@cache
def _render_table(mask_char: str) -> np.ndarray:
    bases: list[tuple[str, str]] = []  # (lower, upper) per letter code
    for code in range(_N_LETTER_CODES):
        if code < len(ALPHABET):
            bases.append((ALPHABET[code], ALPHABET[code].upper()))
        elif code == MASK_ID:
            bases.append((mask_char, mask_char))
        elif code == _FINAL_SIGMA_CODE:
            bases.append(("ς", "Σ"))
        else:  # BLANK, PAD
            bases.append(("", ""))
    suffixes = [
        (ELISION if e else "") + PUNCT_OUT[p] + (" " if s else "")
        for e in range(2)
        for p in range(N_PUNCT)
        for s in range(2)
    ]
    marks = [state_marks(d) if d < DIA_UNKNOWN else "" for d in range(N_DIA)]
    table = np.empty(_N_LETTER_CODES * 2 * N_DIA * _N_SUFFIX, dtype=object)
    i = 0
    for lower, upper in bases:
        for base in (lower, upper):
            for m in marks:
                piece = unicodedata.normalize("NFC", base + m) if base else ""
                for suffix in suffixes:
                    table[i] = piece + suffix
                    i += 1
    table.setflags(write=False)
    return table


def _check(planes: CharPlanes) -> None:
    limits = {
        "letters": N_CHAR_IDS,
        "boundary": BND_UNKNOWN + 1,
        "diacritics": N_DIA,
        "capitals": CAP_UNKNOWN + 1,
        "punctuation": N_PUNCT,
    }
    for name, limit in limits.items():
        arr = getattr(planes, name)
        if len(arr) and int(arr.max()) >= limit:
            raise InvalidPlanesError(f"plane {name!r} holds id {int(arr.max())}, above {limit - 1}")


def decode_planes(planes: CharPlanes, *, mask_char: str = MASK_PLACEHOLDER) -> str:
    """Render planes as NFC polytonic Greek (see the module docstring for the rules).

    For text made only of modelled characters, ``decode_planes(encode_planes(t)) ==
    canonicalize(t)`` except where the elision rule (:func:`elision_mask`) disagrees
    with the source."""
    if not isinstance(planes, CharPlanes):
        raise InvalidPlanesError(f"expected CharPlanes, got {type(planes).__name__}")
    n = len(planes)
    if n == 0:
        return ""
    _check(planes)
    letters = planes.letters.astype(np.int64)
    boundary = planes.boundary
    upper = planes.capitals == CAP_UPPER
    word_end = (boundary == BND_WORD_END) | (boundary == BND_SENT_END)
    # the source's own elision marks when the planes carry them, else the rule
    elision = planes.elided & word_end if planes.elided is not None else elision_mask(planes)
    final_sigma = (letters == SIGMA) & ~upper & word_end & ~elision  # elided: θάλασσ’
    letters[final_sigma] = _FINAL_SIGMA_CODE
    space = word_end.copy()
    space[-1] = False
    punct = np.where(planes.punctuation == PUNCT_UNKNOWN, PUNCT_NONE, planes.punctuation).astype(np.int64)
    suffix = (elision.astype(np.int64) * N_PUNCT + punct) * 2 + space
    index = ((letters * 2 + upper) * N_DIA + planes.diacritics) * _N_SUFFIX + suffix
    pieces = _render_table(mask_char)[index]
    if planes.prodelided is not None and planes.prodelided.any():
        word_start = np.concatenate([[True], word_end[:-1]])
        pieces = pieces.copy()
        for i in np.flatnonzero(planes.prodelided & word_start).tolist():
            pieces[i] = ELISION + pieces[i]
    text = "".join(pieces.tolist())
    if (planes.letters >= BLANK_ID).any():
        text = " ".join(part for part in text.split(" ") if part)
    return text
