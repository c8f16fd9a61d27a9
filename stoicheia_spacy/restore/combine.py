"""The restorer's candidates from two decoders, merged and rescored by one fitted combination.

The backbone's beam (:func:`~.beam.beam_search`) and the n-gram's own two-sided beam
(:func:`~.kn_beam.kn_restore`) each propose texts for a gap; their union is scored by

    ``backbone · b + fwd · f + rev · r + length · width``

with ``b`` the backbone beam's log-probability of the text (a text it did not find gets its
lowest kept score minus ``floor``), ``f`` / ``r`` the left-to-right / right-to-left n-gram's
log-probability of the gap and ``far`` symbols beyond it (:func:`~.kn_beam.score_texts`) and
``width`` the text's characters. The four weights are fitted on dev gaps per width bucket
(:func:`~.beam.width_bucket`; ``restore-eval``) and live in the restorer's settings
(``kn_weights``; per text domain ``kn_domain_weights``, :mod:`.domain`); a bucket without its own
weights uses ``default``. Weights whose ``backbone``
is 0 everywhere make the backbone's beam unnecessary: the restorer then skips it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .beam import Candidate, GapQuery, beam_search, bucket_temperature, width_bucket
from .domain_sources import domain_terms, serves, with_domain_sources
from .infgram import Evidence, InfFeatures, fold, gap_evidence, rescore
from .infgram import weights_for as infgram_weights_for
from .kn_beam import KnCandidate, gap_symbols, kn_restore, score_texts, text_to_symbols
from .kneser_ney import KneserNeyLM
from .widths import WidthPrior

__all__ = ["FEATURES", "combine", "rank_candidates", "restore_combined", "settings_use_backbone", "uses_backbone",
           "weights_for", "with_evidence"]

#: the order of a bucket's four weights
FEATURES = ("backbone", "fwd", "rev", "length")


def weights_for(weights: Mapping[str, Sequence[float]], bucket: str) -> tuple[float, float, float, float]:
    """The four weights of ``bucket`` (its own, else ``default``, else n-gram only)."""
    w = weights.get(bucket, weights.get("default", (0.0, 1.0, 1.0, 0.0)))
    b, f, r, n = (float(x) for x in w)
    return b, f, r, n


def uses_backbone(weights: Mapping[str, Sequence[float]] | None) -> bool:
    """Whether any bucket's combination weighs the backbone (else its beam is skipped)."""
    return any(float(w[0]) > 0 for w in (weights or {}).values())


def combine(lm: KneserNeyLM, query: Any, backbone: Sequence[tuple[str, float, int]], ngram: Sequence[KnCandidate],
            weights: Sequence[float], *, far: int = 10, floor: float = 1.0) -> list[tuple[str, float, int]]:
    """The union of the two candidate lists as ``(text, combined score, width)``, best first."""
    wb, wf, wr, wn = (float(x) for x in weights)
    if wb == 0:  # a bucket that does not weigh the backbone does not consult its candidates either
        backbone = ()
    table: dict[str, list[float]] = {c.text: [np.nan, c.fwd, c.rev, float(c.width)] for c in ngram}
    missing = [t for t, _, _ in backbone if t not in table]
    if missing:
        left, right = gap_symbols(query)
        fwd, rev = score_texts(lm, left, right, [text_to_symbols(t) for t in missing], far)
        for t, f, r in zip(missing, fwd, rev, strict=True):
            table[t] = [np.nan, float(f), float(r), float(len(t))]
    for t, lp, _ in backbone:
        table[t][0] = max(float(lp), table[t][0]) if not np.isnan(table[t][0]) else float(lp)
    low = min((lp for _, lp, _ in backbone), default=0.0) - floor
    out = []
    for text, (b, f, r, n) in table.items():
        b = low if np.isnan(b) else b
        out.append((text, wb * b + wf * f + wr * r + wn * n, int(n)))
    return sorted(out, key=lambda x: -x[1])


def rank_candidates(items: Sequence[tuple[str, float, int]], prior: WidthPrior,
                    temperature: float | Mapping[str, float], bucket: str, n_best: int) -> list[Candidate]:
    """``(text, score, width)`` items as ranked :class:`~.beam.Candidate` (the width prior's key,
    probabilities a softmax of the best ``n_best`` keys at the bucket's temperature), as the beam
    ranks its own."""
    keyed = sorted(((t, s, w, prior.key(s, w)) for t, s, w in items), key=lambda x: -x[3])[:n_best]
    if not keyed:
        return []
    keys = np.array([k for *_, k in keyed])
    scale = 1.0 if prior.rank == "total" else float(np.mean([w for _, _, w, _ in keyed]))
    z = keys * scale / bucket_temperature(temperature, bucket)
    probs = np.exp(z - z.max())
    probs /= probs.sum()
    return [Candidate(t, float(s), float(p), float(k), int(w)) for (t, s, w, k), p in zip(keyed, probs, strict=True)]


def settings_use_backbone(settings: Any) -> bool:
    """Whether the restorer's combination weighs the backbone in any domain or bucket."""
    tables = [settings.kn_weights, *(getattr(settings, "kn_domain_weights", None) or {}).values()]
    return any(uses_backbone(t) for t in tables)


def with_evidence(lm: KneserNeyLM, query: Any, ngram: Sequence[KnCandidate], evidence: Evidence | None,
                  far: int, max_letters: int = 10) -> tuple[list[KnCandidate], dict[str, InfFeatures]]:
    """The n-gram's candidates of one gap with the parallels index's own (``evidence``:
    :func:`~.infgram.gap_evidence`, the best ``evidence.extra`` by their context match not
    already proposed, scored by both n-gram directions), and every candidate's evidence by its
    folded text (empty without ``evidence``). A hidden width reads widths ``1..max_letters``."""
    if evidence is None:
        return list(ngram), {}
    found = gap_evidence(evidence, query, max_letters)
    feats = {fold(t): f for t, f in found.items()}
    shown = {fold(t): t for t in found}
    have = {fold(c.text) for c in ngram}
    extra = [k for k in sorted(feats, key=lambda k: (-feats[k].context, -feats[k].docs, -feats[k].occurrences, k))
             if k not in have][: int(evidence.extra)]
    out = list(ngram)
    if extra:
        left, right = gap_symbols(query)
        fwd, rev = score_texts(lm, left, right, [text_to_symbols(k) for k in extra], far)
        out += [KnCandidate(shown.get(k, k), len(k), float(f), float(r)) for k, f, r in zip(extra, fwd, rev, strict=True)]
    return out, feats


def restore_combined(scorer: Any, queries: Sequence[GapQuery], settings: Any, lm: KneserNeyLM, *,
                     prior: WidthPrior, temperature: float | Mapping[str, float],
                     domains: Sequence[str | None] | None = None,
                     evidence: Sequence[Evidence | None] | None = None) -> list[list[Candidate]]:
    """Ranked candidates per query from the n-gram's two-sided beam and, when ``scorer`` is not
    None, the backbone's beam (``settings``: the restorer's :class:`~.settings.RestorerSettings`),
    merged and scored by :func:`combine` with the weights of the query's domain (``domains``, one
    per query, :meth:`~.settings.RestorerSettings.domain_weights`; None: ``kn_weights``) and width
    bucket (the backbone's beam runs only for the queries whose weights weigh it)."""
    c = settings
    ngram = kn_restore(lm, queries, beam=int(c.kn_beam), far=int(c.kn_far), max_letters=int(c.max_letters),
                       max_width=int(c.max_width))
    per_domain = list(domains) if domains is not None else [None] * len(queries)
    tables = [c.domain_weights(d) if d is not None and hasattr(c, "domain_weights") else (c.kn_weights or {})
              for d in per_domain]
    weights = [weights_for(t, width_bucket((q.letters,) if q.letters else q.widths))
               for q, t in zip(queries, tables, strict=True)]
    asks = [i for i, w in enumerate(weights) if w[0] > 0]  # the backbone's beam only where it is weighed
    backbone: list[list[tuple[str, float, int]]] = [[] for _ in queries]
    if scorer is not None and asks:
        found = beam_search(scorer, [queries[i] for i in asks], beam=c.beam_width, n_best=max(200, c.n_candidates), context=c.context,
                            mode=c.mode, space_ratio=c.space_ratio, elastic_slots=c.elastic_slots,
                            unknown=c.unknown, max_letters=c.max_letters, max_width=c.max_width,
                            unmask=c.unmask, final_forward=c.final_forward)
        for i, cands in zip(asks, found, strict=True):
            backbone[i] = [(x.text, x.logprob, x.width) for x in cands]
    out = []
    per_gap = list(evidence) if evidence is not None else [None] * len(queries)
    calibrated = getattr(c, "domain_calibration", None) or {}
    for q, b, g, w, ev, d in zip(queries, backbone, ngram, weights, per_gap, per_domain, strict=True):
        bucket = width_bucket((q.letters,) if q.letters else q.widths)
        temp = c.temperatures_for(d) if d in calibrated else temperature  # the domain's own calibration
        g, feats = with_evidence(lm, q, g, ev, int(c.kn_far), int(c.max_letters))
        src = ev.domain if ev is not None and serves(ev.domain, q, int(c.max_letters)) else None
        dfeats: dict[str, InfFeatures] = {}
        if src is not None:  # the domain's own 8-gram and index propose too (Run 14; hidden widths: Run 16)
            g, dfeats = with_domain_sources(lm, q, g, src, int(c.kn_far), int(c.max_letters))
        merged = combine(lm, q, b, g, w, far=int(c.kn_far))
        if ev is not None:  # the index's evidence for each candidate (Run 13)
            wi = infgram_weights_for(ev.weights, bucket)
            merged = sorted(((t, rescore(s, feats.get(fold(t)), wi), n) for t, s, n in merged), key=lambda x: -x[1])
        if src is not None:  # the domain 8-gram's scores, its index's evidence and the word check (Run 14)
            terms = domain_terms(src, q, [t for t, _, _ in merged], dfeats, bucket, int(c.kn_far))
            merged = sorted(((t, s + d, n) for (t, s, n), d in zip(merged, terms, strict=True)), key=lambda x: -x[1])
        out.append(rank_candidates(merged, prior, temp, bucket, int(c.n_candidates)))
    return out
