"""Candidates an editor can paste: each restoration candidate rendered with accents and word
division, as the accentuator renders it in the gap's own context.

A candidate is scored letters-only (lower case, no diacritics: ``"και τωι"``). For display,
:func:`accent_candidates` writes the candidate into a short window of its Doc's text (whole
words, at most ``context`` characters a side, cut before any other Leiden markup, its diacritics
removed so that every accent is predicted in one consistent decoding), runs the
pipeline's encoder once over all such windows of a batch, decodes them with the accentuator
(its lexicon included) and reads back the characters the candidate's letters became
(``"καὶ τῶι"``; a candidate inside a word, as ``ουλ`` in ``β[ουλ]ῆι``, gets the accents the
whole word takes). It sets ``item["accented"]``: one string per candidate (the first ``top``;
``None`` where the accentuator could not align it), parallel to ``item["candidates"]``, whose
texts stay the letters-only form used for scoring. The ``stoicheia_accentuator`` pipe calls it
for Docs the restorer annotated; ``stoicheia restore --accent`` shows the result.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

#: Characters that open or close Leiden markup: a context window stops before them.
MARKUP = frozenset("[]⟦⟧{}()<>⸢⸣")


def bare(text: str) -> str:
    """``text`` without diacritics (an iota subscript becomes an adscript ι), so that the encoder
    reads the window as unaccented text and the accentuator predicts every accent."""
    out = []
    for ch in unicodedata.normalize("NFD", text):
        if ch == "\u0345":
            out.append("ι")
        elif not unicodedata.combining(ch):
            out.append(ch)
    return "".join(out)


def context_window(text: str, start: int, end: int, context: int) -> tuple[str, str]:
    """The text left of ``start`` and right of ``end`` shown around a candidate: at most
    ``context`` characters a side, whole words, stopping before other markup."""
    left = text[max(0, start - context):start]
    cut = max((i for i, ch in enumerate(left) if ch in MARKUP), default=-1)
    if cut >= 0:
        left = left[cut + 1:]
    elif start - context > 0 and " " in left:  # clipped inside a word: start at the next word
        left = left[left.index(" ") + 1:]
    right = text[end:end + context]
    cut = min((i for i, ch in enumerate(right) if ch in MARKUP), default=-1)
    if cut >= 0:
        right = right[:cut]
    elif end + context < len(text) and " " in right:
        right = right[:right.rindex(" ")]
    return left, right


def _slice(doc: Any, lo: int, hi: int) -> str | None:
    """The rendered characters that the source characters ``lo:hi`` of ``doc`` became."""
    rendered = doc._.accent_text
    alignment = doc._.source_alignment
    if rendered is None or alignment is None:
        return None
    hits = alignment.source_to_rendered[lo:hi]
    hits = hits[hits >= 0]
    if not len(hits):
        return None
    a, b = int(hits.min()), int(hits.max()) + 1
    while b < len(rendered) and unicodedata.combining(rendered[b]):
        b += 1
    return unicodedata.normalize("NFC", rendered[a:b])


def accent_candidates(nlp: Any, accentuator: Any, docs: Iterable[Any], *, top: int = 5, context: int = 24) -> None:
    """Set ``item["accented"]`` on every restoration of ``docs`` (module doc): one batched
    encoder forward over the candidate windows, decoded by ``accentuator``."""
    jobs: list[tuple[dict[str, Any], int, int, int]] = []  # (item, candidate index, lo, hi)
    texts: list[str] = []
    for doc in docs:
        for item in doc._.restorations or []:
            item["accented"] = [None] * len(item["candidates"])
            left, right = (bare(side) for side in context_window(doc.text, item["start"], item["end"], context))
            for k, (cand, *_rest) in enumerate(item["candidates"][:top]):
                if not cand.strip():
                    continue
                jobs.append((item, k, len(left), len(left) + len(cand)))
                texts.append(f"{left}{cand}{right}")
    if not jobs:
        return
    encoder = next((proc for name, proc in nlp.pipeline
                    if nlp.get_pipe_meta(name).factory == "stoicheia_encoder"), None)
    if encoder is None:
        return
    windows = list(encoder.pipe(nlp.make_doc(t) for t in texts))
    for (item, k, lo, hi), window in zip(jobs, windows, strict=True):
        accentuator.annotate(window)
        item["accented"][k] = _slice(window, lo, hi)


__all__ = ["MARKUP", "accent_candidates", "bare", "context_window"]
