"""Text normalisation shared by the corpus pipeline: source fix-ups, matching keys, sentences.

Matching keys (``word_keys``) are deliberately coarse: accents, breathings, iota subscripts,
case and final/lunate sigma are folded away, so alternative editions that differ only in
diacritics still collide. Everything that is not a run of the 24 base letters (digits, Latin,
archaic letters, sigla) is ignored for matching.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import numpy as np

_COMBINING = re.compile("[\u0300-\u036f]+")
_KEY_WORD = re.compile("[α-ω]+")
_NOT_KEY = re.compile("[^α-ω]")
# one or more terminal marks followed by whitespace or the end of the text
_SENT_END = re.compile("[.;\u037e\u0387\u00b7!?]+(?=\\s|$)")
_LEADING_MARKS = re.compile("(?<![^\\s\"'(\\[«‘“—-])([\u0300-\u036f]+)(\\w)")
_TRANSLATE_KEY = str.maketrans({"ς": "σ", "ϲ": "σ", "Ϲ": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ"})


def fix_leading_combining(text: str) -> str:
    """Move combining marks written *before* a word's first letter onto that letter.

    Tesserae writes capitals with their breathing/accent in front (``\u0313Ασσυρίων``);
    the canonical form carries them on the letter (``Ἀσσυρίων``). Result is NFC.
    """
    return unicodedata.normalize("NFC", _LEADING_MARKS.sub(lambda m: m.group(2) + m.group(1), text))


def fix_tesserae_line(text: str) -> str:
    """Canonical text for one Tesserae line: leading marks fixed, beta-code ``:`` as ano teleia."""
    return fix_leading_combining(text).replace(":", "\u00b7")


def strip_marks(text: str) -> str:
    """Lower-cased text without combining marks (NFD based), final sigma folded to σ."""
    return _COMBINING.sub("", unicodedata.normalize("NFD", text)).lower().translate(_TRANSLATE_KEY)


class _KeyTable(dict[int, str]):
    """``str.translate`` table, filled per code point on first sight: a character becomes its
    folded key letters (``strip_marks``), anything that is not a key letter a space, and a
    stripped combining mark nothing, so ``text.translate(table).split()`` equals
    ``_KEY_WORD.findall(strip_marks(text))`` (folding is per character; the one contextual
    lower-casing, final sigma, folds to σ either way) at a fraction of the cost."""

    def __missing__(self, cp: int) -> str:
        value = _NOT_KEY.sub(" ", strip_marks(chr(cp)))
        self[cp] = value
        return value


_KEY_TABLE = _KeyTable()
_MULTI = np.uint32(0xFFFFFFFF)  # a BMP character that folds to several key letters


@cache
def _bmp_key_codes() -> np.ndarray:
    """``_KeyTable`` as a code-point array over the Basic Multilingual Plane (0 = dropped)."""
    codes = np.zeros(0x10000, dtype=np.uint32)
    for cp in range(0x10000):
        value = _KEY_TABLE[cp]
        codes[cp] = ord(value) if len(value) == 1 else (0 if not value else 32 if value.isspace() else _MULTI)
    return codes


def word_keys(text: str) -> list[str]:
    """Matching keys of the Greek words of ``text`` (diacritics, case, sigma forms folded)."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if not len(cps) or int(cps.max()) > 0xFFFF:
        return text.translate(_KEY_TABLE).split()
    codes = _bmp_key_codes()[cps]
    if (codes == _MULTI).any():
        return text.translate(_KEY_TABLE).split()
    return codes[codes != 0].tobytes().decode("utf-32-le").split()


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Half-open character spans tiling ``text`` into sentences.

    A sentence ends after a run of terminal punctuation (. ; · ? !) followed by whitespace or the
    end of the text; text without terminal punctuation is one sentence. The spans cover every
    character exactly once, so joining them gives back ``text``.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        spans.append((start, m.end()))
        start = m.end()
    if start < len(text) or not spans:
        spans.append((start, len(text)))
    return spans


# --- TEMPORARY: unicodedata-based character classes until stoicheia_spacy.codec lands. ------
# Once the codec exists, ``stats.count_text`` uses ``encode_planes`` for the letter count and
# this helper only classifies the characters that are *not* codec positions.
GREEK_LETTERS = frozenset("αβγδεζηθικλμνξοπρςστυφχψωϲ")
PUNCT_MARKS = frozenset(".,;:\u037e\u0387\u00b7!?")


def char_class(ch: str) -> str:
    """Class of one character: letter | space | punct | digit | latin | greek_other | mark | other."""
    if ch.isspace():
        return "space"
    if ch in PUNCT_MARKS:
        return "punct"
    base = unicodedata.normalize("NFD", ch)[0].lower()
    if base in GREEK_LETTERS:
        return "letter"
    cat = unicodedata.category(ch)
    if cat.startswith("M"):
        return "mark"
    if cat == "Nd":
        return "digit"
    if "LATIN" in unicodedata.name(ch, ""):
        return "latin"
    if "GREEK" in unicodedata.name(ch, "") or "COPTIC" in unicodedata.name(ch, ""):
        return "greek_other"
    return "other"
