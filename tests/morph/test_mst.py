"""Chu-Liu-Edmonds with a single root: exact against brute force over all trees."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from stoicheia_spacy.errors import DecodingError
from stoicheia_spacy.morph.mst import chu_liu_edmonds, decode_batch, is_tree, tree_score


@functools.cache
def all_trees(n: int, single_root: bool) -> np.ndarray:
    """Every (single-root) dependency tree over n words, as CoNLL head arrays."""
    heads = np.array(list(itertools.product(range(n + 1), repeat=n)), dtype=np.int64)
    full = np.concatenate([np.zeros((len(heads), 1), dtype=np.int64), heads], axis=1)
    node = np.broadcast_to(np.arange(n + 1), full.shape).copy()
    for _ in range(n):  # pointer jumping: in a tree every word reaches ROOT in <= n steps
        node = np.take_along_axis(full, node, axis=1)
    ok = (node == 0).all(axis=1)
    if single_root:
        ok &= (heads == 0).sum(axis=1) == 1
    return heads[ok]


def brute_best(scores: np.ndarray, single_root: bool = True) -> float:
    n = scores.shape[0] - 1
    trees = all_trees(n, single_root)
    totals = scores[np.arange(1, n + 1), trees].sum(axis=1)
    return float(totals.max())


def test_tree_counts_match_cayley() -> None:
    # (n+1)^(n-1) rooted trees on n words; n^(n-1) with exactly one root word
    for n in range(1, 6):
        assert len(all_trees(n, False)) == (n + 1) ** (n - 1)
        assert len(all_trees(n, True)) == n ** (n - 1)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_random_matrices_against_brute_force(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(25 if n < 6 else 8):
        scores = rng.normal(size=(n + 1, n + 1))
        heads = chu_liu_edmonds(scores)
        assert is_tree(heads)
        assert tree_score(scores, heads) == pytest.approx(brute_best(scores), abs=1e-9)
        free = chu_liu_edmonds(scores, single_root=False)
        assert is_tree(free, single_root=False)
        assert tree_score(scores, free) == pytest.approx(brute_best(scores, False), abs=1e-9)


def test_root_scores_much_larger_than_the_rest() -> None:
    # every word loves ROOT: the unconstrained tree is flat, the constrained one has one root
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(6, 6))
    scores[:, 0] += 50.0
    free = chu_liu_edmonds(scores, single_root=False)
    assert (free == 0).all()
    heads = chu_liu_edmonds(scores)
    assert (heads == 0).sum() == 1
    assert tree_score(scores, heads) == pytest.approx(brute_best(scores), abs=1e-9)


def test_greek_sentence_with_a_cycle_in_the_greedy_heads() -> None:
    # ὁ ἄνθρωπος λέγει τὸν λόγον: gold heads 2 3 0 5 3
    words = ["ὁ", "ἄνθρωπος", "λέγει", "τὸν", "λόγον"]
    scores = np.full((6, 6), -5.0)
    scores[1, 2] = 4.0  # ὁ -> ἄνθρωπος
    scores[2, 3] = 3.0  # ἄνθρωπος -> λέγει
    scores[3, 0] = 5.0  # λέγει -> ROOT
    scores[3, 2] = 1.0
    scores[4, 5] = 4.0  # τὸν -> λόγον
    scores[5, 4] = 3.5  # λόγον -> τὸν: greedy cycle 4 <-> 5 ...
    scores[5, 3] = 3.0  # ... broken by the object's attachment to the verb
    scores[4, 0] = 4.5  # τὸν -> ROOT: a second root the constraint must remove
    greedy = scores[1:].argmax(axis=1)
    assert greedy[3] == 0 and greedy[4] == 4  # two root words greedily; once ROOT edges are
    # penalised for the single-root constraint, τὸν <-> λόγον form a cycle CLE must break
    free = chu_liu_edmonds(scores, single_root=False)
    assert (free == 0).sum() == 2  # unconstrained: two root words
    heads = chu_liu_edmonds(scores)
    assert heads.tolist() == [2, 3, 0, 5, 3], dict(zip(words, heads.tolist(), strict=True))
    assert tree_score(scores, heads) == pytest.approx(brute_best(scores))


def test_single_word() -> None:
    assert chu_liu_edmonds(np.array([[0.0, 0.0], [-3.0, 7.0]])).tolist() == [0]


def test_ties_are_deterministic_and_optimal() -> None:
    scores = np.zeros((5, 5))
    heads = chu_liu_edmonds(scores)
    assert is_tree(heads)
    assert heads.tolist() == chu_liu_edmonds(scores.copy()).tolist()
    integer = np.random.default_rng(3).integers(0, 2, size=(6, 6)).astype(float)
    assert tree_score(integer, chu_liu_edmonds(integer)) == brute_best(integer)


def test_minus_inf_entries_forbid_edges() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        scores = rng.normal(size=(5, 5))
        scores[rng.random((5, 5)) < 0.3] = -np.inf
        scores[:, 0] = np.where(np.arange(5) == 2, 0.0, scores[:, 0])  # keep a root option
        try:
            heads = chu_liu_edmonds(scores)
        except DecodingError:
            assert not np.isfinite(brute_best(scores))
            continue
        assert np.isfinite(scores[np.arange(1, 5), heads]).all()
        assert tree_score(scores, heads) == pytest.approx(brute_best(scores), abs=1e-9)


def test_no_single_root_tree_raises() -> None:
    scores = np.full((3, 3), -np.inf)
    scores[1, 0] = scores[2, 0] = 0.0  # both words can only attach to ROOT
    assert chu_liu_edmonds(scores, single_root=False).tolist() == [0, 0]
    with pytest.raises(DecodingError):
        chu_liu_edmonds(scores)


@pytest.mark.parametrize(
    "bad", [np.zeros((1, 1)), np.zeros((3, 4)), np.zeros(3), np.array([[0, 0], [np.nan, 0]])]
)
def test_malformed_matrices_raise(bad: np.ndarray) -> None:
    with pytest.raises(DecodingError):
        chu_liu_edmonds(bad)


def test_large_sentence_is_a_tree_and_batch_decoding() -> None:
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(121, 121))
    heads = chu_liu_edmonds(scores)
    assert is_tree(heads) and len(heads) == 120
    padded = np.zeros((2, 121, 121))
    padded[0] = scores
    padded[1, :4, :4] = scores[:4, :4]
    out = decode_batch(padded, np.array([120, 3]))
    assert out[0].tolist() == heads.tolist()
    assert out[1].tolist() == chu_liu_edmonds(scores[:4, :4]).tolist()


@pytest.mark.parametrize("n", [2, 4, 6])
def test_parser_like_scores_whose_greedy_heads_are_already_a_tree(n: int) -> None:
    """A trained parser's best heads are mostly a tree already (the decoder then takes them as
    they are); with one root word or two, the result is still the best single-root tree."""
    rng = np.random.default_rng(20 + n)
    for trial in range(40):
        gold = all_trees(n, trial % 2 == 0)[rng.integers(len(all_trees(n, trial % 2 == 0)))]
        scores = rng.normal(size=(n + 1, n + 1))
        scores[np.arange(1, n + 1), gold] += 4.0  # the gold tree (sometimes two root words) stands out
        heads = chu_liu_edmonds(scores)
        assert is_tree(heads)
        assert tree_score(scores, heads) == pytest.approx(brute_best(scores), abs=1e-9)
        if (gold == 0).sum() == 1 and tree_score(scores, gold) == pytest.approx(brute_best(scores)):
            assert heads.tolist() == gold.tolist()
        free = chu_liu_edmonds(scores, single_root=False)
        assert tree_score(scores, free) == pytest.approx(brute_best(scores, False), abs=1e-9)
