"""Viterbi decoding of syllable weights through metre automata, gated as published.

Scores are log-probabilities (natural log) of the two weights per syllable, an
``(n, 2)`` array whose column 0 is *heavy* and column 1 *light*
(:data:`~stoicheia_spacy.scan.meters.HEAVY`, ``LIGHT``). Costs are negative
log-probabilities in nats. The published release uses the constrained path only
when it costs at most 0.1 nats *per letter* more than the unconstrained argmax
(:func:`gated_decode`, unit selectable).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DecodingError
from .meters import WEIGHTS, Meter

#: Default gate of the published release, in nats per unit (per letter there).
DEFAULT_THETA = 0.1


@dataclass(frozen=True)
class ViterbiResult:
    """Best accepted weight string of one metre, and the unconstrained argmax."""

    meter: str
    path: str | None  # ``"HLL..."``; None when the metre accepts no string of this length
    cost: float  # nats, -sum of log-probabilities along ``path`` (inf when None)
    argmax_path: str
    argmax_cost: float

    @property
    def excess(self) -> float:
        """How many nats the constrained path costs more than the argmax (>= 0)."""
        return self.cost - self.argmax_cost


@dataclass(frozen=True)
class GatedResult:
    """Output of :func:`gated_decode`: the chosen weights and why."""

    path: str
    used_viterbi: bool
    viterbi: ViterbiResult


def _check_logp(logp: np.ndarray) -> np.ndarray:
    arr = np.asarray(logp, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != len(WEIGHTS) or arr.shape[0] == 0:
        raise DecodingError(f"weight scores must have shape (n >= 1, 2), got {arr.shape}")
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise DecodingError("weight scores contain NaN or +inf")
    if np.isneginf(arr).all(axis=1).any():
        raise DecodingError("a syllable has -inf for both weights")
    return arr


_WEIGHT_BYTES = np.frombuffer(WEIGHTS.encode("ascii"), dtype=np.uint8)


def _to_string(ids: np.ndarray) -> str:
    """``"HL..."`` of weight ids, by one table lookup (not a Python loop per syllable)."""
    return _WEIGHT_BYTES[ids].tobytes().decode("ascii")


@functools.lru_cache(maxsize=64)
def _incidence(meter: Meter) -> np.ndarray:
    """(2S, S) bool: row ``w*S + s`` feeds state ``trans[s, w]`` (cached per metre)."""
    trans = meter.transitions
    rows = trans.T.reshape(-1)  # row index w*S + s
    valid = rows >= 0
    inc = np.zeros((rows.size, trans.shape[0]), dtype=bool)
    inc[np.nonzero(valid)[0], rows[valid]] = True
    return inc


@functools.lru_cache(maxsize=64)
def _predecessors(meter: Meter) -> tuple[np.ndarray, np.ndarray]:
    """(S, D) rows of the incidence that feed each state, ascending, padded with row 0, and
    the (S, D) mask of real entries: the recursion then costs O(S·D), not O(2S·S)."""
    inc = _incidence(meter)
    feeds = [np.nonzero(inc[:, s])[0] for s in range(inc.shape[1])]
    width = max(1, max((len(f) for f in feeds), default=1))
    pred = np.zeros((inc.shape[1], width), dtype=np.int64)
    valid = np.zeros((inc.shape[1], width), dtype=bool)
    for s, f in enumerate(feeds):
        pred[s, : len(f)] = f
        valid[s, : len(f)] = True
    return pred, valid


#: Most (line x syllable x state) back-pointer cells one padded pass holds (~32 MB of int64).
MAX_PASS_CELLS = 4_000_000
#: States of a metre's automaton followed, length by length, before :func:`scannable` stops
#: telling lengths apart (every length is then said to scan; no metre comes near it).
MAX_REACH_STEPS = 4096


@functools.lru_cache(maxsize=64)
def _accepting_lengths(meter: Meter) -> tuple[np.ndarray, int]:
    """Whether ``meter`` accepts some weight string of each length ``t = 0, 1, ...``, followed
    until the set of states reachable in ``t`` steps repeats one seen before: ``(flags, start)``,
    the lengths from ``start`` on repeating with period ``len(flags) - start`` (an acyclic
    metre ends in the empty set: every longer line is unscannable)."""
    trans, accepting = meter.transitions, np.asarray(meter.accepting, dtype=bool)
    seen: dict[frozenset[int], int] = {}
    flags: list[bool] = []
    reach = frozenset({0})
    while reach not in seen and len(flags) < MAX_REACH_STEPS:
        seen[reach] = len(flags)
        flags.append(bool(accepting[list(reach)].any()) if reach else False)
        following = trans[sorted(reach)].reshape(-1) if reach else np.zeros(0, dtype=np.int64)
        reach = frozenset(following[following >= 0].tolist())
    if reach not in seen:  # not settled: say that every further length scans
        return np.array([*flags, True]), len(flags)
    return np.array(flags), seen[reach]


def scannable(meter: Meter, lengths: np.ndarray) -> np.ndarray:
    """Bool per line length (syllables): whether ``meter`` has any path of that length. A line
    without one (prose, a line too long or too short for the metre) needs no Viterbi pass."""
    flags, start = _accepting_lengths(meter)
    lengths = np.asarray(lengths, dtype=np.int64)
    period = len(flags) - start
    return flags[np.where(lengths < len(flags), lengths, start + (lengths - start) % period)]


def _passes(lengths: np.ndarray, n_states: int) -> list[np.ndarray]:
    """Line indices grouped into padded passes: ascending length, a pass ends where the next
    line would pad its shortest line by more than a quarter or exceed :data:`MAX_PASS_CELLS`."""
    order = np.argsort(lengths, kind="stable")
    out: list[np.ndarray] = []
    start = 0
    for end in range(1, len(order) + 1):
        if end < len(order):
            longest, shortest = int(lengths[order[end]]), int(lengths[order[start]])
            if longest <= 1.25 * shortest + 4 and (end + 1 - start) * longest * n_states <= MAX_PASS_CELLS:
                continue
        out.append(order[start:end])
        start = end
    return out


def _viterbi_padded(lines: Sequence[np.ndarray], meter: Meter) -> tuple[list[np.ndarray], np.ndarray]:
    """The recursion for lines of any lengths in one vectorised pass over the longest:
    (path ids per line, found per line). Each line's steps are exactly its own (elementwise
    over lines); its final scores are taken at its own last syllable, its path traced from there."""
    lengths = np.array([x.shape[0] for x in lines], dtype=np.int64)
    b, n = len(lines), int(lengths.max())
    scores = np.zeros((b, n, len(WEIGHTS)))
    for i, x in enumerate(lines):
        scores[i, : x.shape[0]] = x
    pred, valid = _predecessors(meter)
    n_states = meter.n_states
    gather = np.where(valid, pred, 2 * n_states)  # a padded entry reads the extra -inf column
    cand = np.empty((b, 2 * n_states + 1))
    cand[:, -1] = -np.inf
    alpha = np.full((b, n_states), -np.inf)
    alpha[:, 0] = 0.0
    final = np.full((b, n_states), -np.inf)
    back = np.empty((n, b, n_states), dtype=np.int64)
    states = np.arange(n_states)[None, :]
    last = lengths - 1
    for t in range(n):  # over syllables; lines, states and their predecessors are vectorised
        cand[:, :-1] = (alpha[:, None, :] + scores[:, t, :, None]).reshape(b, -1)  # row w*S + s
        table = cand[:, gather]  # (B, S, D)
        best = table.argmax(axis=2)  # first of equal maxima = lowest row, as a dense argmax
        back[t] = pred[states, best]
        alpha = table.max(axis=2)  # the value at ``best`` (ndarray methods: no per-call dispatch)
        ending = last == t
        if ending.any():
            final[ending] = alpha[ending]
    final = np.where(meter.accepting[None], final, -np.inf)
    rows = np.arange(b)
    state = np.argmax(final, axis=1)
    found = np.isfinite(final[rows, state])
    paths = np.zeros((b, n), dtype=np.int64)
    for t in range(n - 1, -1, -1):
        weight, prev = np.divmod(back[t, rows, state], n_states)
        active = t <= last
        paths[:, t] = np.where(active, weight, 0)
        state = np.where(active, prev, state)
    return [paths[i, : lengths[i]] for i in range(b)], found


def viterbi(logp: np.ndarray, meter: Meter) -> ViterbiResult:
    """Best weight string accepted by ``meter`` under per-syllable log-probabilities.

    The recursion is vectorised over the automaton's states and both weights.
    Ties are broken towards heavy and towards lower state ids.
    """
    return viterbi_batch([logp], meter)[0]


def viterbi_batch(logps: Sequence[np.ndarray], meter: Meter) -> list[ViterbiResult]:
    """:func:`viterbi` for many lines at once: lines of similar lengths share one padded,
    vectorised pass (:func:`_viterbi_padded`), so a Doc's verses cost a few passes, not one each."""
    checked = [_check_logp(x) for x in logps]
    if not checked:
        return []
    lengths = np.array([x.shape[0] for x in checked])
    paths: list[np.ndarray] = [np.zeros(n, dtype=np.int64) for n in lengths.tolist()]  # no path: zeros
    found = np.zeros(len(checked), dtype=bool)
    has_path = scannable(meter, lengths)
    for idx in _passes(lengths[has_path], meter.n_states):
        idx = np.flatnonzero(has_path)[idx]
        got, ok = _viterbi_padded([checked[i] for i in idx], meter)
        for j, i in enumerate(idx.tolist()):
            paths[i] = got[j]
        found[idx] = ok
    results: list[ViterbiResult | None] = [None] * len(checked)
    by_length: dict[int, list[int]] = {}
    for i, x in enumerate(checked):
        by_length.setdefault(x.shape[0], []).append(i)
    for idx_list in by_length.values():  # costs per length, as one (B, n) sum
        scores = np.stack([checked[i] for i in idx_list])
        group = np.stack([paths[i] for i in idx_list])
        costs = -np.take_along_axis(scores, group[:, :, None], axis=2)[:, :, 0].sum(axis=1)
        argmax_ids = np.argmax(scores, axis=2)
        argmax_costs = -np.max(scores, axis=2).sum(axis=1)
        for j, i in enumerate(idx_list):
            results[i] = ViterbiResult(
                meter.name,
                _to_string(group[j]) if found[i] else None,
                float(costs[j]) if found[i] else float("inf"),
                _to_string(argmax_ids[j]),
                float(argmax_costs[j]),
            )
    return [r for r in results if r is not None]


def syllable_scores(letter_logp: np.ndarray, syllable_ends: np.ndarray) -> np.ndarray:
    """Per-syllable weight scores from per-letter ones: the rows at each syllable's last letter."""
    arr = np.asarray(letter_logp, dtype=np.float64)
    ends = np.asarray(syllable_ends, dtype=np.int64)
    if ends.ndim != 1 or ends.size == 0:
        raise DecodingError("syllable_ends must be a non-empty 1-d index array")
    if arr.ndim != 2 or ends.min() < 0 or ends.max() >= arr.shape[0] or (np.diff(ends) <= 0).any():
        raise DecodingError("syllable_ends must be strictly increasing letter indices")
    return arr[ends]


def gated_decode(
    logp: np.ndarray,
    meter: Meter,
    *,
    theta: float = DEFAULT_THETA,
    n_units: int | None = None,
) -> GatedResult:
    """Use the metre's Viterbi path only if it costs at most ``theta`` nats per unit more
    than the argmax, else keep the argmax.

    ``n_units`` is what ``theta`` is counted per: pass the number of letters in the
    line to reproduce the release ("0.1 nats per letter"); it defaults to the number
    of syllables. A metre that accepts no string of this length gives the argmax.
    """
    if theta < 0:
        raise DecodingError(f"theta must be >= 0, got {theta}")
    result = viterbi(logp, meter)
    units = len(result.argmax_path) if n_units is None else n_units
    if units <= 0:
        raise DecodingError(f"n_units must be positive, got {units}")
    use = result.path is not None and result.excess <= theta * units + 1e-12
    return GatedResult(result.path if use and result.path else result.argmax_path, use, result)


def detect_meter(logp: np.ndarray, meters: Mapping[str, Meter]) -> list[tuple[str, float]]:
    """Rank metres by Viterbi cost per syllable (nats), best first.

    Metres that cannot scan a line of this length come last with cost ``inf``;
    equal costs are ordered by name.
    """
    scores = _check_logp(logp)
    ranked = []
    for name, meter in meters.items():
        ranked.append((name, viterbi(scores, meter).cost / scores.shape[0]))
    return sorted(ranked, key=lambda item: (item[1], item[0]))
