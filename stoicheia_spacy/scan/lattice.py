"""Synizesis and epic correption as alternatives the metre Viterbi may choose.

* **Synizesis** (:func:`synizesis_candidates`): two adjacent syllables in hiatus,
  the first an open ``ε`` and the second starting with its nucleus ``α ο ω η``
  inside one word (``Πηληϊάδεω``, ``χρυσέα``, ``θεοί``), or a word-final open ``η``
  before a word beginning with ``ου``/``αυ`` (``μὴ οὐ``, ``δὴ αὖτε``), may be read
  as one heavy syllable.
* **Epic correption** (:func:`correption_mask`): a word-final open syllable with a
  long nucleus before a vowel-initial word may be light; the scanner softens its
  rule weight instead of fixing it (``rule_eps`` -> ``correption_eps``).

:func:`decode_lattice` enumerates the merge sets (all subsets of at most
``max_candidates`` candidates, the rest left unmerged: a small lattice), scores each
reduced line under every metre by Viterbi plus ``synizesis_cost`` nats per merge,
and returns the best metre and merge set. The published gate (θ nats per letter) then
compares that path's model cost (merge costs left out: they are a prior choosing
among readings, not evidence against the model) with the unmerged argmax.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..alphabet import ALPHABET
from ..codec import CharPlanes
from .meters import Meter
from .syllabify import Syllables, _letters, diphthong_second, member_table, word_ends
from .viterbi import viterbi_batch

_ID = {ch: i for i, ch in enumerate(ALPHABET)}
_SECOND = member_table(np.array([_ID[c] for c in "αοωη"]))
_DIPH_FIRST = member_table(np.array([_ID[c] for c in "οα"]))
_LONG = member_table(np.array([_ID[c] for c in "ηω"]))


def _open_and_word_end(syl: Syllables, planes: CharPlanes, text: str | None) -> tuple[np.ndarray, np.ndarray]:
    n = len(planes)
    second = diphthong_second(planes)
    nuc_end = syl.nucleus + second[np.minimum(syl.nucleus + 1, n - 1)].astype(np.int64) * (syl.nucleus + 1 < n)
    is_open = syl.ends == nuc_end
    wend = word_ends(planes, text)[syl.ends]
    return is_open, wend


def synizesis_candidates(syl: Syllables, planes: CharPlanes, text: str | None = None) -> np.ndarray:
    """Indices ``k`` such that syllables ``k`` and ``k + 1`` may merge by synizesis."""
    if len(syl) < 2:
        return np.zeros(0, dtype=np.int64)
    letters = _letters(planes)
    is_open, wend = _open_and_word_end(syl, planes, text)
    first = letters[syl.nucleus[:-1]]
    nxt = syl.nucleus[1:]
    hiatus = is_open[:-1] & (syl.starts[1:] == nxt)
    n = len(planes)
    nxt_diph = diphthong_second(planes)[np.minimum(nxt + 1, n - 1)] & (nxt + 1 < n)
    inner = hiatus & ~wend[:-1] & (first == _ID["ε"]) & _SECOND[letters[nxt] + 1]
    across = hiatus & wend[:-1] & (first == _ID["η"]) & nxt_diph & _DIPH_FIRST[letters[nxt] + 1]
    return np.nonzero(inner | across)[0].astype(np.int64)


def correption_mask(syl: Syllables, planes: CharPlanes, text: str | None = None) -> np.ndarray:
    """Bool (S,): word-final open syllable with a long nucleus before a vowel-initial syllable."""
    out = np.zeros(len(syl), dtype=bool)
    if len(syl) < 2:
        return out
    letters = _letters(planes)
    is_open, wend = _open_and_word_end(syl, planes, text)
    long_n = syl.long_nucleus == 1
    out[:-1] = is_open[:-1] & wend[:-1] & long_n[:-1] & (syl.starts[1:] == syl.nucleus[1:])
    out[:-1] &= _LONG[letters[syl.nucleus[:-1]] + 1] | (syl.ends[:-1] > syl.nucleus[:-1])
    return out


def merge_logp(logp: np.ndarray, merged: tuple[int, ...], heavy_logp: tuple[float, float]) -> np.ndarray:
    """Weight scores of the line with syllables ``k, k + 1`` merged for each ``k`` in ``merged``."""
    if not merged:
        return logp
    keep = np.ones(logp.shape[0], dtype=bool)
    out = logp.copy()
    idx = np.asarray(merged, dtype=np.int64)
    out[idx] = np.asarray(heavy_logp)
    keep[idx + 1] = False
    return out[keep]


def expand_weights(weights: np.ndarray, merged: tuple[int, ...], n: int) -> np.ndarray:
    """Weights of the reduced line mapped back to all ``n`` syllables (both halves of a merge)."""
    if not merged:
        return np.asarray(weights)
    keep = np.ones(n, dtype=bool)
    keep[np.asarray(merged, dtype=np.int64) + 1] = False
    src = np.cumsum(keep) - 1  # reduced index of each original syllable
    return np.asarray(weights)[src]


@dataclass(frozen=True)
class LatticeResult:
    """Best metre, merge set and weights of the reduced line."""

    meter: str
    cost: float  # nats per original syllable, merges' cost included
    merged: tuple[int, ...]
    path: str  # "HL..." of the reduced line (the unmerged argmax when the gate refused)
    used_viterbi: bool


def merge_sets(candidates: np.ndarray, max_candidates: int = 4) -> list[tuple[int, ...]]:
    """The lattice's merge sets: subsets of the first ``max_candidates`` candidates in which
    no syllable merges twice, smallest first."""
    cands = [int(k) for k in np.asarray(candidates)[:max_candidates]]
    sets: list[tuple[int, ...]] = []
    for r in range(len(cands) + 1):
        for combo in itertools.combinations(cands, r):
            if all(b - a > 1 for a, b in itertools.pairwise(combo)):  # a syllable merges once
                sets.append(combo)
    return sets


def decode_lattice(
    logp: np.ndarray,
    candidates: np.ndarray,
    meters: Mapping[str, Meter],
    *,
    theta: float,
    n_units: int,
    synizesis_cost: float = 1.0,
    max_candidates: int = 4,
    rule_eps: float = 0.02,
) -> LatticeResult | None:
    """Metre detection + gated Viterbi over the synizesis lattice (see module doc).

    None when no metre accepts any variant of the line.
    """
    return decode_lattices([(logp, candidates, n_units)], meters, theta=theta, synizesis_cost=synizesis_cost,
                           max_candidates=max_candidates, rule_eps=rule_eps)[0]


def decode_lattices(
    lines: Sequence[tuple[np.ndarray, np.ndarray, int]],
    meters: Mapping[str, Meter],
    *,
    theta: float,
    synizesis_cost: float = 1.0,
    max_candidates: int = 4,
    rule_eps: float = 0.02,
    force: bool = False,
) -> list[LatticeResult | None]:
    """:func:`decode_lattice` for many lines ``(logp, candidates, n_units)``: every variant
    of every line goes through one :func:`~stoicheia_spacy.scan.viterbi.viterbi_batch` per metre.
    ``force``: the metre was given, so its best path decides the weights whatever the gate says."""
    heavy = (float(np.log1p(-rule_eps)), float(np.log(rule_eps)))
    sets = [merge_sets(cands, max_candidates) for _, cands, _ in lines]
    variants = [merge_logp(logp, s, heavy) for (logp, _, _), line_sets in zip(lines, sets, strict=True)
                for s in line_sets]
    first = np.cumsum([0] + [len(line_sets) for line_sets in sets])
    penalties = [np.array([synizesis_cost * len(s) for s in line_sets]) for line_sets in sets]
    best: list[tuple[float, str, int, str, float] | None] = [None] * len(lines)
    for name in sorted(meters):
        results = viterbi_batch(variants, meters[name])  # all variants of all lines, batched
        all_costs = np.array([r.cost for r in results])
        for i in range(len(lines)):
            costs = all_costs[first[i] : first[i + 1]] + penalties[i]
            j = int(np.argmin(costs))
            held = best[i]
            if np.isfinite(costs[j]) and (held is None or costs[j] < held[0]):
                res = results[first[i] + j]
                best[i] = (float(costs[j]), name, j, res.path or "", float(res.cost))
    out: list[LatticeResult | None] = []
    for (logp, _, n_units), line_sets, found in zip(lines, sets, best, strict=True):
        if found is None:
            out.append(None)
            continue
        cost, name, j, path, evidence = found
        argmax_cost = float(-np.max(logp, axis=1).sum())
        used = force or evidence - argmax_cost <= theta * n_units + 1e-12  # the gate weighs model evidence only
        if not used:
            path = "".join("HL"[i] for i in np.argmax(logp, 1))
            out.append(LatticeResult(name, cost / logp.shape[0], (), path, False))
        else:
            out.append(LatticeResult(name, cost / logp.shape[0], line_sets[j], path, True))
    return out


def weight_margins(logp: np.ndarray, merged: tuple[int, ...], meter: Meter, syllables: np.ndarray, *,
                   rule_eps: float = 0.02, cap: float = 20.0) -> np.ndarray:
    """How firmly the metre holds each of ``syllables`` (original indices) at its decoded weight.

    Nats the best path of ``meter`` over the line (``merged`` applied) costs more when that
    syllable is forced to the other weight; ``cap`` where no accepted path has it (the metre
    forced the weight). Merged syllables get 0. A max-marginal: the metre's own log-odds.
    """
    return weight_margins_batch([(logp, merged, meter, syllables)], rule_eps=rule_eps, cap=cap)[0]


def weight_margins_batch(lines: Sequence[tuple[np.ndarray, tuple[int, ...], Meter, np.ndarray]], *,
                         rule_eps: float = 0.02, cap: float = 20.0) -> list[np.ndarray]:
    """:func:`weight_margins` for many lines ``(logp, merged, meter, syllables)``: the lines of
    one metre share one Viterbi batch for their best paths and one for all their forced variants."""
    heavy = (float(np.log1p(-rule_eps)), float(np.log(rule_eps)))
    out = [np.zeros(len(syllables), dtype=np.float64) for _, _, _, syllables in lines]
    by_meter: dict[str, list[int]] = {}
    for i, (_, _, meter, _) in enumerate(lines):
        by_meter.setdefault(meter.name, []).append(i)
    for members in by_meter.values():
        meter = lines[members[0]][2]
        reduced = {i: merge_logp(lines[i][0], lines[i][1], heavy) for i in members}
        bests = dict(zip(members, viterbi_batch([reduced[i] for i in members], meter), strict=True))
        variants: list[np.ndarray] = []
        slots: list[tuple[int, int]] = []  # (line, index into its syllables) per variant
        for i in members:
            logp, merged, _, syllables = lines[i]
            path = bests[i].path
            if path is None:
                continue
            keep = np.ones(logp.shape[0], dtype=bool)
            idx = np.asarray(merged, dtype=np.int64)
            keep[idx + 1] = False
            in_merge = np.zeros(logp.shape[0], dtype=bool)
            in_merge[idx] = in_merge[idx + 1] = True
            src = np.cumsum(keep) - 1
            for j, k in enumerate(np.asarray(syllables).tolist()):
                if in_merge[k]:
                    continue
                r = int(src[int(k)])
                v = reduced[i].copy()
                v[r, "HL".index(path[r])] = -1e6  # forbid the decoded weight
                variants.append(v)
                slots.append((i, j))
        for (i, j), res in zip(slots, viterbi_batch(variants, meter) if variants else [], strict=True):
            out[i][j] = min(cap, res.cost - bests[i].cost) if np.isfinite(res.cost) else cap
    return out
