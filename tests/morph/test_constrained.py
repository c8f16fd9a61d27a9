"""Constrained XPOS decoding picks only attested tags, and the best of them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stoicheia_spacy.errors import InvalidInputError
from stoicheia_spacy.morph.agdt_tags import N_CLASSES, ids_to_tags, tags_to_ids
from stoicheia_spacy.morph.constrained import (
    attested_ids,
    constrained_decode,
    log_softmax,
    position_logprobs,
)

# Real AGDT tags (μῆνιν, ἄειδε, θεά, καί, the article ὁ, a participle)
ATTESTED = ["n-s---fa-", "v2spma---", "n-s---fv-", "c--------", "l-s---mn-", "v-sapamn-"]


def test_decoding_returns_only_attested_tags_and_the_best_one() -> None:
    rng = np.random.default_rng(0)
    tags, ids = attested_ids(ATTESTED + ["not-a-tag", "n-s---fa-"])
    assert tags == sorted(ATTESTED)
    logits = rng.normal(size=(50, sum(N_CLASSES))) * 3
    lps = position_logprobs(logits)
    best, score = constrained_decode(lps, ids)
    assert set(np.asarray(tags)[best]) <= set(ATTESTED)
    # brute force: the summed log-probability of every attested tag
    brute = np.stack([sum(lp[:, ids[m, i]] for i, lp in enumerate(lps)) for m in range(len(tags))], axis=1)
    assert np.array_equal(best, brute.argmax(axis=1))
    assert np.allclose(score, brute.max(axis=1))


def test_unconstrained_argmax_tag_is_replaced_by_an_attested_one() -> None:
    # every position prefers a combination nobody attests: "a3dfoanvs" (nonsense)
    target = tags_to_ids(["a3dfoanvs"])[0]
    logits = np.full((1, sum(N_CLASSES)), -5.0)
    bounds = np.cumsum((0, *N_CLASSES))
    for i, c in enumerate(target):
        logits[0, bounds[i] + c] = 5.0
    lps = position_logprobs(logits)
    free = ids_to_tags(np.stack([lp.argmax(axis=1) for lp in lps], axis=1))[0]
    assert free == "a3dfoanvs" and free not in ATTESTED
    tags, ids = attested_ids(ATTESTED)
    best, _ = constrained_decode(lps, ids)
    assert tags[best[0]] in ATTESTED


def test_log_softmax_and_errors() -> None:
    x = np.array([[1.0, 2.0, 3.0]])
    assert np.allclose(np.exp(log_softmax(x)).sum(), 1.0)
    with pytest.raises(InvalidInputError):
        position_logprobs(np.zeros((2, 10)))
    with pytest.raises(InvalidInputError):
        constrained_decode(position_logprobs(np.zeros((2, 57))), np.zeros((0, 9), dtype=np.int64))
    assert sum(1 for _ in itertools.islice(ATTESTED, 3)) == 3
