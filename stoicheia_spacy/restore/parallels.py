"""Attested parallels for restoration candidates: the restorer's ``parallels`` service.

An editor adopts a supplement because the same formula is attested elsewhere. For each gap,
:class:`CandidateParallels` (``[components.stoicheia_restorer.parallels]``,
``stoicheia.CandidateParallels.v1``) searches the parallels index of the open corpus
(:mod:`stoicheia_spacy.parallels.index`, shipped in the lexicon data package) for the letters of
each of the first ``candidates`` candidates with ``context`` letters of the gap's own text each
side (:func:`~stoicheia_spacy.parallels.search.attest`), leaving out the Doc's own document and
its duplicates (:func:`~stoicheia_spacy.parallels.search.leave_out`), and returns the
restorations with ``Candidate.parallels`` set to up to ``top`` :class:`~.results.Parallel`
records. ``top = 0`` (the shipped default) searches nothing and needs no index; a missing or
corrupt index then raises :class:`~stoicheia_spacy.errors.ParallelsIndexError` naming the data
package. ``rerank`` > 0 reorders the searched candidates by ``score + rerank * log(1 + attested
documents)`` (``projects/restore/RESULTS.md``, "Parallels"); each candidate keeps its own score
and share (the model's), and a gap whose top candidate the rerank changes gets that candidate's
share as its confidence and is not marked confident (the calibration was fitted without it). The rerank alone (``top = 0``)
without an installed index logs that once and leaves the candidates as they are.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from spacy.util import registry

from ..accent.lexasset import find_parallels
from ..errors import ConfigError, ParallelsIndexError
from ..parallels.index import ParallelIndex, letters_of, papyri_url, query_letters
from ..parallels.search import Attestation, attest, leave_out
from .results import Candidate, Parallel, Restoration

logger = logging.getLogger(__name__)
_warned: list[bool] = []


@cache
def load_index(folder: str) -> ParallelIndex:
    """The index of ``folder``, loaded once."""
    return ParallelIndex(folder)


def to_parallel(index: ParallelIndex, hit: Any, width: int = 30) -> Parallel:
    """The record of one hit (:class:`~stoicheia_spacy.parallels.search.Hit`)."""
    text, start, end = index.snippet(hit.cand_lo, hit.cand_hi, width)
    doc_id, source = index.ids[hit.doc], index.sources[hit.doc]
    return Parallel(id=doc_id, source=source, text=text, start=start, end=end, line=index.line(hit.cand_lo),
                    supplied=hit.supplied, exact=hit.distance == 0, url=papyri_url(doc_id, source))


@dataclass(frozen=True)
class CandidateParallels:
    """The restorer's parallels service (module doc): ``top`` parallels per candidate (0: off),
    for the first ``candidates`` candidates of each gap, ``context`` letters a side, ``rerank``
    the weight of the attestation count in the ranking (0: none); the index of ``path``, else of
    the data package ``package`` (None: ``stoicheia_lexicon_grc``)."""

    top: int = 0
    candidates: int = 20
    context: int = 8
    rerank: float = 0.0
    package: str | None = None  # None: the lexicon data package (read at call time)
    path: str | None = None

    def __post_init__(self) -> None:
        for name in ("top", "candidates", "context"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"parallels {name} must be an integer >= 0, got {value!r}")
        if not math.isfinite(float(self.rerank)) or float(self.rerank) < 0:
            raise ConfigError(f"parallels rerank must be a number >= 0, got {self.rerank!r}")

    @property
    def active(self) -> bool:
        """Whether the service searches anything."""
        return bool(self.candidates) and (self.top > 0 or float(self.rerank) > 0)

    def index(self) -> ParallelIndex:
        """The parallels index (raises ParallelsIndexError, naming the data package, when absent)."""
        return load_index(str(find_parallels(self.path, self.package).resolve()))

    def attestations(self, index: ParallelIndex, text: str, item: Restoration,
                     exclude: frozenset[int]) -> list[Attestation]:
        """The attestation of each searched candidate of one gap of ``text``."""
        left, right = query_letters(text[: item.start]), query_letters(text[item.end:])
        n = max(1, self.top)
        return [attest(index, left, letters_of(c.text), right, context=self.context, n=n, exclude=exclude)
                for c in item.candidates[: self.candidates]]

    def apply(self, index: ParallelIndex, item: Restoration, found: Sequence[Attestation],
              reorder: bool = True) -> Restoration:
        """``item`` with its candidates' parallels (and, with ``rerank`` and ``reorder``, reordered)."""
        cands = list(item.candidates)
        for k, att in enumerate(found):
            cands[k] = replace(cands[k], parallels=tuple(to_parallel(index, h) for h in att.hits[: self.top]))
        if float(self.rerank) > 0 and found and reorder:
            counts = [att.attested for att in found] + [0] * (len(cands) - len(found))
            before = cands[0].text
            cands = rerank(cands, counts, float(self.rerank))
            if cands[0].text != before:  # the calibration was fitted on the unreranked top: not confident
                return replace(item, candidates=tuple(cands), confidence=float(cands[0].share), confident=False)
        return replace(item, candidates=tuple(cands))

    def __call__(self, docs: Sequence[Any], restorations: Sequence[Sequence[Restoration]],
                 ids: Sequence[str | None] | None = None,
                 scored: Sequence[bool] | None = None,
                 scored_hidden: Sequence[bool] | None = None) -> list[list[Restoration]]:
        """``restorations`` (one list per Doc of ``docs``) with their candidates' parallels;
        ``ids``: each Doc's own document id, left out with its duplicates; ``scored``: per Doc,
        whether the restorer already scored its known-width gaps by the index's evidence
        (:mod:`.infgram`), which the rerank then leaves in their order; ``scored_hidden``: the
        same for its gaps of hidden width (Run 15)."""
        if not self.active or not any(items for items in restorations):
            return [list(items) for items in restorations]
        try:
            index = self.index()
        except ParallelsIndexError as exc:
            if self.top:  # parallels were asked for: say which data package lacks them
                raise
            if not _warned:  # the rerank alone: restoration works without it, said once
                _warned.append(True)
                logger.warning("restoring without the parallels rerank: %s", exc)
            return [list(items) for items in restorations]
        out = []
        for d, (doc, items) in enumerate(zip(docs, restorations, strict=True)):
            text = doc if isinstance(doc, str) else doc.text
            if not items:
                out.append(list(items))
                continue
            exclude = leave_out(index, query_letters(text), ids[d] if ids else None)
            done = bool(scored[d]) if scored is not None else False
            hidden = bool(scored_hidden[d]) if scored_hidden is not None else False
            out.append([self.apply(index, item, self.attestations(index, text, item, exclude),
                                   reorder=not ((done and item.max_width is not None and item.min_width == item.max_width)
                                                or (hidden and item.max_width is None)))
                        for item in items])
        return out


def rerank(cands: Sequence[Candidate], counts: Sequence[int], weight: float) -> list[Candidate]:
    """``cands`` in the order of ``score + weight * log(1 + count)`` (as fitted in
    ``scripts/parallels_eval.py``); each keeps its own score and share, the model's."""
    key = [float(c.score) + weight * math.log1p(k) for c, k in zip(cands, counts, strict=True)]
    return [cands[i] for i in sorted(range(len(cands)), key=lambda i: -key[i])]


candidate_parallels = registry.misc.register("stoicheia.CandidateParallels.v1", func=CandidateParallels)

__all__ = ["CandidateParallels", "load_index", "papyri_url", "query_letters", "rerank", "to_parallel"]
