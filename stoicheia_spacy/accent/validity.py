"""Which diacritic states a letter can carry and which punctuation a boundary can: the
validity tables the plane decoder (:mod:`.predict`) and the lexicon lattice (:mod:`.lattice`) share."""

from __future__ import annotations

from functools import cache

import numpy as np

from ..alphabet import (
    ACCENT_CIRCUMFLEX,
    ALPHABET,
    BLANK_ID,
    BND_INTERNAL,
    BND_SENT_END,
    BND_WORD_END,
    BREATHING_NONE,
    MASK_ID,
    N_BOUNDARY_OUT,
    N_CHAR_IDS,
    N_DIA_STATES,
    N_PUNCT_OUT,
    PAD_ID,
    PUNCT_COLON,
    PUNCT_COMMA,
    PUNCT_HIGH_DOT,
    PUNCT_NONE,
    PUNCT_PERIOD,
    PUNCT_QUESTION,
    dia_features,
)

#: The vowels of the codec alphabet.
VOWELS = "αεηιουω"


@cache
def dia_valid_table() -> np.ndarray:
    """(27, 48) bool: diacritic state s is possible on letter id l.

    Consonants: bare only (ρ: bare or rough breathing); vowels: iota subscript only on
    α η ω, diaeresis only on ι υ and never with a breathing, no circumflex on ε ο.
    MASK allows every state, BLANK/PAD only the bare state."""
    table = np.zeros((N_CHAR_IDS, N_DIA_STATES), dtype=bool)
    for s in range(N_DIA_STATES):
        accent, breathing, iota, diaeresis = dia_features(s)
        for letter, ch in enumerate(ALPHABET):
            if ch not in VOWELS:
                table[letter, s] = s == 0 or (ch == "ρ" and (accent, breathing, iota, diaeresis) == (0, 2, 0, 0))
                continue
            ok = not (iota and ch not in "αηω")
            ok &= not (diaeresis and (ch not in "ιυ" or breathing != BREATHING_NONE))
            ok &= not (accent == ACCENT_CIRCUMFLEX and ch in "εο")
            table[letter, s] = ok
    table[MASK_ID] = True
    table[BLANK_ID, 0] = True
    table[PAD_ID, 0] = True
    return table


@cache
def dia_breathing() -> np.ndarray:
    """The breathing of every diacritic state."""
    return np.array([dia_features(s)[1] for s in range(N_DIA_STATES)], dtype=np.int64)


@cache
def dia_accent() -> np.ndarray:
    """The accent of every diacritic state (0: none)."""
    return np.array([dia_features(s)[0] for s in range(N_DIA_STATES)], dtype=np.int64)


@cache
def pair_valid() -> np.ndarray:
    """(3, 6) bool: boundary b may carry punctuation p (not counting the last letter)."""
    ok = np.zeros((N_BOUNDARY_OUT, N_PUNCT_OUT), dtype=bool)
    ok[BND_INTERNAL, PUNCT_NONE] = True
    ok[BND_WORD_END, [PUNCT_NONE, PUNCT_COMMA, PUNCT_HIGH_DOT, PUNCT_COLON]] = True
    ok[BND_SENT_END, [PUNCT_PERIOD, PUNCT_QUESTION]] = True
    return ok
