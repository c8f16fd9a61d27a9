"""The restorer's results: ``doc._.restorations`` is a list (document order) of :class:`Restoration`.

A :class:`Restoration` is one gap: its markup's character span in ``doc.text``, its width (or
width range), its ranked :class:`Candidate` s, and the top candidate's calibrated confidence.
Both are frozen; ``to_dict()`` gives JSON::

    {"start": 22, "end": 26, "gap_index": 0, "min_width": 3, "max_width": 3, "kind": "lost",
     "status": "restored", "abstain": false, "confidence": 0.83, "confident": true,
     "candidates": [{"text": "σοι", "score": -1.2, "share": 0.71, "accented": "σοι",
                     "parallels": [{"id": "bgu.1.100", "source": "ddbdp", "text": "...",
                                    "start": 9, "end": 12, "line": 3, "supplied": false,
                                    "exact": true, "url": "https://papyri.info/ddbdp/bgu;1;100"}]},
                    ...]}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..records import Record, plain, record

__all__ = ["Candidate", "Parallel", "Restoration"]


@record
@dataclass(frozen=True, slots=True)
class Parallel(Record):
    """An attested parallel of a candidate: another document of the open corpus holding the
    candidate's letters with its context (:mod:`stoicheia_spacy.restore.parallels`).

    ``id``: the document (a DDbDP file id such as ``bgu.1.100``, or a literary text's id);
    ``source``: ``"ddbdp"`` or ``"literary"``; ``text``: a snippet of it (letters-only, with its
    word division and the editor's supplements in ``[ ]``), the candidate's letters at
    ``text[start:end]``; ``line``: the line number there (None where unknown); ``supplied``: the
    match rests on a letter the source's editor supplied (not counted as attestation); ``exact``:
    no letter differs (else one context letter does); ``url``: the document on papyri.info
    (None where the id gives none)."""

    id: str
    source: str
    text: str
    start: int
    end: int
    line: int | None
    supplied: bool
    exact: bool
    url: str | None = None

    @property
    def marked(self) -> str:
        """``text`` with the candidate's letters between ‹ and ›."""
        return f"{self.text[:self.start]}‹{self.text[self.start:self.end]}›{self.text[self.end:]}"


@record
@dataclass(frozen=True, slots=True)
class Candidate(Record):
    """One candidate of a gap: ``text`` (letters-only, lower case, as scored), ``score`` (our
    beam's log-probability, or the paper protocol's length-normalised one under
    ``scoring = "protocol"``), ``share`` (its probability normalised over the gap's candidates,
    temperature-calibrated), ``accented`` (the text with accents and word division, as the
    accentuator renders it in context; None where not rendered) and ``parallels`` (attested
    passages that support it; empty unless a parallels search filled them)."""

    text: str
    score: float
    share: float
    accented: str | None = None
    parallels: tuple[Parallel, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "score": float(self.score), "share": float(self.share),
                "accented": self.accented, "parallels": [plain(p) for p in self.parallels]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Candidate:
        pars = tuple(p if isinstance(p, Parallel) else Parallel.from_dict(p) for p in data.get("parallels", ()))
        return cls(text=str(data["text"]), score=float(data["score"]), share=float(data["share"]),
                   accented=data.get("accented"), parallels=pars)


@record
@dataclass(frozen=True, slots=True)
class Restoration(Record):
    """One restored gap of ``doc.text`` (see the module doc).

    ``start``/``end``: the gap's markup (or span) in ``doc.text``; ``gap_index``: its index in
    ``parse_gaps(doc.text).gaps`` (None for gaps from ``doc.spans``); ``min_width``/``max_width``:
    its width range in characters (``max_width`` None: unknown); ``kind``: the gap's kind;
    ``status``: ``"restored"`` or ``"too_wide"`` (no candidates); ``confidence``: the top
    candidate's calibrated chance of being right; ``confident``: ``confidence`` reached the
    fitted threshold; ``abstain``: the restorer leaves the gap open in ``doc._.restored``."""

    start: int
    end: int
    gap_index: int | None
    min_width: int
    max_width: int | None
    kind: str
    candidates: tuple[Candidate, ...]
    confidence: float
    confident: bool
    abstain: bool
    status: str = "restored"

    @property
    def width(self) -> int | None:
        """The gap's width in characters when it is known exactly, else None."""
        return self.min_width if self.max_width == self.min_width else None

    @property
    def top(self) -> Candidate | None:
        """The best candidate (None without candidates)."""
        return self.candidates[0] if self.candidates else None

    def to_dict(self) -> dict[str, Any]:
        return {"start": int(self.start), "end": int(self.end), "gap_index": self.gap_index,
                "min_width": int(self.min_width), "max_width": self.max_width, "kind": self.kind,
                "status": self.status, "abstain": bool(self.abstain), "confidence": float(self.confidence),
                "confident": bool(self.confident), "candidates": [c.to_dict() for c in self.candidates]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Restoration:
        cands = tuple(c if isinstance(c, Candidate) else Candidate.from_dict(c) for c in data["candidates"])
        return cls(start=int(data["start"]), end=int(data["end"]), gap_index=data.get("gap_index"),
                   min_width=int(data["min_width"]), max_width=data.get("max_width"), kind=str(data["kind"]),
                   candidates=cands, confidence=float(data["confidence"]), confident=bool(data["confident"]),
                   abstain=bool(data["abstain"]), status=str(data.get("status", "restored")))
