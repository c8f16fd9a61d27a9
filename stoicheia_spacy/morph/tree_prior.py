"""The parser's tree prior: attachment and relation statistics of the words' tag classes.

The biaffine parser reads word vectors, not tags, so where its own sense of a word's
morphology fails (documentary papyri, a spelling it never saw) it cannot use the
morphologizer's tag, which the form table often gets right. :class:`TreePrior` holds counts
from training trees over **tag classes** (:func:`tag_class`: part of speech with case, or with
mood for verbs) and lets the parser add, with the weights of its settings
(``tree_prior``/``tree_prior_labels``, per domain):

* to the arc scores ``log p(h | d)`` the log of ``q(h | d)``, a softmax over the sentence's
  candidate heads of the smoothed share of such (dependent class, head class, direction,
  distance, agreement) pairs that are arcs in the training trees (the root: a head class of
  its own);
* to the relation scores ``log p(l | d, h)`` the log of ``P(l | dependent class, head class,
  direction, agreement)``, backed off to ``P(l | dependent class)`` where the key is rare.

Built once from gold trees (:meth:`TreePrior.count`, run by ``projects/parse``), saved as
``tree_prior.npz`` in the parser's folder; everything at parse time is array indexing.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CheckpointError

#: parts of speech whose class carries the case (nouns, adjectives, pronouns, the article, numerals)
NOMINAL = frozenset("naplm")
ROOT = "ROOT"
#: agreement of two words: none or unknown, case-number-gender same / different, person-number same / different
AGREEMENT = ("-", "c", "x", "p", "y")
N_DISTANCES = 5
FILE = "tree_prior.npz"
#: smoothing: an arc key's share is (arcs + ARC_K / 2) / (candidates + ARC_K); a relation key's
#: counts are mixed with LABEL_K pseudo-counts of the dependent class's relations
ARC_K = 1.0
LABEL_K = 5.0


def tag_class(xpos: str) -> str:
    """The class of an AGDT tag: part of speech, with the case for nominal words, with the
    mood (and a participle's case) for verbs; ``-`` for no tag."""
    if len(xpos) != 9:
        return "-"
    pos = xpos[0]
    if pos in NOMINAL:
        return pos + xpos[7]
    if pos == "v":
        return "v" + xpos[4] + (xpos[7] if xpos[4] == "p" else "")
    return pos


def _agreement(tags: Sequence[str]) -> np.ndarray:
    """``(n, n)`` indices into :data:`AGREEMENT` of every (dependent, head) pair."""
    n = len(tags)
    full = [t if len(t) == 9 else "---------" for t in tags]
    person = np.array([t[1] for t in full])
    number = np.array([t[2] for t in full])
    gender = np.array([t[6] for t in full])
    case = np.array([t[7] for t in full])
    has_case = (case != "-") & (case != "_")
    has_person = (person != "-") & (person != "_")
    same_case = (case[:, None] == case[None, :]) & (number[:, None] == number[None, :]) & (gender[:, None] == gender[None, :])
    same_person = (person[:, None] == person[None, :]) & (number[:, None] == number[None, :])
    both_case = has_case[:, None] & has_case[None, :]
    both_person = has_person[:, None] & has_person[None, :]
    out = np.zeros((n, n), dtype=np.int64)
    out[both_person] = np.where(same_person[both_person], 3, 4)
    out[both_case] = np.where(same_case[both_case], 1, 2)
    return out


def _geometry(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n, n)`` direction (0: head before the dependent) and distance bucket (0…4) of every
    (dependent, head) pair of words."""
    d = np.arange(n)[None, :] - np.arange(n)[:, None]  # head - dependent
    direction = (d > 0).astype(np.int64)
    a = np.abs(d)
    bucket = np.select([a <= 1, a == 2, a <= 4, a <= 8], [0, 1, 2, 3], 4)
    return direction, bucket


class TreePrior:
    """Counts of arcs and relations by tag class (module doc), and their smoothed log scores."""

    def __init__(self, classes: Sequence[str], labels: Sequence[str], arc_candidates: np.ndarray,
                 arc_gold: np.ndarray, label_counts: np.ndarray) -> None:
        self.classes = list(classes)
        self.labels = list(labels)
        c, a, n_lab = len(self.classes), len(AGREEMENT), len(self.labels)
        shape = (c, c + 1, 2, N_DISTANCES, a)
        if arc_candidates.shape != shape or arc_gold.shape != shape or label_counts.shape != (c, c + 1, 2, a, n_lab):
            raise CheckpointError(f"tree prior: arrays of shapes {arc_candidates.shape}, {arc_gold.shape}, "
                                  f"{label_counts.shape} do not fit {c} classes and {n_lab} relations")
        self.arc_candidates = arc_candidates.astype(np.int32)
        self.arc_gold = arc_gold.astype(np.int32)
        self.label_counts = label_counts.astype(np.int32)
        self._index = {k: i for i, k in enumerate(self.classes)}
        self._unknown = self._index.get("-", 0)
        self.arc = np.log((arc_gold + ARC_K / 2) / (arc_candidates + ARC_K)).astype(np.float32)
        by_dep = label_counts.sum(axis=(1, 2, 3)) + 1.0  # (c, L): add-one
        back = by_dep / by_dep.sum(axis=1, keepdims=True)
        totals = label_counts.sum(axis=-1, keepdims=True)
        self.label = np.log((label_counts + LABEL_K * back[:, None, None, None, :]) / (totals + LABEL_K)).astype(np.float32)

    # ----------------------------------------------------------------------------- building
    @classmethod
    def count(cls, sentences: Iterable[tuple[Sequence[str], Sequence[int], Sequence[str]]],
              labels: Sequence[str]) -> TreePrior:
        """Count gold ``(tags, heads, relations)`` sentences (heads 1-based, 0 = the root)."""
        data = [(list(t), np.asarray(h, dtype=np.int64), list(r)) for t, h, r in sentences]
        classes = sorted({"-", *(tag_class(x) for t, _, _ in data for x in t)})
        index = {k: i for i, k in enumerate(classes)}
        lab = {x: i for i, x in enumerate(labels)}
        c, a = len(classes), len(AGREEMENT)
        cand = np.zeros((c, c + 1, 2, N_DISTANCES, a), dtype=np.int64)
        gold = np.zeros_like(cand)
        counts = np.zeros((c, c + 1, 2, a, len(labels)), dtype=np.int64)
        for tags, heads, rels in data:
            n = len(tags)
            ids = np.array([index[tag_class(x)] for x in tags], dtype=np.int64)
            direction, bucket = _geometry(n)
            agree = _agreement(tags)
            off = ~np.eye(n, dtype=bool)
            d_idx, h_idx = np.nonzero(off)
            np.add.at(cand, (ids[d_idx], ids[h_idx], direction[off], bucket[off], agree[off]), 1)
            np.add.at(cand[:, c, 0, 0, 0], ids, 1)  # every word is a candidate dependent of the root
            for d in range(n):
                h = int(heads[d])
                if h == 0:
                    key: tuple[int, ...] = (int(ids[d]), c, 0, 0, 0)
                    lkey: tuple[int, ...] = (int(ids[d]), c, 0, 0)
                else:
                    key = (int(ids[d]), int(ids[h - 1]), int(direction[d, h - 1]), int(bucket[d, h - 1]),
                           int(agree[d, h - 1]))
                    lkey = (int(ids[d]), int(ids[h - 1]), int(direction[d, h - 1]), int(agree[d, h - 1]))
                gold[key] += 1
                if rels[d] in lab:
                    counts[(*lkey, lab[rels[d]])] += 1
        return cls(classes, labels, cand, gold, counts)

    # ------------------------------------------------------------------------------ scoring
    def class_ids(self, tags: Sequence[str]) -> np.ndarray:
        return np.array([self._index.get(tag_class(t), self._unknown) for t in tags], dtype=np.int64)

    def arc_scores(self, tags: Sequence[str]) -> np.ndarray:
        """``(n+1, n+1)`` [dependent, head] ``log q(h | d)`` of one sentence's words (row 0 and
        the diagonal ``-inf``; column 0 the root), each row a distribution over its heads."""
        n = len(tags)
        out = np.full((n + 1, n + 1), -np.inf, dtype=np.float64)
        if not n:
            return out
        ids = self.class_ids(tags)
        direction, bucket = _geometry(n)
        pair = self.arc[ids[:, None], ids[None, :], direction, bucket, _agreement(tags)].astype(np.float64)
        pair[np.eye(n, dtype=bool)] = -np.inf
        out[1:, 1:] = pair
        out[1:, 0] = self.arc[ids, len(self.classes), 0, 0, 0]
        rows = out[1:]
        top = rows.max(axis=1, keepdims=True)
        out[1:] = rows - (top + np.log(np.exp(rows - top).sum(axis=1, keepdims=True)))
        return out

    def label_scores(self, tags: Sequence[str], heads: np.ndarray) -> np.ndarray:
        """``(n, L)`` ``log P(l | ...)`` of each word with its head ``heads`` (1-based, 0 = root)."""
        n = len(tags)
        ids = self.class_ids(tags)
        heads = np.asarray(heads, dtype=np.int64)
        if not n:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        direction, _ = _geometry(n)
        agree = _agreement(tags)
        words = np.arange(n)
        h = np.maximum(heads - 1, 0)
        root = heads == 0
        head_ids = np.where(root, len(self.classes), ids[h])
        dirs = np.where(root, 0, direction[words, h])
        agr = np.where(root, 0, agree[words, h])
        return self.label[ids, head_ids, dirs, agr].astype(np.float64)

    # -------------------------------------------------------------------------- serialising
    def to_bytes(self) -> bytes:
        """The counts as a compressed ``.npz`` (what :meth:`from_bytes` reads)."""
        buf = io.BytesIO()
        np.savez_compressed(buf, classes=np.array(self.classes), labels=np.array(self.labels),
                            arc_candidates=self.arc_candidates.astype(np.int32), arc_gold=self.arc_gold.astype(np.int32),
                            label_counts=self.label_counts.astype(np.int32))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "tree prior") -> TreePrior:
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                return cls([str(x) for x in z["classes"]], [str(x) for x in z["labels"]],
                           z["arc_candidates"].astype(np.int32), z["arc_gold"].astype(np.int32),
                           z["label_counts"].astype(np.int32))
        except (OSError, ValueError, KeyError, EOFError) as err:
            raise CheckpointError(f"{source}: not a readable tree prior ({err})") from err

    def to_disk(self, path: str | Path) -> None:
        Path(path).write_bytes(self.to_bytes())

    @classmethod
    def from_disk(cls, path: str | Path) -> TreePrior:
        try:
            data = Path(path).read_bytes()
        except OSError as err:
            raise CheckpointError(f"tree prior {path}: unreadable ({err})") from err
        return cls.from_bytes(data, f"tree prior {path}")

    def info(self) -> dict[str, Any]:
        return {"classes": len(self.classes), "relations": len(self.labels),
                "arcs": int(self.arc_gold.sum()), "candidate_pairs": int(self.arc_candidates.sum())}


__all__ = ["AGREEMENT", "FILE", "TreePrior", "tag_class"]
