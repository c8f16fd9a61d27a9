"""The evaluation formats of the published restoration benchmarks.

* Ithaca JSON records ``{id, L, start, gold, text}``: ``text`` holds ``?`` × L at
  ``[start, start + L)`` (the target) and ``-`` for each letter of a real lacuna
  (context only); :func:`ithaca_text` builds one from a clean document.
* The chat format of the recently-edited-documents release (Cullhed 2024):
  ``{"messages": [{"role": "user", "content": ...}, {"role": "assistant", "content": gold}]}``,
  lower-case unaccented Greek with word spaces and exactly one ``[N letters missing]``
  placeholder, N counting letters only (:func:`to_chat`, :func:`parse_chat`).
* That release's normalisation (:func:`release_normalize`: final sigma folded, spaces,
  ``.``, ``·`` and ``0`` removed; the hypothesis truncated to the reference's length),
  scored with the Levenshtein CER (:func:`release_cer`), as in the paper's tables on
  recently edited documents.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..errors import ScoringError

__all__ = ["CHAT_GAP", "bare", "plain", "ithaca_text", "parse_chat", "release_cer", "release_match",
           "release_normalize", "to_chat"]

CHAT_GAP = re.compile(r"\[(\d+) letters? missing\]")


def plain(text: str) -> str:
    """Lower case without diacritics (the chat format's text)."""
    nfd = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in nfd if not unicodedata.combining(ch)).lower())


def bare(text: str) -> str:
    """:func:`plain` with sigma folded to σ, spaces kept."""
    return plain(text).replace("ς", "σ").replace("ϲ", "σ")


def _context(text: str) -> str:
    # "?" is the target marker and "-" the lacuna marker: free them in the context
    return text.replace("?", "").replace("-", " ").replace("…", "-")


def ithaca_text(text: str, start: int, length: int) -> tuple[str, int]:
    """``text`` in Ithaca notation with ``?`` × ``length`` at ``start`` (an ellipsis ``…``
    of the source becomes ``-``; stray ``?``/``-`` are removed) and the target's new start."""
    if not 0 <= start <= start + length <= len(text):
        raise ScoringError(f"gap [{start}, {start + length}) outside a text of {len(text)} characters")
    left = _context(text[:start])
    return left + "?" * length + _context(text[start + length :]), len(left)


def to_chat(record: dict[str, Any]) -> dict[str, Any]:
    """An Ithaca record in the release's chat format (N = letters of the gold, spaces not
    counted; context lower case without diacritics)."""
    text, start, L = record["text"], int(record["start"]), int(record["L"])
    n = sum(1 for ch in record["gold"] if ch != " ")
    user = plain(text[:start]) + f"[{n} letters missing]" + plain(text[start + L :])
    return {"id": record.get("id"), "L": L,
            "messages": [{"role": "user", "content": user}, {"role": "assistant", "content": plain(record["gold"])}]}


def parse_chat(record: dict[str, Any]) -> tuple[str, int, int, str]:
    """``(ithaca_text, start, letters, gold)`` of a chat record: the placeholder becomes
    ``?`` × N (N letters; the decoder places word breaks freely)."""
    msgs = {m["role"]: m["content"] for m in record.get("messages", [])}
    user, gold = msgs.get("user", ""), msgs.get("assistant", "")
    found = list(CHAT_GAP.finditer(user))
    if len(found) != 1 or not gold:
        raise ScoringError("a chat record needs exactly one '[N letters missing]' and an assistant answer")
    m = found[0]
    n = int(m.group(1))
    if n < 1:
        raise ScoringError("'[0 letters missing]' is not a gap")
    left = _context(user[: m.start()])
    return left + "?" * n + _context(user[m.end() :]), len(left), n, gold


def release_normalize(text: str) -> str:
    """The release's normalisation: final sigma folded, spaces, ``.``, ``·``, ``0`` removed."""
    return re.sub(r"[ .·0]", "", text.replace("ς", "σ"))


def release_cer(prediction: str, gold: str) -> float:
    """Levenshtein CER under the release's normalisation (hypothesis truncated to the
    normalised reference's length); inputs are compared as :func:`bare` text."""
    ref = release_normalize(bare(gold))
    if not ref:
        raise ScoringError("empty gold after normalisation")
    hyp = release_normalize(bare(prediction))[: len(ref)]
    import Levenshtein  # a lab dependency ([lab] extra), imported when scoring

    return Levenshtein.distance(hyp, ref) / len(ref)


def release_match(prediction: str, gold: str) -> bool:
    """Exact match under the release's rule (normalised, truncated)."""
    ref = release_normalize(bare(gold))
    return release_normalize(bare(prediction))[: len(ref)] == ref
