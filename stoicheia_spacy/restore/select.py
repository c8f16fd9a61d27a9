"""Which gaps of a document to restore, and the restorer pipe's work as plain functions.

:func:`plan_runs` (the pipe: the encoder's planes and gap runs, ``doc._.stoicheia``) and
:func:`plan` (a :class:`~stoicheia_spacy.leiden.GappedText`) turn a text into beam-search targets (all target gaps, only those
whose markup overlaps the given character spans, or only the given gap indices; the other
lacunae stay in the context as unknown letters) and sets aside the gaps that are too wide
to decode. :func:`restore_targets` runs one batched beam search over the targets of many
documents with a backbone module and returns the pipe's records (:mod:`.results`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import torch

from ..codec import CharPlanes
from ..encoder.gaps import GapRun
from ..leiden import GappedText
from .beam import ModelScorer, beam_search, width_bucket
from .calibration import top_confidence
from .queries import TARGET_KINDS, GapTarget, build_queries, queries_from_runs
from .results import Candidate, Restoration
from .widths import MAX_WIDTH, WidthPrior, too_wide

if TYPE_CHECKING:
    from .settings import RestorerSettings

__all__ = ["Plan", "plan", "plan_runs", "restore_targets", "target_indices", "target_runs"]


@dataclass
class Plan:
    """The targets of one document: ``decode`` go to the beam search, ``too_wide`` do not."""

    gapped: GappedText | None = None
    decode: list[GapTarget] = field(default_factory=list)
    too_wide: list[GapTarget] = field(default_factory=list)


def target_indices(gapped: GappedText) -> list[int]:
    """Indices (in ``gapped.gaps``) of the gaps a restorer restores, in text order: gap
    number N of the CLI (1-based) is ``target_indices(gapped)[N - 1]``."""
    return [i for i, g in enumerate(gapped.gaps) if g.kind in TARGET_KINDS]


def target_runs(runs: Sequence[GapRun]) -> list[int]:
    """:func:`target_indices` of the encoder's gaps (``doc._.stoicheia.gaps``): the
    ``GapRun.index`` of each gap a restorer restores, in text order."""
    return [r.index for r in runs if r.gap is not None and r.gap.kind in TARGET_KINDS]


def plan(gapped: GappedText, *, only: Collection[int] | None = None,
         spans: Sequence[tuple[int, int]] | None = None, unknown_slots: int = 5, approx_slack: int = 2,
         max_width: int = MAX_WIDTH, context_cap: int = 512) -> Plan:
    """Targets of ``gapped``: every target gap, or the gap indices in ``only``, further
    restricted to gaps whose markup overlaps one of ``spans`` (character offsets of the
    input text) when given."""
    chosen = _chosen(gapped.gaps, range(len(gapped.gaps)), only, spans)
    targets = build_queries(gapped, unknown_slots=unknown_slots, approx_slack=approx_slack, only=chosen,
                            max_width=max_width, context_cap=context_cap)
    return _split(Plan(gapped), targets, max_width)


def plan_runs(text: str, planes: CharPlanes, runs: list[GapRun], *, only: Collection[int] | None = None,
              spans: Sequence[tuple[int, int]] | None = None, approx_slack: int = 2,
              max_width: int = MAX_WIDTH) -> Plan:
    """:func:`plan` over the encoder's single parse: ``planes`` and gap ``runs`` of ``text``
    (``doc._.stoicheia.planes`` / ``.gaps`` of ``doc.text``); ``only`` holds ``GapRun.index``."""
    chosen = _chosen([r.gap for r in runs], [r.index for r in runs], only, spans)
    targets = queries_from_runs(text, planes, runs, approx_slack=approx_slack, only=chosen, max_width=max_width)
    return _split(Plan(), targets, max_width)


def _chosen(gaps: Sequence[Any], indices: Collection[int], only: Collection[int] | None,
            spans: Sequence[tuple[int, int]] | None) -> set[int] | None:
    """Gap indices picked by ``only`` and by overlap of their markup with ``spans``."""
    chosen: set[int] | None = None if only is None else {int(i) for i in only}
    if spans is not None:
        hit = {i for i, g in zip(indices, gaps, strict=True) if g is not None
               and any(s < max(g.source_end, g.source_start + 1) and g.source_start < e for s, e in spans)}
        chosen = hit if chosen is None else chosen & hit
    return chosen


def _split(out: Plan, targets: list[GapTarget], max_width: int) -> Plan:
    for target in targets:
        (out.too_wide if too_wide(target.query.widths, max_width) else out.decode).append(target)
    return out


def _item(target: GapTarget, from_spans: bool, status: str, cands: list[Any], abstain_below: float,
          confident_above: float = 0.0, slope: float = 1.0, bias: float = 0.0) -> Restoration:
    gap = target.gap
    top = float(top_confidence(cands[0].probability, slope, bias)) if cands else 0.0
    return Restoration(
        start=int(gap.source_start), end=int(gap.source_end),
        gap_index=None if from_spans else target.index,
        min_width=int(gap.min_width), max_width=None if gap.max_width is None else int(gap.max_width),
        kind=str(gap.kind),
        candidates=tuple(Candidate(str(c.text), float(c.logprob), float(c.probability)) for c in cands),
        confidence=top,  # the top candidate's calibrated chance of being right
        abstain=bool(status != "restored" or top < abstain_below),
        confident=bool(status == "restored" and cands and top >= confident_above),
        status=status,
    )


def restore_targets(module: torch.nn.Module | Any, plans: Sequence[Plan], cfg: RestorerSettings | Mapping[str, Any],
                    *, from_spans: Sequence[bool] | None = None, lm: Any = None,
                    kn: Any = None, domains: Sequence[str | None] | None = None,
                    evidence: Sequence[Any] | None = None) -> tuple[list[list[Restoration]], int]:
    """The :class:`~.results.Restoration` records (document order) for each plan, and the forwards made. ``lm``: the n-gram LM
    whose joint probability of each filled window rescores the finished candidates (weight
    ``lm_rescore``; :class:`~.ngram_lm.LMRescorer`). ``kn``: the Kneser-Ney 8-gram
    (:mod:`.kneser_ney`): with ``kn_weights`` set the candidates are those of
    :func:`~.combine.restore_combined` (``module`` None: the n-gram alone), weighed for each plan's
    text domain (``domains``, one per plan; None: ``kn_weights``); ``evidence``: one
    :class:`~.infgram.Evidence` (or None) per plan, the parallels index's candidates and evidence.

    ``cfg`` is the restorer's :class:`~.settings.RestorerSettings` (or a mapping of its
    options, validated here: ``beam_width``, ``n_candidates``, ``context``, ``mode``,
    ``unmask``, ``final_forward``,
    ``space_ratio``, ``elastic_slots``, ``unknown``, ``max_letters``, ``max_width``, ``rank``,
    ``length_bonus``, ``width_log_prior``, ``temperature``, ``temperatures``, ``abstain_below``,
    ``confident_above``).
    ``status`` is ``restored``, or ``too_wide`` (no candidates: the gap exceeds ``max_width``)."""
    from .settings import RestorerSettings

    c = RestorerSettings.coerce(cfg)  # read once
    queries = [t.query for p in plans for t in p.decode]
    results: list[Any] = []
    forwards = 0
    if queries and kn is not None and c.kn_weights:
        from .combine import restore_combined

        scorer = ModelScorer(module) if isinstance(module, torch.nn.Module) else module
        temps_k: dict[str, float] | float = dict(c.temperatures or {}) or float(c.temperature)
        if isinstance(temps_k, dict):
            temps_k.setdefault("default", float(c.temperature))
        prior_k = WidthPrior(c.rank, float(c.length_bonus), tuple(c.width_log_prior))
        per_query = None if domains is None else [d for p, d in zip(plans, domains, strict=True) for _ in p.decode]
        per_gap = None if evidence is None else [e for p, e in zip(plans, evidence, strict=True) for _ in p.decode]
        results = restore_combined(scorer, queries, c, kn, prior=prior_k, temperature=temps_k, domains=per_query,
                                   evidence=per_gap)
        forwards = int(getattr(scorer, "forwards", 0))
    elif queries:
        scorer = ModelScorer(module) if isinstance(module, torch.nn.Module) else module
        temps: dict[str, float] | float = dict(c.temperatures or {}) or float(c.temperature)
        if isinstance(temps, dict):
            temps.setdefault("default", float(c.temperature))
        prior = WidthPrior(c.rank, float(c.length_bonus), tuple(c.width_log_prior))
        rescore = None
        if lm is not None and float(c.lm_rescore) > 0:
            from .ngram_lm import LMRescorer

            rescore = LMRescorer(lm, float(c.lm_rescore), int(c.context))
        results = beam_search(scorer, queries, beam=c.beam_width, n_best=c.n_candidates,
                              context=c.context, mode=cast(Any, c.mode), space_ratio=c.space_ratio,
                              elastic_slots=c.elastic_slots, temperature=temps,
                              unknown=c.unknown, max_letters=c.max_letters,
                              max_width=c.max_width, prior=prior,
                              unmask=c.unmask, final_forward=c.final_forward, rescore=rescore)
        forwards = int(scorer.forwards)
    out, cursor = [], 0
    flags = list(from_spans) if from_spans is not None else [False] * len(plans)
    below = float(c.abstain_below)
    per_plan = list(domains) if domains is not None else [None] * len(plans)
    for p, spans_mode, domain in zip(plans, flags, per_plan, strict=True):
        items = []
        above = c.confident_above_for(domain)  # the domain's own calibration, else the global one
        for target in p.decode:
            items.append(_item(target, spans_mode, "restored", results[cursor], below, above,
                               *c.confidence_scaling(width_bucket(target.query.widths), domain)))
            cursor += 1
        items += [_item(t, spans_mode, "too_wide", [], below, above) for t in p.too_wide]
        out.append(sorted(items, key=lambda it: it.start))
    return out, forwards
