"""Maximum spanning arborescence (Chu-Liu-Edmonds) for dependency parsing.

Convention: ``scores[d, h]`` is the score of word ``d`` taking head ``h``;
index 0 is the artificial ROOT, words are 1..n. Row 0 and the diagonal are
ignored. ``-inf`` forbids an edge. The decoder returns CoNLL-style heads: an
int array of length n, entry ``i`` the head of word ``i + 1`` (0 = ROOT).

Single root: with ``single_root=True`` (default, as in Dozat-Manning parsers
and UDPipe/Stanza practice) exactly one word attaches to ROOT. This is enforced
exactly by one CLE run in which every ROOT edge is lowered by a constant larger
than the spread of any two trees' scores, so the best tree uses the fewest ROOT
edges (one whenever a single-root tree exists) and, among those, the best score.
"""

from __future__ import annotations

import numpy as np

from ..errors import DecodingError


def _find_cycle(heads: np.ndarray) -> list[int] | None:
    """A cycle of the head graph (node 0 is the root), or None."""
    state = np.zeros(len(heads), dtype=np.int8)  # 0 new, 1 on the current walk, 2 done
    state[0] = 2
    for start in range(1, len(heads)):
        if state[start]:
            continue
        walk = []
        node = start
        while state[node] == 0:
            state[node] = 1
            walk.append(node)
            node = int(heads[node])
        if state[node] == 1:
            return walk[walk.index(node) :]
        state[walk] = 2
    return None


def _cle(scores: np.ndarray) -> np.ndarray:
    """Chu-Liu-Edmonds on a prepared matrix (row 0 and diagonal already -inf).

    Returns heads of length n+1 with heads[0] = -1.
    """
    n = scores.shape[0]
    heads = np.argmax(scores, axis=1)
    heads[0] = -1
    best = scores[np.arange(n), heads]
    if not np.isfinite(best[1:]).all():
        raise DecodingError("no spanning tree with a finite score (a word has no allowed head)")
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    cyc = np.asarray(cycle, dtype=np.int64)
    in_cycle = np.zeros(n, dtype=bool)
    in_cycle[cyc] = True
    rest = np.nonzero(~in_cycle)[0]  # starts with 0 (ROOT)
    m = len(rest)
    # entering the cycle at c from head h breaks c's cycle edge
    from_cycle, from_rest = scores[cyc], scores[rest]  # rows (plain indexing: np.ix_ costs more than it saves here)
    enter = from_cycle[:, rest] - best[cyc][:, None]  # (|C|, m)
    enter_at = np.argmax(enter, axis=0)
    leave = from_rest[:, cyc]  # (m, |C|): dependents outside, heads inside
    leave_from = np.argmax(leave, axis=1)
    sub = np.full((m + 1, m + 1), -np.inf)
    sub[:m, :m] = from_rest[:, rest]
    sub[m, :m] = enter[enter_at, np.arange(m)]
    sub[:m, m] = leave[np.arange(m), leave_from]
    sub[0, :] = -np.inf
    sub[m, m] = -np.inf
    sub_heads = _cle(sub)
    out = heads.copy()  # cycle members keep their cycle heads ...
    inner = sub_heads[1:m]
    out[rest[1:]] = np.where(inner == m, cyc[leave_from[1:]], rest[np.minimum(inner, m - 1)])
    entry_head = int(sub_heads[m])
    out[cyc[enter_at[entry_head]]] = rest[entry_head]  # ... except where the cycle is entered
    return out


def chu_liu_edmonds(scores: np.ndarray, *, single_root: bool = True) -> np.ndarray:
    """Maximum spanning tree of an ``(n+1, n+1)`` score matrix (``scores[dep, head]``, 0 = ROOT).

    Returns heads (int64, length n, values 0..n) for words 1..n. Ties go to the
    lower head index. Raises :class:`~stoicheia_spacy.errors.DecodingError` on a
    malformed matrix or when no (single-root) tree has a finite score.
    """
    arr = np.array(scores, dtype=np.float64)  # a copy we may modify
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
        raise DecodingError(
            f"scores must be a square (n+1, n+1) matrix with n >= 1, got {arr.shape}"
        )
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise DecodingError("scores contain NaN or +inf")
    n = arr.shape[0] - 1
    arr[0, :] = -np.inf
    np.fill_diagonal(arr, -np.inf)
    greedy = np.argmax(arr, axis=1)
    greedy[0] = -1
    if (not single_root or int((greedy == 0).sum()) == 1) and np.isfinite(arr[np.arange(1, n + 1), greedy[1:]]).all() \
            and _find_cycle(greedy) is None:
        # every word's best head already makes a tree (with one root word): no tree scores more
        return greedy[1:].astype(np.int64)
    if single_root and n > 1:
        finite = arr[np.isfinite(arr)]
        if finite.size:
            spread = float(finite.max() - finite.min())
            arr[:, 0] -= (n + 1) * spread + 1.0
    heads = _cle(arr)[1:]
    if single_root and int((heads == 0).sum()) != 1:
        raise DecodingError("no tree with a single root word has a finite score")
    return heads.astype(np.int64)


def tree_score(scores: np.ndarray, heads: np.ndarray) -> float:
    """Total score of a tree given as CoNLL heads (length n, 0 = ROOT)."""
    arr = np.asarray(scores, dtype=np.float64)
    h = np.asarray(heads, dtype=np.int64)
    return float(arr[np.arange(1, len(h) + 1), h].sum())


def is_tree(heads: np.ndarray, *, single_root: bool = True) -> bool:
    """Whether CoNLL heads (0 = ROOT) form one tree rooted at ROOT (with one root word)."""
    h = np.asarray(heads, dtype=np.int64)
    n = len(h)
    if n == 0 or h.min() < 0 or h.max() > n or (h == np.arange(1, n + 1)).any():
        return False
    if single_root and int((h == 0).sum()) != 1:
        return False
    return _find_cycle(np.concatenate([[-1], h])) is None


def decode_batch(
    scores: np.ndarray, lengths: np.ndarray, *, single_root: bool = True
) -> list[np.ndarray]:
    """Decode a padded batch ``(B, T+1, T+1)``; sentence ``b`` uses its first ``lengths[b]+1`` rows/columns."""
    arr = np.asarray(scores)
    if arr.ndim != 3 or len(lengths) != arr.shape[0]:
        raise DecodingError("batch scores must be (B, T+1, T+1) with one length per sentence")
    return [
        chu_liu_edmonds(arr[b, : n + 1, : n + 1], single_root=single_root)
        for b, n in enumerate(np.asarray(lengths, dtype=np.int64).tolist())
    ]
