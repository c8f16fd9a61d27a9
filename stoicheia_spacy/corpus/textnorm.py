"""Text normalisation shared by the corpus pipeline: source fix-ups, matching keys, sentences.

Matching keys (``word_keys``) are deliberately coarse: accents, breathings, iota subscripts,
case and final/lunate sigma are folded away, so alternative editions that differ only in
diacritics still collide. Everything that is not a run of the 24 base letters (digits, Latin,
archaic letters, sigla) is ignored for matching.
"""

from __future__ import annotations

import re
import unicodedata

_COMBINING = re.compile("[\u0300-\u036f]+")
_KEY_WORD = re.compile("[α-ω]+")
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


def word_keys(text: str) -> list[str]:
    """Matching keys of the Greek words of ``text`` (diacritics, case, sigma forms folded)."""
    return _KEY_WORD.findall(strip_marks(text))


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
