"""Quality tiers.

The cleanliness score of a record is the mean of two rates in [0, 1]:

* ``char_rate`` = Greek letters / (Greek letters + junk characters), where junk is every
  non-space character that is neither a Greek letter, a combining mark nor standard punctuation
  (Latin letters, digits, sigla, brackets, OCR debris);
* ``lexicon_rate`` = share of word tokens (diacritics folded, ``textnorm.word_keys``) found in
  the Hunspell Ancient Greek form list (when a lexicon is given; else the score is ``char_rate``).

A record scoring at least ``PRISTINE_THRESHOLD`` is **pristine** (tier ``gold``), below it
**repaired** (tier ``silver``: kept, but flagged for repair/down-weighting). Synthetic records
(``record["synthetic"]`` true or a source in ``SYNTHETIC_SOURCES``) are **bronze**.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

from stoicheia_spacy.textnorm import strip_marks, word_keys

from .readers import Record

PRISTINE_THRESHOLD = 0.95
SYNTHETIC_SOURCES: frozenset[str] = frozenset()
TIER_OF_QUALITY = {"pristine": "gold", "repaired": "silver", "synthetic": "bronze"}

_JUNK = re.compile(r"[^α-ωϲ\s.,;:·\u037e\u0387!?'’ʼ\"«»()\-—]")
_GREEK = re.compile(r"[α-ωϲ]")


def load_lexicon(path: Path | str) -> frozenset[str]:
    """Diacritic-folded word keys of a one-form-per-line list (plain or ``.xz``)."""
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return frozenset(k for line in fh for k in word_keys(line))


def cleanliness(text: str, lexicon: frozenset[str] | None = None) -> dict[str, float]:
    """Score a text (see module docstring): ``{"score", "char_rate", "lexicon_rate"}``."""
    folded = strip_marks(text)
    greek = len(_GREEK.findall(folded))
    junk = len(_JUNK.findall(folded))
    char_rate = greek / (greek + junk) if greek + junk else 0.0
    if lexicon is None:
        return {"score": char_rate, "char_rate": char_rate, "lexicon_rate": float("nan")}
    words = word_keys(text)
    lex_rate = sum(w in lexicon for w in words) / len(words) if words else 0.0
    return {"score": 0.5 * (char_rate + lex_rate), "char_rate": char_rate, "lexicon_rate": lex_rate}


def assign_tier(record: Record, lexicon: frozenset[str] | None = None,
                threshold: float = PRISTINE_THRESHOLD) -> Record:
    """Return ``record`` with ``tier``, ``quality`` and ``cleanliness`` set (a new dict)."""
    out = dict(record)
    if record.get("synthetic") or record.get("source") in SYNTHETIC_SOURCES:
        out["quality"], out["cleanliness"] = "synthetic", None
    else:
        score = cleanliness(record["text"], lexicon)["score"]
        out["quality"] = "pristine" if score >= threshold else "repaired"
        out["cleanliness"] = round(score, 4)
    out["tier"] = TIER_OF_QUALITY[out["quality"]]
    return out
