"""Lookup tables of the codec: what every code point means to the five planes.

Every Basic Multilingual Plane code point gets a *kind* (letter, modelled mark,
other mark, space, punctuation, elision, blocking or transparent non-modelled
character) and, for letters and marks, the letter id, capital bit and diacritic
flags of its canonical (NFD) decomposition.  Astral code points all share the last
row (transparent non-modelled).  The tables are built once, lazily, from
:mod:`unicodedata`, so encoding a whole string is a handful of numpy lookups.

Diacritic *flags* are a bit set (one bit per mark seen on a letter); they are
folded into the plane's 48 states by :data:`FLAGS_TO_STATE`, which resolves
conflicting marks on one letter by priority: circumflex > acute > grave and
rough > smooth breathing.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np

from stoicheia_spacy import alphabet
from stoicheia_spacy.alphabet import (
    ACCENT_ACUTE,
    ACCENT_CIRCUMFLEX,
    ACCENT_GRAVE,
    ACCENT_NONE,
    ALPHABET,
    BREATHING_NONE,
    BREATHING_ROUGH,
    BREATHING_SMOOTH,
    PUNCT_COLON,
    PUNCT_COMMA,
    PUNCT_HIGH_DOT,
    PUNCT_PERIOD,
    PUNCT_QUESTION,
    dia_state,
)
from stoicheia_spacy.assets import cache_folder

# --- kinds of code points -------------------------------------------------------------
KIND_OTHER: Final = 0  # non-modelled, transparent: neither breaks a word nor blocks punctuation
KIND_BLOCK: Final = 1  # non-modelled letter or digit (Latin, ϝ ϙ ϛ ϡ ͱ ϸ, 1 2 3...): blocks punctuation
KIND_LETTER: Final = 2  # one of the 24 modelled letters (any case, any variant, precomposed)
KIND_MARK: Final = 3  # modelled combining mark (accents, breathings, iota subscript, diaeresis, stripped)
KIND_XMARK: Final = 4  # any other combining mark: stays with its base, not modelled
KIND_SPACE: Final = 5
KIND_PUNCT: Final = 6
KIND_ELISION: Final = 7

# --- diacritic flags (bits) -----------------------------------------------------------
F_ACUTE: Final = 1
F_GRAVE: Final = 2
F_CIRCUMFLEX: Final = 4
F_SMOOTH: Final = 8
F_ROUGH: Final = 16
F_IOTA: Final = 32
F_DIAERESIS: Final = 64
N_FLAGS: Final = 128
F_ACCENTS: Final = F_ACUTE | F_GRAVE | F_CIRCUMFLEX
F_BREATHINGS: Final = F_SMOOTH | F_ROUGH

#: Combining marks the codec understands, with their flags.  Macron, breve and dot
#: below (flag 0) are accepted and stripped.  Circumflex look-alikes (U+0302, U+0303,
#: U+0311) fold to perispomeni.  U+0340/U+0341/U+0343/U+0344 reach these through NFD.
MARK_FLAGS: Final[dict[str, int]] = {
    "\u0301": F_ACUTE,
    "\u0300": F_GRAVE,
    "\u0342": F_CIRCUMFLEX,
    "\u0302": F_CIRCUMFLEX,
    "\u0303": F_CIRCUMFLEX,
    "\u0311": F_CIRCUMFLEX,
    "\u0313": F_SMOOTH,
    "\u0314": F_ROUGH,
    "\u0345": F_IOTA,
    "\u0308": F_DIAERESIS,
    "\u0304": 0,  # macron
    "\u0306": 0,  # breve
    "\u0323": 0,  # dot below
}

#: The one codepoint decode and canonicalize emit for each mark, in rendering order
#: (breathing, diaeresis, accent, iota subscript).
SMOOTH: Final = "\u0313"
ROUGH: Final = "\u0314"
DIAERESIS: Final = "\u0308"
ACUTE: Final = "\u0301"
GRAVE: Final = "\u0300"
CIRCUMFLEX: Final = "\u0342"
IOTA_SUBSCRIPT: Final = "\u0345"

#: The elision mark emitted by decode/canonicalize (RIGHT SINGLE QUOTATION MARK) and
#: the variants folded to it.
ELISION: Final = "\u2019"
ELISION_VARIANTS: Final = "\u2019\u0027\u02bc\u1fbf\u1fbd"
#: Code points that write prodelision before a word (``νέα ̓στὶ``, ``μὴ ’ξαπατηθῇς``):
#: the elision variants and the combining comma above / koronis standing alone.
PRODELISION_CPS: Final = tuple(ord(c) for c in ELISION_VARIANTS + "\u0313\u0343")

#: Letter variants folded to the 24-letter alphabet (beyond plain upper/lower case).
LETTER_VARIANTS: Final[dict[str, str]] = {
    "ς": "σ",
    "ϲ": "σ",
    "Ϲ": "Σ",
    "ϐ": "β",
    "ϑ": "θ",
    "ϴ": "Θ",
    "ϕ": "φ",
    "ϰ": "κ",
    "ϱ": "ρ",
    "ϖ": "π",
    "ϵ": "ε",
    "ϒ": "Υ",
    "µ": "μ",  # MICRO SIGN, a frequent mis-encoding of mu
}

#: Punctuation classes by (NFD) character.  NFD already maps U+037E GREEK QUESTION
#: MARK to ';' and U+0387 GREEK ANO TELEIA to U+00B7.
PUNCT_CLASS: Final[dict[str, int]] = {
    ",": PUNCT_COMMA,
    "\u00b7": PUNCT_HIGH_DOT,
    ":": PUNCT_COLON,
    ".": PUNCT_PERIOD,
    ";": PUNCT_QUESTION,
    "?": PUNCT_QUESTION,
    "!": PUNCT_QUESTION,
}
#: What decode emits for each punctuation id (index = id; UNKNOWN renders nothing).
PUNCT_OUT: Final = ("", ",", "\u00b7", ":", ".", ";", "")
#: Punctuation classes that end a sentence (boundary 2 on the letter before them).
SENTENCE_END_PUNCT: Final = frozenset({PUNCT_PERIOD, PUNCT_QUESTION})

#: Placeholder decode emits for a MASK letter (U+25CC DOTTED CIRCLE, the usual
#: stand-in for a missing base letter; known diacritics still render on it).
MASK_PLACEHOLDER: Final = "\u25cc"

#: Consonants: letter ids.  NON_FINAL = consonants that cannot end a Greek word.
CONSONANTS: Final = frozenset(ALPHABET.index(c) for c in "βγδζθκλμνξπρστφχψ")
FINAL_CONSONANTS: Final = frozenset(ALPHABET.index(c) for c in "νρσξψ")
RHO: Final = ALPHABET.index("ρ")
SIGMA: Final = ALPHABET.index("σ")

TABLE_SIZE: Final = 0x10001  # BMP + one row for every astral code point


def _letter_bases() -> dict[str, tuple[int, int]]:
    bases: dict[str, tuple[int, int]] = {}
    for i, ch in enumerate(ALPHABET):
        bases[ch] = (i, 0)
        bases[ch.upper()] = (i, 1)
    for variant, target in LETTER_VARIANTS.items():
        bases[variant] = bases[target]
    return bases


LETTER_BASES: Final = _letter_bases()


@dataclass(frozen=True)
class CodepointTables:
    """Per-code-point arrays (length :data:`TABLE_SIZE`)."""

    kind: np.ndarray  # uint8, KIND_*
    letter: np.ndarray  # uint8 letter id (letters only)
    cap: np.ndarray  # uint8 0/1 (letters only)
    flags: np.ndarray  # uint8 diacritic flags (letters and marks)
    punct: np.ndarray  # uint8 punctuation class (punctuation only)


def _tables_key() -> str:
    """What the tables are built from: the Unicode version and the code of this module and the alphabet."""
    digest = hashlib.sha256(unicodedata.unidata_version.encode("ascii"))
    for source in (__file__, alphabet.__file__):
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()[:20]


@cache
def codepoint_tables() -> CodepointTables:
    """The per-code-point tables: built once (a pass over the BMP, ~0.1 s) and kept in
    :func:`~stoicheia_spacy.assets.cache_folder`, keyed by what they are built from."""
    path = cache_folder() / f"codepoint-tables-{_tables_key()}.npy"
    try:
        stacked = np.load(path)
    except (OSError, ValueError):
        stacked = None
    if stacked is None or stacked.shape != (5, TABLE_SIZE) or stacked.dtype != np.uint8:
        stacked = np.stack([getattr(_build_tables(), f) for f in ("kind", "letter", "cap", "flags", "punct")])
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.npy")
            np.save(tmp, stacked)
            os.replace(tmp, path)
        except OSError:  # a read-only cache: build at every start
            pass
    return CodepointTables(*(np.ascontiguousarray(row) for row in stacked))


def _build_tables() -> CodepointTables:
    # plain bytearrays while filling (fast item writes), numpy views at the end
    kind = bytearray([KIND_OTHER]) * TABLE_SIZE
    letter = bytearray(TABLE_SIZE)
    cap = bytearray(TABLE_SIZE)
    flags = bytearray(TABLE_SIZE)
    punct = bytearray(TABLE_SIZE)
    for cp in range(0x10000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        nfd = unicodedata.normalize("NFD", ch)
        head, tail = nfd[0], nfd[1:]
        if head in LETTER_BASES and all(m in MARK_FLAGS for m in tail):
            kind[cp] = KIND_LETTER
            letter[cp], cap[cp] = LETTER_BASES[head]
            for m in tail:
                flags[cp] |= MARK_FLAGS[m]
        elif all(m in MARK_FLAGS for m in nfd):
            kind[cp] = KIND_MARK
            for m in nfd:
                flags[cp] |= MARK_FLAGS[m]
        elif ch in ELISION_VARIANTS:
            kind[cp] = KIND_ELISION
        elif nfd in PUNCT_CLASS:
            kind[cp] = KIND_PUNCT
            punct[cp] = PUNCT_CLASS[nfd]
        elif ch.isspace():
            kind[cp] = KIND_SPACE
        else:
            category = unicodedata.category(ch)
            if category[0] == "M":
                kind[cp] = KIND_XMARK
            elif category[0] in "LN":
                kind[cp] = KIND_BLOCK
    arrays = [np.frombuffer(bytes(a), dtype=np.uint8) for a in (kind, letter, cap, flags, punct)]
    return CodepointTables(*arrays)


def _resolve(flag_set: int) -> tuple[int, int, int, int]:
    if flag_set & F_CIRCUMFLEX:
        accent = ACCENT_CIRCUMFLEX
    elif flag_set & F_ACUTE:
        accent = ACCENT_ACUTE
    elif flag_set & F_GRAVE:
        accent = ACCENT_GRAVE
    else:
        accent = ACCENT_NONE
    if flag_set & F_ROUGH:
        breathing = BREATHING_ROUGH
    elif flag_set & F_SMOOTH:
        breathing = BREATHING_SMOOTH
    else:
        breathing = BREATHING_NONE
    return accent, breathing, int(bool(flag_set & F_IOTA)), int(bool(flag_set & F_DIAERESIS))


def resolve_flags(flag_set: int) -> int:
    """The diacritic plane id of a set of mark flags (conflicts resolved by priority)."""
    return dia_state(*_resolve(flag_set))


#: flags (0..127) -> diacritic plane id
FLAGS_TO_STATE: Final = np.array([resolve_flags(f) for f in range(N_FLAGS)], dtype=np.uint8)
FLAGS_TO_STATE.setflags(write=False)


def state_marks(state: int) -> str:
    """The combining marks (NFD, rendering order) of a diacritic plane id."""
    diaeresis = state % 2
    iota = (state // 2) % 2
    breathing = (state // 4) % 3
    accent = state // 12
    out = ("", SMOOTH, ROUGH)[breathing]
    out += DIAERESIS if diaeresis else ""
    out += ("", ACUTE, GRAVE, CIRCUMFLEX)[accent]
    out += IOTA_SUBSCRIPT if iota else ""
    return out


def flag_marks(flag_set: int) -> str:
    """The canonical combining marks for a set of mark flags."""
    return state_marks(resolve_flags(flag_set))

