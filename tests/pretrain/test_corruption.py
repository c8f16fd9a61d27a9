"""Tests of the published corruption sampler (``pretrain.corruption``).

Structural tests check every output of a few thousand corruptions of real Greek exactly;
statistical tests check the published frequencies over >= 10k sequences to 3 standard
errors. Sequences are 200-400-letter windows of Plato and Xenophon, encoded with
``stoicheia_spacy.codec``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy import stats

from pretrain.corruption import (
    AVAILABILITY_MODES,
    CHANNELS,
    IGNORE_INDEX,
    PATTERNS,
    CorruptedExample,
    CorruptionSampler,
    Example,
    NoiseConfig,
    main,
    sample_span_lengths,
)
from stoicheia_spacy import alphabet as A
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import ConfigError, InvalidExampleError

PLATO_APOLOGY = (
    "ὅτι μὲν ὑμεῖς, ὦ ἄνδρες Ἀθηναῖοι, πεπόνθατε ὑπὸ τῶν ἐμῶν κατηγόρων, οὐκ οἶδα· ἐγὼ δʼ "
    "οὖν καὶ αὐτὸς ὑπʼ αὐτῶν ὀλίγου ἐμαυτοῦ ἐπελαθόμην, οὕτω πιθανῶς ἔλεγον. καίτοι ἀληθές "
    "γε ὡς ἔπος εἰπεῖν οὐδὲν εἰρήκασιν. μάλιστα δὲ αὐτῶν ἓν ἐθαύμασα τῶν πολλῶν ὧν "
    "ἐψεύσαντο, τοῦτο ἐν ᾧ ἔλεγον ὡς χρῆν ὑμᾶς εὐλαβεῖσθαι μὴ ὑπʼ ἐμοῦ ἐξαπατηθῆτε ὡς "
    "δεινοῦ ὄντος λέγειν. τὸ γὰρ μὴ αἰσχυνθῆναι ὅτι αὐτίκα ὑπʼ ἐμοῦ ἐξελεγχθήσονται ἔργῳ, "
    "ἐπειδὰν μηδʼ ὁπωστιοῦν φαίνωμαι δεινὸς λέγειν, τοῦτό μοι ἔδοξεν αὐτῶν "
    "ἀναισχυντότατον εἶναι, εἰ μὴ ἄρα δεινὸν καλοῦσιν οὗτοι λέγειν τὸν τἀληθῆ λέγοντα· εἰ "
    "μὲν γὰρ τοῦτο λέγουσιν, ὁμολογοίην ἂν ἔγωγε οὐ κατὰ τούτους εἶναι ῥήτωρ. οὗτοι μὲν "
    "οὖν, ὥσπερ ἐγὼ λέγω, ἤ τι ἢ οὐδὲν ἀληθὲς εἰρήκασιν, ὑμεῖς δέ μου ἀκούσεσθε πᾶσαν τὴν "
    "ἀλήθειαν—οὐ μέντοι μὰ Δία, ὦ ἄνδρες Ἀθηναῖοι, κεκαλλιεπημένους γε λόγους, ὥσπερ οἱ "
    "τούτων, ῥήμασί τε καὶ ὀνόμασιν οὐδὲ κεκοσμημένους, ἀλλʼ ἀκούσεσθε εἰκῇ λεγόμενα τοῖς "
    "ἐπιτυχοῦσιν ὀνόμασιν—πιστεύω γὰρ δίκαια εἶναι ἃ λέγω—καὶ μηδεὶς ὑμῶν προσδοκησάτω "
    "ἄλλως· οὐδὲ γὰρ ἂν δήπου πρέποι, ὦ ἄνδρες, τῇδε τῇ ἡλικίᾳ ὥσπερ μειρακίῳ πλάττοντι "
    "λόγους εἰς ὑμᾶς εἰσιέναι."
)
XENOPHON_ANABASIS = (
    "Δαρείου καὶ Παρυσάτιδος γίγνονται παῖδες δύο, πρεσβύτερος μὲν Ἀρταξέρξης, νεώτερος δὲ "
    "Κῦρος· ἐπεὶ δὲ ἠσθένει Δαρεῖος καὶ ὑπώπτευε τελευτὴν τοῦ βίου, ἐβούλετο τὼ παῖδε "
    "ἀμφοτέρω παρεῖναι. ὁ μὲν οὖν πρεσβύτερος παρὼν ἐτύγχανε· Κῦρον δὲ μεταπέμπεται ἀπὸ τῆς "
    "ἀρχῆς ἧς αὐτὸν σατράπην ἐποίησε, καὶ στρατηγὸν δὲ αὐτὸν ἀπέδειξε πάντων ὅσοι ἐς "
    "Καστωλοῦ πεδίον ἁθροίζονται. ἀναβαίνει οὖν ὁ Κῦρος λαβὼν Τισσαφέρνην ὡς φίλον, καὶ "
    "τῶν Ἑλλήνων ἔχων ὁπλίτας ἀνέβη τριακοσίους, ἄρχοντα δὲ αὐτῶν Ξενίαν Παρράσιον. ἐπεὶ δὲ "
    "ἐτελεύτησε Δαρεῖος καὶ κατέστη εἰς τὴν βασιλείαν Ἀρταξέρξης, Τισσαφέρνης διαβάλλει τὸν "
    "Κῦρον πρὸς τὸν ἀδελφὸν ὡς ἐπιβουλεύοι αὐτῷ. ὁ δὲ πείθεται καὶ συλλαμβάνει Κῦρον ὡς "
    "ἀποκτενῶν· ἡ δὲ μήτηρ ἐξαιτησαμένη αὐτὸν ἀποπέμπει πάλιν ἐπὶ τὴν ἀρχήν. ὁ δʼ ὡς ἀπῆλθε "
    "κινδυνεύσας καὶ ἀτιμασθείς, βουλεύεται ὅπως μήποτε ἔτι ἔσται ἐπὶ τῷ ἀδελφῷ, ἀλλά, ἢν "
    "δύνηται, βασιλεύσει ἀντʼ ἐκείνου. Παρύσατις μὲν δὴ ἡ μήτηρ ὑπῆρχε τῷ Κύρῳ, φιλοῦσα "
    "αὐτὸν μᾶλλον ἢ τὸν βασιλεύοντα Ἀρταξέρξην."
)

N_STAT = 12_000  # sequences for the statistical tests
N_STRUCT = 3_000  # sequences checked position by position


# --------------------------------------------------------------------- encoding
def encode(text: str) -> Example:
    """Real Greek through the project codec."""
    return Example.from_planes(encode_planes(text))


@pytest.fixture(scope="module")
def greek() -> Example:
    parts = [encode(PLATO_APOLOGY), encode(XENOPHON_ANABASIS)]
    return Example(
        **{
            name: np.concatenate([getattr(p, name) for p in parts])
            for name in ("letters", "boundary", "diacritics", "capitals", "punctuation")
        }
    )


def _window(greek: Example, rng: np.random.Generator, lacunae: bool) -> Example:
    """A 200-400-letter window starting and ending on word boundaries, optionally with
    a few real lacunae (MASK letters, unknown planes)."""
    ends = np.flatnonzero(greek.boundary != A.BND_INTERNAL)
    start_word = int(rng.integers(0, np.searchsorted(ends, len(greek) - 420)))
    start = int(ends[start_word]) + 1
    stop = int(ends[np.searchsorted(ends, start + int(rng.integers(200, 400)))]) + 1
    planes = {
        name: getattr(greek, name)[start:stop].copy()
        for name in ("letters", "boundary", "diacritics", "capitals", "punctuation")
    }
    lacuna = None
    if lacunae:
        lacuna = np.zeros(stop - start, dtype=bool)
        for _ in range(int(rng.integers(1, 4))):
            a = int(rng.integers(0, stop - start - 8))
            lacuna[a : a + int(rng.integers(1, 8))] = True
        planes["letters"][lacuna] = A.MASK_ID
        planes["diacritics"][lacuna] = A.DIA_UNKNOWN
        planes["boundary"][lacuna] = A.BND_UNKNOWN
    return Example(**planes, lacuna=lacuna)


def _words(ex: Example) -> tuple[np.ndarray, np.ndarray]:
    ends = np.flatnonzero(np.isin(ex.boundary, (A.BND_WORD_END, A.BND_SENT_END)))
    ends = np.union1d(ends, [len(ex) - 1])
    starts = np.concatenate(([0], ends[:-1] + 1))
    return starts, ends - starts + 1


# ------------------------------------------------------------ structural checks
@dataclass
class Measured:
    """What ``check_corruption`` measured on one corruption."""

    masked: int  # masked or substituted letters
    k: int  # letters the rate asks for
    n_el: int  # eligible letters (not real lacunae)
    extras: int = 0  # elastic BLANK slots
    anchors: list[str] = field(default_factory=list)  # partial-word anchors (words of >= 3)


def check_corruption(ex: Example, out: CorruptedExample, cfg: NoiseConfig) -> Measured:
    """Assert every published invariant of one corruption; return a few measurements."""
    n = len(ex)
    letters = ex.letters.astype(np.int64)
    lacuna = letters == A.MASK_ID
    if ex.lacuna is not None:
        lacuna |= ex.lacuna
    n_el = int((~lacuna).sum())
    k = max(1, round(out.rate * n_el))
    arrays = [out.input_ids, out.boundary, out.dia, out.punct, out.char_target, out.char_weight]
    arrays += [out.bnd_target, out.dia_target, out.punct_target, out.cap_target]
    assert all(a.shape == (len(out),) for a in arrays)
    assert all(a.dtype == np.int64 for a in arrays if a is not out.char_weight)
    assert out.char_weight.dtype == np.float32
    assert cfg.rate_min <= out.rate <= cfg.rate_max
    assert out.pattern in PATTERNS

    # elastic slots: BLANK targets; removing them must realign with the source
    blank = out.char_target == A.BLANK_ID
    assert blank.any() == (out.pattern == "elastic")
    assert len(out) - int(blank.sum()) == n
    keep = ~blank
    inp, tgt = out.input_ids[keep], out.char_target[keep]
    w = out.char_weight[keep]
    masked = (inp == A.MASK_ID) & ~lacuna
    subst = (inp != letters) & ~lacuna & ~masked

    # real lacunae: fed as MASK, never supervised by any head
    assert (inp[lacuna] == A.MASK_ID).all()
    for t in (tgt, out.bnd_target[keep], out.dia_target[keep], out.punct_target[keep]):
        assert (t[lacuna] == IGNORE_INDEX).all()
    assert (out.cap_target[keep][lacuna] == IGNORE_INDEX).all()
    assert (w[lacuna] == 0).all()

    # letters: masked and substituted positions supervised with the true letter
    supervised = tgt != IGNORE_INDEX
    assert (tgt[supervised] == letters[supervised]).all()
    assert supervised[masked].all() and supervised[subst].all()
    np.testing.assert_allclose(
        out.char_weight[out.char_target != IGNORE_INDEX], 1.0 / out.rate, rtol=1e-6
    )
    assert (out.char_weight[out.char_target == IGNORE_INDEX] == 0).all()
    if out.pattern == "substitution":
        assert not masked.any() and int(subst.sum()) == k
        assert ((inp[subst] >= 0) & (inp[subst] < A.N_ALPHA)).all()
        n_keep = min(round(cfg.substitution_keep_ratio * k), n_el - k)
        assert int(supervised.sum()) == k + n_keep
    else:
        assert not subst.any()
        assert (supervised == masked).all()

    # channels: masked letters hide all their planes; elsewhere source or UNKNOWN
    for channel, src_arr, in_arr, tgt_arr, unknown in (
        ("boundary", ex.boundary, out.boundary, out.bnd_target, A.BND_UNKNOWN),
        ("diacritics", ex.diacritics, out.dia, out.dia_target, A.DIA_UNKNOWN),
        ("punctuation", ex.punctuation, out.punct, out.punct_target, A.PUNCT_UNKNOWN),
    ):
        src = src_arr.astype(np.int64)
        got = in_arr[keep]
        assert (got[masked] == unknown).all()
        assert ((got == src) | (got == unknown)).all()
        hidden = got == unknown
        mode = out.availability[channel]
        free = ~masked & (src != unknown)
        if mode == "full":
            assert (got[free] == src[free]).all()
        elif mode == "none":
            assert hidden.all()
        want = np.where((masked | hidden) & ~lacuna & (src != unknown), src, IGNORE_INDEX)
        np.testing.assert_array_equal(tgt_arr[keep], want)
        assert (tgt_arr[blank] == IGNORE_INDEX).all()
        assert (in_arr[blank] == unknown).all()
    caps = ex.capitals.astype(np.int64)
    want_cap = np.where(masked & ~lacuna & (caps != A.CAP_UNKNOWN), caps, IGNORE_INDEX)
    np.testing.assert_array_equal(out.cap_target[keep], want_cap)
    assert (out.input_ids[blank] == A.MASK_ID).all()

    # pattern shapes
    starts, lens = _words(ex)
    m_word = np.add.reduceat(masked.astype(np.int64), starts)
    lac_word = np.add.reduceat(lacuna.astype(np.int64), starts)
    info = Measured(masked=int(masked.sum()) + int(subst.sum()), k=k, n_el=n_el)
    if out.pattern in ("iid", "span"):
        assert int(masked.sum()) == k
    elif out.pattern in ("whole_word", "elastic"):
        full = m_word == lens - lac_word
        assert ((m_word == 0) | full).all()  # words are masked whole or not at all
        if out.pattern == "elastic":
            assert (lac_word[m_word > 0] == 0).all()
            # each elastic word: L masked letters then 2..2+floor(0.3L) BLANK slots
            pos = 0
            out_pos = np.cumsum(keep) - 1  # output index -> source index
            for s, length in zip(starts[m_word > 0], lens[m_word > 0], strict=True):
                first = int(np.flatnonzero(keep & (out_pos == s))[0])
                pos = first + int(length)
                extra = 0
                while pos + extra < len(out) and blank[pos + extra]:
                    extra += 1
                assert 2 <= extra <= 2 + math.floor(0.3 * length)
                np.testing.assert_array_equal(
                    out.char_target[first : first + length], letters[s : s + length]
                )
            info.extras = int(blank.sum())
    elif out.pattern == "partial_word":
        touched = m_word > 0
        assert (lac_word[touched] == 0).all() and (m_word[touched] < lens[touched]).all()
        assert int(masked.sum()) <= k
        anchors = []
        for s, length in zip(starts[touched], lens[touched], strict=True):
            run = np.flatnonzero(masked[s : s + length])
            assert run[-1] - run[0] + 1 == run.size  # one contiguous run per word
            if length >= 3:
                at_end, at_start = run[-1] == length - 1, run[0] == 0
                assert not (at_end and at_start)
                anchors.append("end" if at_end else "beginning" if at_start else "middle")
        info.anchors = anchors
    return info


@dataclass
class Sampled:
    examples: list[Example]
    outputs: list[CorruptedExample]


@pytest.fixture(scope="module")
def structural(greek: Example) -> Sampled:
    rng = np.random.default_rng(1234)
    sampler = CorruptionSampler()
    examples = [_window(greek, rng, lacunae=i % 3 == 0) for i in range(N_STRUCT)]
    return Sampled(examples, [sampler(ex, rng) for ex in examples])


@pytest.fixture(scope="module")
def statistical(greek: Example) -> list[CorruptedExample]:
    rng = np.random.default_rng(2024)
    sampler = CorruptionSampler()
    windows = [_window(greek, rng, lacunae=i % 4 == 0) for i in range(200)]
    return [sampler(windows[i % len(windows)], rng) for i in range(N_STAT)]


def _within_3se(observed: int, total: int, p: float) -> None:
    se = math.sqrt(p * (1 - p) / total)
    assert abs(observed / total - p) <= 3 * se, (observed / total, p, se)


# ------------------------------------------------------------------------ tests
def test_every_corruption_keeps_the_published_invariants(structural: Sampled) -> None:
    cfg = NoiseConfig()
    seen: Counter[str] = Counter()
    for ex, out in zip(structural.examples, structural.outputs, strict=True):
        check_corruption(ex, out, cfg)
        seen[out.pattern] += 1
    assert set(seen) == set(PATTERNS)


def test_realised_corruption_fraction_tracks_the_rate(structural: Sampled) -> None:
    """iid/span/substitution/partial hit k exactly (partial up to its capacity); whole
    words and elastic come within half a word of k."""
    cfg = NoiseConfig()
    gaps: dict[str, list[float]] = {p: [] for p in PATTERNS}
    for ex, out in zip(structural.examples, structural.outputs, strict=True):
        info = check_corruption(ex, out, cfg)
        masked, k, n_el = info.masked, info.k, info.n_el
        if out.pattern in ("iid", "span", "substitution"):
            assert masked == k
        elif out.pattern == "partial_word" and out.rate < 0.5:
            assert masked == k
        elif out.pattern in ("whole_word", "elastic"):
            assert abs(masked - k) <= 10  # half of the longest word in the texts
        gaps[out.pattern].append(masked / n_el - out.rate)
    for pattern in ("whole_word", "elastic"):
        assert abs(float(np.mean(gaps[pattern]))) < 0.01
        assert float(np.mean(np.abs(gaps[pattern]))) < 0.02
    for pattern in ("iid", "span", "substitution"):
        assert float(np.max(np.abs(gaps[pattern]))) < 0.005  # rounding of k only


def test_pattern_mixture_matches_the_published_weights(statistical: list[CorruptedExample]) -> None:
    counts = Counter(out.pattern for out in statistical)
    for pattern, p in zip(PATTERNS, NoiseConfig().pattern_weights, strict=True):
        _within_3se(counts[pattern], len(statistical), p)


def test_rate_is_clipped_beta_2_4(statistical: list[CorruptedExample]) -> None:
    cfg = NoiseConfig()
    rates = np.array([out.rate for out in statistical])
    assert rates.min() >= cfg.rate_min and rates.max() <= cfg.rate_max
    beta = stats.beta(cfg.rate_alpha, cfg.rate_beta)
    lo, hi = cfg.rate_min, cfg.rate_max
    inner = beta.expect(lambda x: x, lb=lo, ub=hi)  # E[T; lo < T < hi]
    analytic = lo * beta.cdf(lo) + inner + hi * beta.sf(hi)
    se = rates.std() / math.sqrt(rates.size)
    assert abs(rates.mean() - analytic) <= 3 * se, (rates.mean(), analytic)
    # the clip itself: mass exactly at rate_min equals P(T < 0.05)
    _within_3se(int((rates == lo).sum()), rates.size, float(beta.cdf(lo)))
    # and the shape: a Kolmogorov-Smirnov test inside the clip range
    inside = rates[(rates > lo) & (rates < hi)]
    cdf = (beta.cdf(np.sort(inside)) - beta.cdf(lo)) / (beta.cdf(hi) - beta.cdf(lo))
    empirical = np.arange(1, inside.size + 1) / inside.size
    assert float(np.max(np.abs(cdf - empirical))) < 1.63 / math.sqrt(inside.size)  # KS, 1 %


def test_channel_availability_matches_the_published_modes(
    statistical: list[CorruptedExample],
) -> None:
    cfg = NoiseConfig()
    for channel in CHANNELS:
        counts = Counter(out.availability[channel] for out in statistical)
        p_full, p_none = cfg.availability(channel)
        expected = {"full": p_full, "none": p_none, "patchy": 1 - p_full - p_none}
        assert set(counts) <= set(AVAILABILITY_MODES)
        for mode, p in expected.items():
            _within_3se(counts[mode], len(statistical), p)


def test_patchy_channels_hide_a_uniform_share(statistical: list[CorruptedExample]) -> None:
    """Patchy: hidden share of the unmasked letters ~ Uniform(0, 1) (mean 1/2, var 1/12)."""
    shares = []
    for out in statistical:
        if out.availability["diacritics"] == "patchy":
            shown = out.input_ids != A.MASK_ID
            shares.append(float((out.dia[shown] == A.DIA_UNKNOWN).mean()))
    shares_arr = np.array(shares)
    assert shares_arr.size > 200
    assert abs(shares_arr.mean() - 0.5) <= 3 * math.sqrt(1 / 12 / shares_arr.size)
    assert abs(shares_arr.var() - 1 / 12) < 0.015


def test_partial_word_anchors_match_the_published_frequencies(structural: Sampled) -> None:
    cfg = NoiseConfig()
    anchors: Counter[str] = Counter()
    for ex, out in zip(structural.examples, structural.outputs, strict=True):
        if out.pattern == "partial_word":
            anchors.update(check_corruption(ex, out, cfg).anchors)
    total = sum(anchors.values())
    assert total > 2000
    for anchor, p in zip(("end", "beginning", "middle"), cfg.anchor_weights, strict=True):
        _within_3se(anchors[anchor], total, p)


def test_span_lengths_are_truncated_geometric_of_mean_3_5() -> None:
    rng = np.random.default_rng(5)
    lengths = sample_span_lengths(200_000, 3.5, 20, rng)
    assert lengths.min() == 1 and lengths.max() == 20
    support = np.arange(1, 21)
    pmf = (1 / 3.5) * (1 - 1 / 3.5) ** (support - 1)
    pmf /= pmf.sum()
    se = lengths.std() / math.sqrt(lengths.size)
    assert abs(lengths.mean() - (support * pmf).sum()) <= 3 * se
    assert abs((support * pmf).sum() - 3.5) < 0.05  # the truncation barely moves the mean
    observed = np.bincount(lengths, minlength=21)[1:]
    for length in range(1, 9):
        _within_3se(int(observed[length - 1]), lengths.size, float(pmf[length - 1]))


def test_span_pattern_runs_are_geometric_at_low_rate(structural: Sampled) -> None:
    """Observed MASK runs of the span pattern (which ignore word edges): at low rates few
    spans touch, so the mean run length is close to the truncated-geometric mean."""
    runs: list[int] = []
    crosses_word = 0
    for ex, out in zip(structural.examples, structural.outputs, strict=True):
        if out.pattern != "span" or out.rate > 0.15 or ex.lacuna is not None:
            continue
        masked = np.concatenate(([0], (out.input_ids == A.MASK_ID).astype(np.int8), [0]))
        edges = np.flatnonzero(np.diff(masked))
        starts, stops = edges[::2], edges[1::2]
        runs.extend((stops - starts).tolist())
        bnd = ex.boundary != A.BND_INTERNAL
        crosses_word += sum(bool(bnd[a : b - 1].any()) for a, b in zip(starts, stops, strict=True))
    assert len(runs) > 300
    assert 3.2 < float(np.mean(runs)) < 4.2
    assert crosses_word > 0.2 * len(runs)  # spans ignore word edges


def test_elastic_growth_is_in_the_published_range(structural: Sampled) -> None:
    extras, letters = 0, 0
    for ex, out in zip(structural.examples, structural.outputs, strict=True):
        if out.pattern == "elastic":
            info = check_corruption(ex, out, NoiseConfig())
            extras += info.extras
            letters += info.masked
    # mean extra slots per word are 2 + floor(0.3 L)/2 >= 2; per letter between 0.2 and 1
    assert 0.2 < extras / letters < 1.0


def test_elastic_example_is_exact() -> None:
    """One hand-checked elastic corruption: only elastic words grow, nothing else moves."""
    ex = encode("ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν.")
    cfg = NoiseConfig(
        p_span=0,
        p_whole_word=0,
        p_elastic=1,
        p_iid=0,
        p_partial_word=0,
        p_substitution=0,
        boundary_full=1,
        boundary_none=0,
        dia_full=1,
        dia_none=0,
        punct_full=1,
        punct_none=0,
    )
    sampler = CorruptionSampler(cfg)
    source = np.stack([ex.letters, ex.boundary, ex.diacritics, ex.punctuation]).astype(np.int64)
    for seed in range(200):
        out = sampler(ex, np.random.default_rng(seed))
        assert out.pattern == "elastic"
        check_corruption(ex, out, cfg)
        # outside the elastic words every input is the source, shifted by the insertions
        keep = out.char_target != A.BLANK_ID
        got = np.stack([out.input_ids, out.boundary, out.dia, out.punct])[:, keep]
        untouched = got[0] != A.MASK_ID
        np.testing.assert_array_equal(got[:, untouched], source[:, untouched])
        assert (got[1:, ~untouched] == [[A.BND_UNKNOWN], [A.DIA_UNKNOWN], [A.PUNCT_UNKNOWN]]).all()
        # targets in reading order: each word's letters then its BLANKs
        tg = out.char_target[out.char_target != IGNORE_INDEX]
        np.testing.assert_array_equal(tg[tg != A.BLANK_ID], ex.letters[~untouched])
        assert tg[-1] == A.BLANK_ID


def test_real_lacunae_are_never_masked_or_supervised(greek: Example) -> None:
    rng = np.random.default_rng(7)
    sampler = CorruptionSampler()
    ex = _window(greek, rng, lacunae=False)
    lac = np.zeros(len(ex), dtype=bool)
    lac[::3] = True  # a third of the letters lost
    letters = ex.letters.copy()
    letters[lac] = A.MASK_ID
    damaged = Example(letters, ex.boundary, ex.diacritics, ex.capitals, ex.punctuation, lac)
    for _ in range(500):
        out = sampler(damaged, rng)
        info = check_corruption(damaged, out, sampler.config)
        assert info.n_el == int((~lac).sum())


def test_flagged_lacuna_with_a_letter_is_fed_as_mask() -> None:
    ex = encode("καὶ ὁ λόγος ἦν πρὸς τὸν θεόν")
    lac = np.zeros(len(ex), dtype=bool)
    lac[3:6] = True  # ὁ λό: an editor's restoration, letters kept in the source
    flagged = Example(ex.letters, ex.boundary, ex.diacritics, ex.capitals, ex.punctuation, lac)
    out = CorruptionSampler()(flagged, np.random.default_rng(0))
    keep = out.char_target != A.BLANK_ID
    assert (out.input_ids[keep][lac] == A.MASK_ID).all()
    assert (out.char_target[keep][lac] == IGNORE_INDEX).all()


def test_same_seed_same_corruption_and_seeds_differ(greek: Example) -> None:
    sampler = CorruptionSampler()
    ex = _window(greek, np.random.default_rng(3), lacunae=True)
    names = ["input_ids", "boundary", "dia", "punct", "char_target", "char_weight"]
    names += ["bnd_target", "dia_target", "punct_target", "cap_target"]
    for seed in range(20):
        a = sampler(ex, np.random.default_rng(seed))
        b = sampler(ex, np.random.default_rng(seed))
        assert (a.pattern, a.rate, a.availability) == (b.pattern, b.rate, b.availability)
        for name in names:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    outs = [sampler(ex, np.random.default_rng(s)) for s in range(20)]
    assert len({o.input_ids.tobytes() for o in outs}) == 20


def test_sampler_does_not_mutate_its_input(greek: Example) -> None:
    ex = _window(greek, np.random.default_rng(4), lacunae=True)
    before = [
        getattr(ex, n).copy()
        for n in ("letters", "boundary", "diacritics", "capitals", "punctuation")
    ]
    sampler = CorruptionSampler()
    for seed in range(50):
        sampler(ex, np.random.default_rng(seed))
    after = [ex.letters, ex.boundary, ex.diacritics, ex.capitals, ex.punctuation]
    for x, y in zip(before, after, strict=True):
        np.testing.assert_array_equal(x, y)


def test_degenerate_inputs_are_handled() -> None:
    sampler = CorruptionSampler()
    rng = np.random.default_rng(0)
    empty = Example(*(np.zeros(0, dtype=np.uint8) for _ in range(5)))
    out = sampler(empty, rng)
    assert len(out) == 0 and out.char_weight.shape == (0,)
    # all lacuna: nothing supervised
    lost = Example(
        np.full(6, A.MASK_ID),
        np.zeros(6, int),
        np.zeros(6, int),
        np.zeros(6, int),
        np.zeros(6, int),
    )
    for _ in range(30):
        out = sampler(lost, rng)
        assert (out.char_target == IGNORE_INDEX).all() and (out.char_weight == 0).all()
    # a single one-letter word: partial words impossible, falls back to iid
    one = encode("ὦ")
    cfg = NoiseConfig(
        p_span=0, p_whole_word=0, p_elastic=0, p_iid=0, p_partial_word=1, p_substitution=0
    )
    out = CorruptionSampler(cfg)(one, rng)
    assert out.pattern == "iid" and out.input_ids.tolist() == [A.MASK_ID]


@pytest.mark.parametrize(
    "planes",
    [
        dict(boundary=np.zeros(3, np.uint8)),  # wrong length
        dict(letters=np.zeros((2, 2), np.uint8)),  # 2-D
        dict(letters=np.array([0, 1, 30, 2])),  # id out of range
        dict(diacritics=np.array([0, 49, 0, 0])),  # past DIA_UNKNOWN
        dict(punctuation=np.array([-1, 0, 0, 0])),  # negative
        dict(letters=np.array([0.0, 1.0, 2.0, 3.0])),  # floats
        dict(lacuna=np.zeros(3, bool)),  # lacuna of the wrong length
    ],
)
def test_malformed_examples_raise(planes: dict[str, np.ndarray]) -> None:
    base = {
        name: np.zeros(4, np.uint8)
        for name in ("letters", "boundary", "diacritics", "capitals", "punctuation")
    }
    base.update(planes)
    with pytest.raises(InvalidExampleError):
        Example(**base)


def test_sampler_rejects_non_examples() -> None:
    with pytest.raises(InvalidExampleError):
        CorruptionSampler()("λόγος", np.random.default_rng(0))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "overrides",
    [
        dict(p_span=0.5),  # weights no longer sum to 1
        dict(anchor_middle=0.5),
        dict(rate_min=0.9, rate_max=0.5),
        dict(rate_min=0.0),
        dict(rate_alpha=0.0),
        dict(boundary_full=0.8),  # full + none > 1
        dict(span_mean=0.5),
        dict(span_max=2.5),
        dict(elastic_extra_frac=-0.1),
        dict(dia_none=float("nan")),
    ],
)
def test_bad_noise_config_raises(overrides: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        NoiseConfig(**overrides)  # type: ignore[arg-type]


def test_defaults_are_the_published_numbers() -> None:
    cfg = NoiseConfig()
    assert (cfg.rate_alpha, cfg.rate_beta, cfg.rate_min, cfg.rate_max) == (2.0, 4.0, 0.05, 0.95)
    assert cfg.pattern_weights == (0.15, 0.20, 0.15, 0.15, 0.20, 0.15)
    assert cfg.anchor_weights == (0.5, 0.3, 0.2)
    assert (cfg.span_mean, cfg.span_max, cfg.elastic_min_extra, cfg.elastic_extra_frac) == (
        3.5,
        20,
        2,
        0.3,
    )
    assert [cfg.availability(c) for c in CHANNELS] == [(0.5, 0.3), (0.3, 0.5), (0.3, 0.5)]
    assert cfg.aux_loss_weight == 0.1


def test_from_planes_marks_mask_letters_as_lacunae() -> None:
    @dataclass
    class Planes:
        letters: np.ndarray
        boundary: np.ndarray
        diacritics: np.ndarray
        capitals: np.ndarray
        punctuation: np.ndarray

    ex = encode("λόγος")
    letters = ex.letters.copy()
    letters[2] = A.MASK_ID
    made = Example.from_planes(
        Planes(letters, ex.boundary, ex.diacritics, ex.capitals, ex.punctuation)
    )
    assert made.lacuna is not None and made.lacuna.tolist() == [False, False, True, False, False]


def test_bench_runs_and_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--bench", "--n", "20", "--length", "300"]) == 0
    printed = capsys.readouterr().out
    assert "seq/s" in printed and "ratio to baseline" in printed
