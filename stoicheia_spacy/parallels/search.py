"""Searches of the parallels index: attested parallels of a restoration candidate, passages
similar to a whole text, and the documents a query must leave out (its own and its duplicates).

:func:`attest` looks for the candidate's letters with up to ``context`` letters of the query
each side (word division ignored; the context stops at a lost letter or other gap): exact hits
first, then hits with one substituted letter in the context (the candidate's own letters always
match exactly; by pigeonhole one side, context plus candidate, matches exactly, so two exact
searches find them all). One hit per document, at most ``cap`` index positions read per search
whatever the number of matches. A hit whose matched letters include one the source's editor
supplied is flagged ``supplied`` and is not counted as attestation (:attr:`Attestation.attested`).

:func:`leave_out` is the leave-own-document-out rule: the document with the query's own id, and
for a query of at least 60 surviving letters (a shorter one is a formula, which many documents
hold whole), every document holding at least ``share`` (0.9) of the query's letter 12-grams
(sampled evenly over its surviving letters), so a duplicate edition of the query is never its
own parallel.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .index import SEP, ParallelIndex

#: Letters of each n-gram sampled for the duplicate rule and the passage search.
GRAM = 12


@dataclass(frozen=True)
class Hit:
    """One attested match: ``doc`` (index of the document), ``lo``/``hi`` (its matched letters),
    ``cand_lo``/``cand_hi`` (the candidate's letters among them), ``distance`` (0 exact, 1: one
    substituted context letter), ``supplied`` (a matched letter was supplied by the editor)."""

    doc: int
    lo: int
    hi: int
    cand_lo: int
    cand_hi: int
    distance: int
    supplied: bool


@dataclass(frozen=True)
class Attestation:
    """The parallels of one candidate: ``hits`` (best first, one per document) and ``attested``
    (how many documents hold an exact, unsupplied match, of at most ``cap`` positions read)."""

    hits: tuple[Hit, ...]
    attested: int


def side(letters: np.ndarray, k: int, left: bool) -> np.ndarray:
    """The ``k`` letters nearest the candidate on one side, stopping at a :data:`SEP`."""
    cut = np.flatnonzero(letters == SEP)
    if left:
        seg = letters[cut[-1] + 1:] if len(cut) else letters
        return seg[-k:] if k else seg[:0]
    seg = letters[: cut[0]] if len(cut) else letters
    return seg[:k]


def attest(index: ParallelIndex, left: np.ndarray, cand: np.ndarray, right: np.ndarray, *, context: int = 8,
           n: int = 3, exclude: Iterable[int] = (), cap: int = 2000, min_letters: int = 8) -> Attestation:
    """The parallels of the candidate ``cand`` between ``left`` and ``right`` (symbols; module doc)."""
    cand = np.asarray(cand, np.uint8)
    if not len(cand) or (cand == SEP).any():
        return Attestation((), 0)
    lf, rt = side(np.asarray(left, np.uint8), context, True), side(np.asarray(right, np.uint8), context, False)
    pattern = np.concatenate([lf, cand, rt])
    if len(pattern) < min_letters:
        return Attestation((), 0)
    m, a, c = len(pattern), len(lf), len(cand)
    banned = np.asarray(sorted(set(exclude)), np.int64)

    def hits_at(starts: np.ndarray, distance: int) -> list[Hit]:
        if not len(starts):
            return []
        docs = index.doc_of(starts)
        keep = ~np.isin(docs, banned) & (index.doc_of(starts + m - 1) == docs)
        starts, docs = starts[keep], docs[keep]
        sup = index.any_supplied(starts, m) if len(starts) else np.zeros(0, bool)
        return [Hit(int(d), int(s), int(s) + m, int(s) + a, int(s) + a + c, distance, bool(u))
                for s, d, u in zip(starts.tolist(), docs.tolist(), sup.tolist(), strict=True)]

    exact, _ = index.positions(pattern, cap)
    found = hits_at(exact, 0)
    attested = len({h.doc for h in found if not h.supplied})
    if len({h.doc for h in found}) < n and (a or len(rt)):
        near: list[np.ndarray] = []
        for lo_part, offset, other, other_at in ((pattern[: a + c], 0, rt, a + c), (pattern[a:], a, lf, 0)):
            if not len(other):
                continue
            pos, _ = index.positions(lo_part, cap)
            starts = pos - offset
            starts = starts[starts >= 0]
            if not len(starts):
                continue
            win = index.window(starts + other_at, len(other))
            miss = (win != other[None, :]).sum(axis=1)
            ok = (miss == 1) & (win != SEP).all(axis=1)
            near.append(starts[ok])
        if near:
            found += hits_at(np.unique(np.concatenate(near)), 1)
    best: dict[int, Hit] = {}
    for h in sorted(found, key=lambda h: (h.distance, h.supplied, h.doc, h.lo)):
        best.setdefault(h.doc, h)
    ranked = sorted(best.values(), key=lambda h: (h.distance, h.supplied, h.doc))
    return Attestation(tuple(ranked[:n]), attested)


def grams(letters: np.ndarray, size: int = GRAM, samples: int | None = 24) -> list[np.ndarray]:
    """Letter ``size``-grams of ``letters`` that cross no :data:`SEP`, ``samples`` of them evenly
    spaced (None: every one)."""
    letters = np.asarray(letters, np.uint8)
    if len(letters) < size:
        return []
    bad = np.concatenate([[0], np.cumsum(letters == SEP)])
    starts = np.flatnonzero(bad[size:] - bad[:-size] == 0)
    if samples is not None and len(starts) > samples:
        starts = starts[np.linspace(0, len(starts) - 1, samples).round().astype(int)]
    return [letters[s:s + size] for s in starts.tolist()]


def doc_counts(index: ParallelIndex, letters: np.ndarray, *, samples: int | None = 24,
               cap: int = 5000) -> tuple[dict[int, int], dict[int, int], int]:
    """For the sampled 12-grams of ``letters``: per document, how many of them it holds and the
    first index position of one; and how many grams were sampled."""
    counts: dict[int, int] = {}
    first: dict[int, int] = {}
    sampled = grams(letters, samples=samples)
    for g in sampled:
        pos, _ = index.positions(g, cap)
        if not len(pos):
            continue
        docs, at = np.unique(index.doc_of(pos), return_index=True)
        for d, p in zip(docs.tolist(), pos[at].tolist(), strict=True):
            counts[d] = counts.get(d, 0) + 1
            first.setdefault(d, p)
    return counts, first, len(sampled)


def leave_out(index: ParallelIndex, letters: np.ndarray, own_id: str | None = None, *,
              share: float = 0.9, min_letters: int = 60) -> frozenset[int]:
    """The documents a query of ``letters`` (its surviving letters, :data:`SEP` at gaps) leaves
    out: its own id's and, for a query of at least ``min_letters`` surviving letters, its
    duplicates' (module doc; a shorter query is a formula, which many documents hold whole)."""
    out: set[int] = set()
    if own_id:
        for name in (own_id, own_id.split(":", 1)[-1]):
            if (d := index.doc_index(name)) is not None:
                out.add(d)
    if int((np.asarray(letters) != SEP).sum()) < min_letters:
        return frozenset(out)
    counts, _, total = doc_counts(index, letters)
    if total:
        out |= {d for d, k in counts.items() if k >= share * total}
    return frozenset(out)




def similar(index: ParallelIndex, letters: np.ndarray, *, n: int = 5, exclude: Iterable[int] = (),
            samples: int = 200) -> list[tuple[int, int, int, float]]:
    """The documents most similar to a text of ``letters``: ``(doc, position of a shared
    12-gram, shared 12-grams, share of the text's sampled 12-grams)``, most shared first."""
    counts, first, total = doc_counts(index, letters, samples=samples)
    banned = set(exclude)
    ranked = sorted((d for d in counts if d not in banned), key=lambda d: (-counts[d], d))[:n]
    return [(d, first[d], counts[d], counts[d] / total) for d in ranked]


__all__ = ["GRAM", "Attestation", "Hit", "attest", "doc_counts", "grams", "leave_out", "side", "similar"]
