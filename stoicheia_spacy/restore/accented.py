"""Candidates an editor can paste: each restoration candidate rendered with accents and word
division, as the accentuator renders it in the gap's own context.

A candidate is scored letters-only (lower case, no diacritics: ``"και τωι"``). For display,
:func:`accent_candidates` writes the candidate into a short window of its Doc's text (whole
words, at most ``context`` characters a side, cut before any other Leiden markup, its diacritics
removed so that every accent is predicted in one consistent decoding), runs the pipeline's
encoder once over all such windows of a batch, decodes them with the accentuator (its lexicon
included) and reads back the characters the candidate's letters became (``"καὶ τῶι"``; a
candidate inside a word, as ``ουλ`` in ``β[ουλ]ῆι``, gets the accents the whole word takes).
It returns the restorations with ``Candidate.accented`` set on the first ``top`` candidates
(``None`` where the accentuator could not align it); ``Candidate.text`` stays the letters-only
form used for scoring.

The restorer calls it as a declared service: its ``accenter`` block
(:class:`CandidateAccenter`, ``stoicheia.CandidateAccenter.v1``) names the accentuator pipe
whose decoding it borrows; the encoder is the restorer's own upstream (its backbone
reference). Without that pipe in the pipeline (a restore-only pipeline) nothing is accented;
``stoicheia restore --accent`` loads it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from spacy.util import registry

from ..errors import ConfigError
from .results import Restoration

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


def accent_candidates(nlp: Any, encoder: Any, accentuator: Any, docs: Sequence[Any],
                      restorations: Sequence[Sequence[Restoration]], *, top: int = 5,
                      context: int = 24) -> list[list[Restoration]]:
    """``restorations`` (one list per Doc of ``docs``) with the accented forms of their first
    ``top`` candidates (module doc): one batched forward of the ``encoder`` pipe over the
    candidate windows (Docs of ``nlp.make_doc``), decoded by the ``accentuator`` pipe."""
    jobs: list[tuple[int, int, int, int, int]] = []  # (doc, item, candidate, lo, hi)
    texts: list[str] = []
    for d, (doc, items) in enumerate(zip(docs, restorations, strict=True)):
        for i, item in enumerate(items):
            left, right = (bare(side) for side in context_window(doc.text, item.start, item.end, context))
            for k, cand in enumerate(item.candidates[:top]):
                if not cand.text.strip():
                    continue
                jobs.append((d, i, k, len(left), len(left) + len(cand.text)))
                texts.append(f"{left}{cand.text}{right}")
    forms: dict[tuple[int, int], list[str | None]] = {}
    if jobs:
        windows = list(encoder.pipe(nlp.make_doc(t) for t in texts))
        for (d, i, k, lo, hi), window in zip(jobs, windows, strict=True):
            accentuator.annotate(window)
            row = forms.setdefault((d, i), [None] * len(restorations[d][i].candidates))
            text = restorations[d][i].candidates[k].text
            form = _slice(window, lo, hi)
            # a candidate that starts or ends a word keeps its word boundary
            row[k] = None if form is None else (
                text[: len(text) - len(text.lstrip())] + form.strip() + text[len(text.rstrip()):])
    return [[_with_forms(item, forms.get((d, i))) for i, item in enumerate(items)]
            for d, items in enumerate(restorations)]


def _with_forms(item: Restoration, forms: list[str | None] | None) -> Restoration:
    if forms is None:
        return item
    cands = tuple(replace(c, accented=f) for c, f in zip(item.candidates, forms, strict=True))
    return replace(item, candidates=cands)


@dataclass(frozen=True)
class CandidateAccenter:
    """The restorer's accenting service (``[components.stoicheia_restorer.accenter]``,
    ``stoicheia.CandidateAccenter.v1``): accent the first ``top`` candidates of each gap with
    the pipe named ``accentuator`` (``top`` null: that pipe's ``candidates`` setting; 0 or a
    pipeline without the pipe: nothing is accented), in windows of ``context`` characters a side."""

    accentuator: str | None = "stoicheia_accentuator"
    top: int | None = None
    context: int = 24

    def __post_init__(self) -> None:
        if self.top is not None and (isinstance(self.top, bool) or int(self.top) < 0):
            raise ConfigError(f"accenter top must be an integer >= 0 or null, got {self.top!r}")
        if int(self.context) < 1:
            raise ConfigError(f"accenter context must be positive, got {self.context!r}")

    def pipe_of(self, nlp: Any) -> Any:
        """The accentuator pipe this service uses in ``nlp`` (None: not in the pipeline)."""
        if self.accentuator is None or self.accentuator not in nlp.pipe_names:
            return None
        return nlp.get_pipe(self.accentuator)

    def __call__(self, nlp: Any, encoder: str, docs: Sequence[Any],
                 restorations: Sequence[Sequence[Restoration]]) -> list[list[Restoration]]:
        """``restorations`` with accented candidates (unchanged where nothing is accented)."""
        accentuator = self.pipe_of(nlp)
        top = self.top if self.top is not None else int(getattr(getattr(accentuator, "settings", None),
                                                                "candidates", 0))
        if accentuator is None or not top or encoder not in nlp.pipe_names \
                or not any(items for items in restorations):
            return [list(items) for items in restorations]
        return accent_candidates(nlp, nlp.get_pipe(encoder), accentuator, docs, restorations,
                                 top=int(top), context=int(self.context))


candidate_accenter = registry.misc.register("stoicheia.CandidateAccenter.v1", func=CandidateAccenter)

__all__ = ["MARKUP", "CandidateAccenter", "accent_candidates", "bare", "context_window"]
