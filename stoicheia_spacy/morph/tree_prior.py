"""The parser's tree prior: attachment and relation statistics of the words' classes (tags, function words).

The biaffine parser reads word vectors, not tags, so where its own sense of a word's
morphology fails (documentary papyri, a spelling it never saw) it cannot use the
morphologizer's tag, which the form table often gets right. :class:`TreePrior` holds counts
from training trees over **word classes** (:func:`word_class`: part of speech with case, or with
mood for verbs, :func:`tag_class`; the most frequent conjunctions, adverbs, particles and
prepositions by their lemma, from the lemmatizer) and lets the parser add, with the weights of its settings
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
from collections.abc import Iterable, Mapping, Sequence
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
#: parts of speech whose most frequent lemmas are classes of their own (conjunctions, adverbs,
#: particles, prepositions), and how many such lemmas the default prior keeps
FUNCTION_POS = frozenset("cdgr")
FUNCTION_LEMMAS = 40
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


def word_class(xpos: str, lemma: str, classes: Mapping[str, int] | Sequence[str]) -> str:
    """The class of a word: ``POS:lemma`` where that is one of ``classes`` (a frequent function
    word, e.g. ``r:ἐν``, ``g:δέ``), else :func:`tag_class`."""
    if len(xpos) == 9 and xpos[0] in FUNCTION_POS and lemma:
        own = f"{xpos[0]}:{lemma}"
        if own in classes:
            return own
    return tag_class(xpos)


def _class_ids(index: Mapping[str, int], tags: Sequence[str], lemmas: Sequence[str] | None,
               unknown: int = 0) -> np.ndarray:
    words = lemmas if lemmas is not None else [""] * len(tags)
    return np.array([index.get(word_class(t, m, index), unknown) for t, m in zip(tags, words, strict=True)],
                    dtype=np.int64)


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
    """Counts of arcs and relations by word class (module doc), and their smoothed log scores.

    ``label_keys`` are the codes (:meth:`_label_code`) of the relation keys seen in training,
    sorted, and ``label_counts`` their relation counts, one row each: the table is sparse, since
    most class pairs never meet."""

    def __init__(self, classes: Sequence[str], labels: Sequence[str], arc_candidates: np.ndarray,
                 arc_gold: np.ndarray, label_keys: np.ndarray, label_counts: np.ndarray) -> None:
        self.classes = list(classes)
        self.labels = list(labels)
        c, a, n_lab = len(self.classes), len(AGREEMENT), len(self.labels)
        shape = (c, c + 1, 2, N_DISTANCES, a)
        if (arc_candidates.shape != shape or arc_gold.shape != shape or label_counts.ndim != 2
                or label_counts.shape != (len(label_keys), n_lab)):
            raise CheckpointError(f"tree prior: arrays of shapes {arc_candidates.shape}, {arc_gold.shape}, "
                                  f"{label_counts.shape} do not fit {c} classes and {n_lab} relations")
        self.arc_candidates = arc_candidates.astype(np.int32)
        self.arc_gold = arc_gold.astype(np.int32)
        self.label_keys = np.asarray(label_keys, dtype=np.int64)
        self.label_counts = label_counts.astype(np.int32)
        self._index = {k: i for i, k in enumerate(self.classes)}
        self._unknown = self._index.get("-", 0)
        self.arc = np.log((arc_gold + ARC_K / 2) / (arc_candidates + ARC_K)).astype(np.float32)
        by_dep = np.ones((c, n_lab))  # add-one
        np.add.at(by_dep, self.label_keys // ((c + 1) * 2 * a), self.label_counts)
        back = by_dep / by_dep.sum(axis=1, keepdims=True)
        self._label_back = np.log(back).astype(np.float32)
        rows_back = back[self.label_keys // ((c + 1) * 2 * a)]
        totals = self.label_counts.sum(axis=1, keepdims=True)
        self._label = np.log((self.label_counts + LABEL_K * rows_back) / (totals + LABEL_K)).astype(np.float32)

    def _label_code(self, dep: np.ndarray, head: np.ndarray, direction: np.ndarray, agree: np.ndarray) -> np.ndarray:
        c, a = len(self.classes), len(AGREEMENT)
        return ((dep * (c + 1) + head) * 2 + direction) * a + agree

    # ----------------------------------------------------------------------------- building
    @classmethod
    def count(cls, sentences: Iterable[tuple[Sequence[str], Sequence[str], Sequence[int], Sequence[str]]],
              labels: Sequence[str], function_lemmas: int = FUNCTION_LEMMAS) -> TreePrior:
        """Count gold ``(tags, lemmas, heads, relations)`` sentences (heads 1-based, 0 = the
        root); the ``function_lemmas`` most frequent lemmas of conjunctions, adverbs, particles and
        prepositions are classes of their own (:func:`word_class`)."""
        data = [(list(t), list(m), np.asarray(h, dtype=np.int64), list(r)) for t, m, h, r in sentences]
        freq: dict[str, int] = {}
        for tags, lemmas, _, _ in data:
            for t, m in zip(tags, lemmas, strict=True):
                if len(t) == 9 and t[0] in FUNCTION_POS and m:
                    name = f"{t[0]}:{m}"
                    freq[name] = freq.get(name, 0) + 1
        own = {k for k, _ in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:function_lemmas]}
        classes = sorted({"-", *own, *(tag_class(x) for t, _, _, _ in data for x in t)})
        index = {k: i for i, k in enumerate(classes)}
        lab = {x: i for i, x in enumerate(labels)}
        c, a = len(classes), len(AGREEMENT)
        cand = np.zeros((c, c + 1, 2, N_DISTANCES, a), dtype=np.int64)
        gold = np.zeros_like(cand)
        dense: dict[int, np.ndarray] = {}
        for tags, lemmas, heads, rels in data:
            n = len(tags)
            ids = _class_ids(index, tags, lemmas)
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
                    lkey = (int(ids[d]), c, 0, 0)
                else:
                    key = (int(ids[d]), int(ids[h - 1]), int(direction[d, h - 1]), int(bucket[d, h - 1]),
                           int(agree[d, h - 1]))
                    lkey = (int(ids[d]), int(ids[h - 1]), int(direction[d, h - 1]), int(agree[d, h - 1]))
                gold[key] += 1
                if rels[d] in lab:
                    code = ((lkey[0] * (c + 1) + lkey[1]) * 2 + lkey[2]) * a + lkey[3]
                    dense.setdefault(code, np.zeros(len(labels), dtype=np.int64))[lab[rels[d]]] += 1
        codes = np.array(sorted(dense), dtype=np.int64)
        counts = np.stack([dense[int(k)] for k in codes]) if len(codes) else np.zeros((0, len(labels)), np.int64)
        return cls(classes, labels, cand, gold, codes, counts)

    # ------------------------------------------------------------------------------ scoring
    def class_ids(self, tags: Sequence[str], lemmas: Sequence[str] | None = None) -> np.ndarray:
        """Each word's class (:func:`word_class`) as an index; an unknown class is ``-``'s."""
        return _class_ids(self._index, tags, lemmas, self._unknown)

    def arc_scores(self, tags: Sequence[str], lemmas: Sequence[str] | None = None) -> np.ndarray:
        """``(n+1, n+1)`` [dependent, head] ``log q(h | d)`` of one sentence's words (row 0 and
        the diagonal ``-inf``; column 0 the root), each row a distribution over its heads."""
        n = len(tags)
        out = np.full((n + 1, n + 1), -np.inf, dtype=np.float64)
        if not n:
            return out
        ids = self.class_ids(tags, lemmas)
        direction, bucket = _geometry(n)
        pair = self.arc[ids[:, None], ids[None, :], direction, bucket, _agreement(tags)].astype(np.float64)
        pair[np.eye(n, dtype=bool)] = -np.inf
        out[1:, 1:] = pair
        out[1:, 0] = self.arc[ids, len(self.classes), 0, 0, 0]
        rows = out[1:]
        top = rows.max(axis=1, keepdims=True)
        out[1:] = rows - (top + np.log(np.exp(rows - top).sum(axis=1, keepdims=True)))
        return out

    def label_scores(self, tags: Sequence[str], heads: np.ndarray, lemmas: Sequence[str] | None = None) -> np.ndarray:
        """``(n, L)`` ``log P(l | ...)`` of each word with its head ``heads`` (1-based, 0 = root)."""
        n = len(tags)
        if not n:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        ids = self.class_ids(tags, lemmas)
        heads = np.asarray(heads, dtype=np.int64)
        direction, _ = _geometry(n)
        agree = _agreement(tags)
        words = np.arange(n)
        h = np.maximum(heads - 1, 0)
        root = heads == 0
        codes = self._label_code(ids, np.where(root, len(self.classes), ids[h]), np.where(root, 0, direction[words, h]),
                                 np.where(root, 0, agree[words, h]))
        at = np.minimum(np.searchsorted(self.label_keys, codes), max(len(self.label_keys) - 1, 0))
        found = (self.label_keys[at] == codes) if len(self.label_keys) else np.zeros(n, dtype=bool)
        out = self._label_back[ids].astype(np.float64)
        if found.any():
            out[found] = self._label[at[found]]
        return out

    # -------------------------------------------------------------------------- serialising
    def to_bytes(self) -> bytes:
        """The counts as a compressed ``.npz`` (what :meth:`from_bytes` reads)."""
        buf = io.BytesIO()
        np.savez_compressed(buf, classes=np.array(self.classes), labels=np.array(self.labels),
                            arc_candidates=self.arc_candidates, arc_gold=self.arc_gold, label_keys=self.label_keys,
                            label_counts=self.label_counts)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "tree prior") -> TreePrior:
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                return cls([str(x) for x in z["classes"]], [str(x) for x in z["labels"]],
                           z["arc_candidates"], z["arc_gold"], z["label_keys"], z["label_counts"])
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


__all__ = ["AGREEMENT", "FILE", "FUNCTION_LEMMAS", "TreePrior", "tag_class", "word_class"]
