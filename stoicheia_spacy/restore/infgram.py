"""Unbounded-context ("∞-gram") candidates for a gap, read from the parallels index.

A fixed-order n-gram sees at most 7 letters of context; formulaic documents repeat whole
phrases. For a gap of ``width`` characters between ``left`` and ``right`` (the gap's own text,
as letters, :data:`~stoicheia_spacy.parallels.index.SEP` at lost letters), :func:`occurrences`
finds the index positions where a suffix of the left context (3 letters or more) occurs and,
separately, where a prefix of the right context does; every match length is searched, the
suffix-array range of each length sampled evenly (``per_level`` positions: a sample in
proportion to the continuations) until a range is small enough to take whole. Each anchor, read
forward (left anchors) or backward (right anchors) over 1…``width`` letters, gives the letters
of a candidate; a candidate is kept where its letters with the index's word division (and a
word break at an edge where the gap's neighbour is not a space) make exactly ``width``
characters, no letter is lost, and the match does not leave its document. A gap of hidden or
range width (several ``width`` s) is searched once: the anchors serve every width, each kept text
as wide as its own characters (Run 15). Its left and right
match lengths (how many letters of the gap's context agree on each side, up to :data:`SPAN`)
are counted on the index itself, so an anchor found from the left also measures its right side.

:func:`infgram_features` pools the occurrences of each candidate text: ``context`` (the best
occurrence's ``min(left, cap) + min(right, cap)``), ``docs`` (documents holding it with at least
``both`` letters matched on each side) and ``occurrences``. Documents of ``exclude`` (the
sample's own and its duplicates, :func:`~stoicheia_spacy.parallels.search.leave_out`) are
skipped. How the features enter the ranking is :func:`rescore` (weights fitted on dev per
width bucket and domain, ``projects/restore/RESULTS.md``, Run 13).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..alphabet import ALPHABET
from ..parallels.index import DEPTH, SEP, ParallelIndex
from ..parallels.search import side

__all__ = ["SPAN", "Evidence", "InfFeatures", "evidence_widths", "final_sigma", "fold", "gap_evidence", "infgram_features",
           "occurrences", "query_sides", "rescore", "weights_for"]

#: context letters compared on each side of an occurrence
SPAN = 32
#: the shortest context match that anchors a search
MIN_MATCH = 3
_CHARS = np.array([*ALPHABET, "·"])


@dataclass(frozen=True)
class InfFeatures:
    """One candidate's evidence: ``context`` (best occurrence's capped left + right match),
    ``docs`` (documents with at least ``both`` letters matched each side), ``occurrences``."""

    context: int
    docs: int
    occurrences: int


def _bits(packed: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return ((np.asarray(packed[idx >> 3]) >> (7 - (idx & 7))) & 1).astype(bool)


def _anchors(index: ParallelIndex, pattern: np.ndarray, from_end: bool, per_level: int) -> np.ndarray:
    """Positions where a suffix (``from_end``) or prefix of ``pattern`` of MIN_MATCH… letters
    occurs, each match length's suffix-array range sampled evenly; returned as the position just
    after the matched letters (suffix) or of their first letter (prefix)."""
    found: list[np.ndarray] = []
    for k in range(MIN_MATCH, min(len(pattern), SPAN) + 1):
        key = pattern[-k:] if from_end else pattern[:k]
        lo, hi = index.find(key)
        if hi <= lo:
            break
        take = np.arange(lo, hi) if hi - lo <= per_level else np.linspace(lo, hi - 1, per_level).round().astype(np.int64)
        pos = np.asarray(index.sa[take], np.int64)
        found.append(pos + k if from_end else pos)
        if hi - lo <= per_level:  # the longer matches are a subset of this range
            break
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _match(index: ParallelIndex, at: np.ndarray, context: np.ndarray, backward: bool) -> np.ndarray:
    """Letters of ``context`` matched by the index from each position of ``at`` (backward: the
    letters before ``at``, against ``context`` read from its end)."""
    n = min(len(context), SPAN)
    if not n or not len(at):
        return np.zeros(len(at), np.int64)
    offs = -1 - np.arange(n) if backward else np.arange(n)
    idx = np.clip(at[:, None] + offs[None, :], 0, len(index.letters) - 1)
    want = context[::-1][:n] if backward else context[:n]
    eq = np.asarray(index.letters[idx]) == want[None, :]
    eq &= want[None, :] != SEP
    return np.where(eq.all(axis=1), n, np.argmin(eq, axis=1))


def occurrences(index: ParallelIndex, left: np.ndarray, right: np.ndarray, width: int | Collection[int], *,
                space_before: bool, space_after: bool, exclude: Iterable[int] = (),
                per_level: int = 64) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Candidate texts of the index's occurrences for one gap (module doc): ``(texts, left
    match, right match, document)`` per occurrence. ``width``: the gap's characters, or every
    width it may have (a hidden or range width: one search of the context serves them all, each
    text as wide as its own characters). ``space_before`` / ``space_after``: the gap's neighbour
    on that side is a letter or mark, so a word break there is a character of the gap."""
    lf = side(np.asarray(left, np.uint8), SPAN, True)
    rt = side(np.asarray(right, np.uint8), SPAN, False)
    allowed = np.array(sorted({int(w) for w in ([width] if isinstance(width, (int, np.integer)) else width)}),
                       np.int64)
    allowed = allowed[allowed >= 1]
    if not len(allowed):
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    width = int(allowed[-1])  # the widest: the letters read and the layout of the keys
    m = np.arange(1, width + 1)
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    if len(lf) >= MIN_MATCH:
        q = _anchors(index, lf, True, per_level)
        starts.append(np.repeat(q, width))
        ends.append((q[:, None] + m[None, :]).ravel())
    if len(rt) >= MIN_MATCH:
        e = _anchors(index, rt, False, per_level)
        starts.append((e[:, None] - m[None, :]).ravel())
        ends.append(np.repeat(e, width))
    if not starts:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    pairs = np.unique(np.stack([np.concatenate(starts), np.concatenate(ends)], axis=1), axis=0)
    n_letters = len(index.letters) - DEPTH  # the letters (the rest is padding)
    pairs = pairs[(pairs[:, 0] >= 1) & (pairs[:, 1] < n_letters)]
    q, e = pairs[:, 0], pairs[:, 1]
    k = e - q
    grid = q[:, None] + np.arange(width)[None, :]
    inside = np.arange(width)[None, :] < k[:, None]
    letters = np.asarray(index.letters[np.minimum(grid, n_letters - 1)])
    ok = ~((letters == SEP) & inside).any(axis=1)
    spaces = _bits(index._spaces, np.minimum(grid, n_letters - 1)) & inside
    inner = (spaces & (np.arange(width)[None, :] < (k - 1)[:, None])).sum(axis=1)
    lead = _bits(index._spaces, q - 1) & space_before
    trail = _bits(index._spaces, e - 1) & space_after
    ok &= np.isin(k + inner + lead + trail, allowed)
    docs = index.doc_of(q)
    banned = np.asarray(sorted(set(exclude)), np.int64)
    ok &= ~np.isin(docs, banned)
    sel = np.flatnonzero(ok)
    if not len(sel):
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    q, e, docs = q[sel], e[sel], docs[sel]
    lm = _match(index, q, lf, True)
    rm = _match(index, e, rt, False)
    kk = k[sel]
    key = np.concatenate([np.where(inside[sel], letters[sel], SEP), spaces[sel], lead[sel, None], trail[sel, None],
                          kk[:, None]], axis=1).astype(np.int64)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    rendered = [_render(row, width) for row in uniq]  # the distinct candidates only
    texts = [rendered[i] for i in np.asarray(inv).ravel().tolist()]
    return texts, lm, rm, docs


def _render(row: np.ndarray, width: int) -> str:
    k = int(row[-1])
    sym, spc = row[:k], row[width:width + k].astype(bool)
    chars = _CHARS[np.minimum(sym, SEP)]
    glue = np.where(spc[:-1], " ", "")
    body = "".join(np.char.add(chars[:-1], glue).tolist()) + str(chars[-1])
    return (" " if row[2 * width] else "") + body + (" " if row[2 * width + 1] else "")


def infgram_features(texts: Sequence[str], lm: np.ndarray, rm: np.ndarray, docs: np.ndarray, *,
                     cap: int = 16, both: int = 4) -> dict[str, InfFeatures]:
    """The evidence of each candidate text over its occurrences (module doc)."""
    best: dict[str, int] = {}
    held: dict[str, set[int]] = {}
    count: dict[str, int] = {}
    ctx = (np.minimum(lm, cap) + np.minimum(rm, cap)).tolist()
    strong = ((lm >= both) & (rm >= both)).tolist()
    for t, c, s, d in zip(texts, ctx, strong, docs.tolist(), strict=True):
        best[t] = max(best.get(t, 0), c)
        count[t] = count.get(t, 0) + 1
        if s:
            held.setdefault(t, set()).add(d)
    return {t: InfFeatures(best[t], len(held.get(t, ())), count[t]) for t in best}


def rescore(score: float, feats: InfFeatures | None, weights: Sequence[float]) -> float:
    """A candidate's combined score plus its evidence: ``score + a · context + b · log(1 + docs)``
    with ``weights = (a, b)``."""
    if feats is None:
        return float(score)
    a, b = (float(x) for x in weights)
    return float(score) + a * feats.context + b * float(np.log1p(feats.docs))


def weights_for(table: Mapping[str, Sequence[float]] | None, bucket: str) -> tuple[float, float]:
    """The two ∞-gram weights of ``bucket`` (its own, else ``default``, else none)."""
    w = (table or {}).get(bucket, (table or {}).get("default", (0.0, 0.0)))
    return float(w[0]), float(w[1])


@dataclass(frozen=True)
class Evidence:
    """What the restorer's combination needs to add the index's candidates to one gap:
    the ``index``, the documents to ``exclude`` (the Doc's duplicates), the ``weights`` per
    width bucket ``(a, b)`` of :func:`rescore`, and how many candidates to add (``extra``)."""

    index: ParallelIndex
    weights: Mapping[str, Sequence[float]]
    exclude: frozenset[int] = frozenset()
    extra: int = 30
    #: the Doc's domain's own sources (:class:`~.domain_sources.DomainSources`, Run 14), or None
    domain: Any = None


def query_sides(query: object) -> tuple[np.ndarray, np.ndarray]:
    """A :class:`~.beam.GapQuery`'s letters left and right of the gap, as index symbols
    (:data:`SPAN` a side, unknown letters as :data:`SEP`)."""
    ctx, at = query.context, int(query.insert_at)  # type: ignore[attr-defined]
    letters = np.asarray(ctx.letters, np.int64)
    left, right = letters[max(0, at - SPAN):at], letters[at:at + SPAN]
    return (np.minimum(left, SEP).astype(np.uint8), np.minimum(right, SEP).astype(np.uint8))


def final_sigma(text: str, word_ends: bool) -> str:
    """σ as ς before a word break inside ``text`` and at its end when ``word_ends``."""
    text = re.sub("σ(?= )", "ς", text)
    return text[:-1] + "ς" if word_ends and text.endswith("σ") else text


def evidence_widths(evidence: Evidence, query: object, max_letters: int = 10) -> tuple[int, ...]:
    """The widths the index reads candidates of for ``query``: its known width; every width of a
    hidden (``1..max_letters``) or range width only where ``evidence.weights`` names that bucket
    (``unknown`` / ``range``: fitted for it, Run 15); none for a gap counted in letters."""
    widths = getattr(query, "widths", None)
    if getattr(query, "letters", None) is not None:
        return ()
    if widths is not None and len(widths) == 1:
        return (int(widths[0]),)
    bucket = "unknown" if widths is None else "range"
    if bucket not in (evidence.weights or {}):
        return ()
    return tuple(range(1, int(max_letters) + 1)) if widths is None else tuple(int(w) for w in widths)


def gap_evidence(evidence: Evidence, query: object, max_letters: int = 10) -> dict[str, InfFeatures]:
    """The index's candidates of one gap and their evidence (keys: their texts with the final
    sigma of :func:`final_sigma`), over the widths of :func:`evidence_widths` (empty: none)."""
    widths = evidence_widths(evidence, query, max_letters)
    if not widths:
        return {}
    left, right = query_sides(query)
    before, after = bool(query.left_open), bool(query.right_open)  # type: ignore[attr-defined]
    texts, lm, rm, docs = occurrences(evidence.index, left, right, widths, space_before=before,
                                      space_after=after, exclude=evidence.exclude)
    feats = infgram_features(texts, lm, rm, docs)
    return {final_sigma(t, not after): f for t, f in feats.items()}


def fold(text: str) -> str:
    """``text`` with every sigma as σ (the key a candidate is matched by)."""
    return text.replace("ς", "σ").replace("ϲ", "σ")
