"""The one place that owns every plane id of the released Stoicheia format.

Nothing else in the package hard-codes an id: import the constants from here.
See ``RELEASE_FORMAT.md`` (character planes) for the published definition.
"""

from __future__ import annotations

from typing import Final

#: The 24-letter minimal alphabet; index = letter id.
ALPHABET: Final = "αβγδεζηθικλμνξοπρστυφχψω"
N_ALPHA: Final = 24
MASK_ID: Final = 24
BLANK_ID: Final = 25  # "no character here", targets of elastic gaps
PAD_ID: Final = 26
N_CHAR_IDS: Final = 27

# boundary plane (attached to a letter)
BND_INTERNAL: Final = 0
BND_WORD_END: Final = 1
BND_SENT_END: Final = 2
BND_UNKNOWN: Final = 3
N_BOUNDARY: Final = 4  # input vocabulary; the output head has 3 classes
N_BOUNDARY_OUT: Final = 3

# diacritic plane: ((accent*3 + breathing)*2 + iota_subscript)*2 + diaeresis
ACCENT_NONE, ACCENT_ACUTE, ACCENT_GRAVE, ACCENT_CIRCUMFLEX = 0, 1, 2, 3
BREATHING_NONE, BREATHING_SMOOTH, BREATHING_ROUGH = 0, 1, 2
N_DIA_STATES: Final = 48
DIA_UNKNOWN: Final = 48
N_DIA: Final = 49  # input vocabulary; the output head has 48 classes

# punctuation plane (attached to the letter before the mark)
PUNCT_NONE: Final = 0
PUNCT_COMMA: Final = 1
PUNCT_HIGH_DOT: Final = 2
PUNCT_COLON: Final = 3
PUNCT_PERIOD: Final = 4
PUNCT_QUESTION: Final = 5  # Greek ';', '?', '!'
PUNCT_UNKNOWN: Final = 6
N_PUNCT: Final = 7
N_PUNCT_OUT: Final = 6

# capitalization plane: an output head in the released backbones (2 classes).
CAP_LOWER: Final = 0
CAP_UPPER: Final = 1
#: Codec-only "unknown" for the capitals plane (the released models have no
#: capitals input; fine-tunes add a 2-row input embedding and read 0 here).
CAP_UNKNOWN: Final = 2

# restoration metadata embeddings
N_REGION: Final = 15
REGION_UNKNOWN: Final = 14
N_CENTURY: Final = 15
CENTURY_UNKNOWN: Final = 14


def dia_state(accent: int, breathing: int, iota_subscript: int, diaeresis: int) -> int:
    """Pack the four diacritic features into one plane id."""
    return ((accent * 3 + breathing) * 2 + iota_subscript) * 2 + diaeresis


def dia_features(state: int) -> tuple[int, int, int, int]:
    """Unpack a diacritic plane id into (accent, breathing, iota_subscript, diaeresis)."""
    if not 0 <= state < N_DIA_STATES:
        raise ValueError(f"diacritic state {state} is not in 0..{N_DIA_STATES - 1}")
    diaeresis = state % 2
    iota = (state // 2) % 2
    breathing = (state // 4) % 3
    accent = state // 12
    return accent, breathing, iota, diaeresis
