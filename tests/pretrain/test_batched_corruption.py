"""The batched torch corruption (``pretrain.batched``) against the published numpy sampler.

Same approach as ``test_corruption.py``: a few thousand windows of real Greek (Agamemnon),
the published frequencies checked to 3-4 standard errors, plus two-sample tests of the
batched draws against ``CorruptionSampler`` on the same windows (realised masked share per
pattern, elastic growth, channel targets), and exact invariants on every row.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from pretrain.batched import corrupt_batch
from pretrain.corruption import (
    AVAILABILITY_MODES,
    IGNORE_INDEX,
    PATTERNS,
    CorruptionSampler,
    Example,
    NoiseConfig,
)
from stoicheia_spacy import alphabet as A
from stoicheia_spacy.codec import encode_planes

N = 4000
NAMES = ("letters", "boundary", "diacritics", "capitals", "punctuation")


class Draws:
    def __init__(self, corpus: Path) -> None:
        text = " ".join(json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines())
        planes = encode_planes(text)
        rng = np.random.default_rng(0)
        self.W = 240
        self.starts = rng.integers(0, len(planes) - self.W, N)
        self.lens = rng.integers(60, self.W + 1, N)
        arrays = {n: np.asarray(getattr(planes, n)) for n in NAMES}
        self.letters = np.stack([arrays["letters"][s : s + self.W] for s in self.starts])
        # a few real lacunae (MASK letters) in every tenth window
        self.letters[::10, 5:8] = A.MASK_ID
        batch = {n: torch.from_numpy(np.stack([arrays[n][s : s + self.W] for s in self.starts])).long() for n in NAMES}
        batch["letters"] = torch.from_numpy(self.letters).long()
        gen = torch.Generator().manual_seed(7)
        self.fields, self.out_len, self.draws = corrupt_batch(batch, torch.from_numpy(self.lens), gen)
        sampler, r = CorruptionSampler(), np.random.default_rng(1)
        self.ref = []
        for i in range(N):
            n = int(self.lens[i])
            ex = Example(letters=self.letters[i, :n], **{k: batch[k][i, :n].numpy() for k in NAMES[1:]},
                         lacuna=self.letters[i, :n] == A.MASK_ID)
            self.ref.append(sampler(ex, r))

    def row(self, i: int, name: str) -> np.ndarray:
        return self.fields[name][i, : int(self.out_len[i])].numpy()

    def pattern(self, i: int) -> str:
        return PATTERNS[int(self.draws["pattern"][i])]


@pytest.fixture(scope="module")
def draws(corpus: Path) -> Draws:
    torch.set_num_threads(1)
    return Draws(corpus)


def test_pattern_mixture_and_rate_follow_the_publication(draws: Draws) -> None:
    counts = Counter(draws.pattern(i) for i in range(N))
    # word patterns may fall back to iid on windows without a candidate; none here
    expected = np.array(NoiseConfig().pattern_weights) * N
    observed = np.array([counts[p] for p in PATTERNS])
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    t = draws.draws["rate"].numpy()
    assert t.min() >= 0.05 and t.max() <= 0.95
    clipped = np.clip(stats.beta(2, 4).rvs(200_000, random_state=0), 0.05, 0.95)
    assert stats.ks_2samp(t, clipped).pvalue > 1e-3


def test_channel_modes_follow_the_publication(draws: Draws) -> None:
    cfg = NoiseConfig()
    modes = draws.draws["modes"].numpy()
    for c, channel in enumerate(("boundary", "diacritics", "punctuation")):
        full, none = cfg.availability(channel)
        observed = np.bincount(modes[:, c], minlength=len(AVAILABILITY_MODES))
        assert stats.chisquare(observed, np.array([full, none, 1 - full - none]) * N).pvalue > 1e-3


@pytest.mark.parametrize("pattern", PATTERNS)
def test_realised_corruption_matches_the_numpy_sampler(draws: Draws, pattern: str) -> None:
    def share(inputs: np.ndarray, target: np.ndarray, n: int) -> float:
        return float(((target != IGNORE_INDEX) & (target != A.BLANK_ID)).sum()) / n

    batched = [share(draws.row(i, "input_ids"), draws.row(i, "char_target"), int(draws.lens[i]))
               for i in range(N) if draws.pattern(i) == pattern]
    numpy_ = [share(c.input_ids, c.char_target, int(draws.lens[i])) for i, c in enumerate(draws.ref) if c.pattern == pattern]
    assert len(batched) > 300 and len(numpy_) > 300
    assert stats.ks_2samp(batched, numpy_).pvalue > 1e-3, (np.mean(batched), np.mean(numpy_))
    growth_b = [int(draws.out_len[i]) - int(draws.lens[i]) for i in range(N) if draws.pattern(i) == pattern]
    growth_n = [len(c) - int(draws.lens[i]) for i, c in enumerate(draws.ref) if c.pattern == pattern]
    if pattern == "elastic":
        assert stats.ks_2samp(growth_b, growth_n).pvalue > 1e-3
        assert min(growth_b) >= 2
    else:
        assert set(growth_b) == {0}
    bnd_b = [float((draws.row(i, "bnd_target") != IGNORE_INDEX).mean()) for i in range(N) if draws.pattern(i) == pattern]
    bnd_n = [float((c.bnd_target != IGNORE_INDEX).mean()) for c in draws.ref if c.pattern == pattern]
    assert stats.ks_2samp(bnd_b, bnd_n).pvalue > 1e-3


def test_exact_counts_and_invariants_on_every_row(draws: Draws) -> None:
    for i in range(N):
        n, pattern, k = int(draws.lens[i]), draws.pattern(i), int(draws.draws["k"][i])
        inputs, target = draws.row(i, "input_ids"), draws.row(i, "char_target")
        weight = draws.row(i, "char_weight")
        lac = draws.letters[i, :n] == A.MASK_ID
        n_lac = int(lac.sum())
        assert k == max(1, round(float(draws.draws["rate"][i]) * (n - n_lac)))
        masked = int((inputs == A.MASK_ID).sum()) - n_lac
        if pattern in ("iid", "span"):
            assert masked == k
        elif pattern == "partial_word":
            assert 0 < masked <= k
        elif pattern == "substitution":
            letters = draws.letters[i, :n]
            assert masked == 0 and int(((inputs != letters) & ~lac).sum()) == k
            assert int((target != IGNORE_INDEX).sum()) == min(2 * k, n - n_lac)
        if pattern != "elastic":
            assert not (target[lac] != IGNORE_INDEX).any()  # real lacunae never supervised
            assert (inputs[lac] == A.MASK_ID).all()
        sup = target != IGNORE_INDEX
        np.testing.assert_allclose(weight[sup], 1.0 / float(draws.draws["rate"][i]), rtol=1e-5)
        assert (weight[~sup] == 0).all()
        if pattern == "elastic":
            continue
        # a masked letter hides its planes (a real lacuna keeps them unless hidden)
        hid = (inputs == A.MASK_ID) & ~lac
        assert (draws.row(i, "boundary")[hid] == A.BND_UNKNOWN).all()
        assert (draws.row(i, "dia")[hid] == A.DIA_UNKNOWN).all()


def test_elastic_rows_insert_blank_targets_after_whole_words(draws: Draws) -> None:
    for i in range(N):
        if draws.pattern(i) != "elastic":
            continue
        target = draws.row(i, "char_target")
        inputs = draws.row(i, "input_ids")
        blanks = np.flatnonzero(target == A.BLANK_ID)
        assert blanks.size == int(draws.out_len[i]) - int(draws.lens[i])
        assert (inputs[blanks] == A.MASK_ID).all()
        assert (target[blanks - 1][target[blanks - 1] != A.BLANK_ID] < A.N_ALPHA).all()


def test_same_generator_state_same_corruption(corpus: Path) -> None:
    planes = encode_planes(json.loads(corpus.read_text(encoding="utf-8").splitlines()[0])["text"])
    batch = {n: torch.from_numpy(np.asarray(getattr(planes, n))[None, :200]).long().repeat(4, 1) for n in NAMES}
    lengths = torch.full((4,), 200)
    a = corrupt_batch(batch, lengths, torch.Generator().manual_seed(3))[0]
    b = corrupt_batch(batch, lengths, torch.Generator().manual_seed(3))[0]
    c = corrupt_batch(batch, lengths, torch.Generator().manual_seed(4))[0]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["input_ids"], c["input_ids"])
