"""The published masked-diffusion corruption sampler (one sequence at a time, numpy only).

Reproduces the objective of ``RELEASE_FORMAT.md`` ("Pretraining objective") and the
paper's *Objective* paragraph. For every sequence the sampler draws

1. a rate ``t ~ Beta(2, 4)`` clipped to ``[0.05, 0.95]``; supervised letters weigh ``1/t``;
2. one corruption pattern (span 0.15, whole word 0.20, elastic 0.15, iid 0.15,
   partial word 0.20, silent substitution 0.15);
3. per channel (boundary, diacritics, punctuation) an availability mode: full, none, or
   patchy (each position hidden with probability ``r ~ Uniform(0, 1)``).

How each pattern hits the rate. Let ``n`` be the number of *eligible* letters (not a real
lacuna) and ``k = max(1, round(t * n))``.

- ``iid``: exactly ``k`` eligible positions, uniformly without replacement.
- ``span``: span lengths are drawn from a geometric law of mean ``span_mean`` truncated
  to ``1..span_max`` until they sum to ``k`` (the last one is cut to fit); the spans are
  laid out uniformly at random over the eligible letters (ignoring word edges and skipping
  real lacunae), without overlap, so exactly ``k`` letters are masked. At high rates two
  spans may touch and read as one longer run.
- ``whole_word``: words in random order; the prefix of that order whose letter count is
  closest to ``k`` is masked (at least one word), so the realised fraction is ``t`` up to
  half a word.
- ``elastic``: like ``whole_word`` (words without lacunae); each chosen word of ``L``
  letters becomes ``M = L + 2 + U{0..floor(0.3 L)}`` MASK slots whose targets are the ``L``
  letters then BLANK. The ``L`` letters count toward ``k``; the output grows by ``M - L``
  per word and every other plane and target shifts with it.
- ``partial_word``: words of at least two letters (no lacunae) in random order; each gets
  an anchor (end 0.5 / beginning 0.3 / middle 0.2; two-letter words cannot be
  middle-anchored and draw end/beginning renormalised) and a masked length
  ``m ~ U{1..L-1}`` (``U{1..L-2}`` for middle, which keeps one letter on each side). Words
  are taken until the masked count reaches ``k`` and the last one is cut to fit, so
  exactly ``k`` letters are masked; when even all words are not enough, the missing letters
  are spread over the words' spare capacity, which caps the rate at "every word keeps at
  least one letter" (two for middle anchors).
- ``substitution``: exactly ``k`` eligible letters are replaced by a different letter
  drawn uniformly from the other 23, with no mask signal; their other planes are left as
  they are. The letter head is supervised at the substituted positions *and* at
  ``round(substitution_keep_ratio * k)`` untouched eligible positions (target = the letter
  shown), so the model cannot learn that a supervised letter is always wrong.

Decisions not fixed by the publication (kept simple):

- A masked letter (MASK input) hides its own boundary, diacritic and punctuation inputs
  (UNKNOWN), so none of its planes leaks its identity; word division inside masked text
  must therefore be predicted, as in the restoration protocol. Capitals are never an input.
- A channel head is supervised where the letter is masked or that channel is hidden;
  capitalization only where the letter is masked. Positions whose source value is UNKNOWN
  are never supervised for that channel. Substituted letters count as neither.
- Real lacunae (``Example.lacuna``, or any letter id that is not a real letter) are fed as
  MASK, never chosen by a pattern and never supervised by any head.
- Words end where the boundary plane says word- or sentence-final (UNKNOWN counts as
  word-internal) and at the last letter. Words longer than ``max_word_letters`` are not
  candidates for the word patterns; a word pattern with no candidate falls back to
  ``iid`` (``CorruptedExample.pattern`` reports the pattern actually applied).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.errors import ConfigError, InvalidExampleError

__all__ = [
    "AVAILABILITY_MODES",
    "CHANNELS",
    "IGNORE_INDEX",
    "PARTIAL_ANCHORS",
    "PATTERNS",
    "CorruptedExample",
    "CorruptionSampler",
    "Example",
    "NoiseConfig",
    "bench",
    "sample_span_lengths",
]

#: Target value of an unsupervised position (PyTorch's cross-entropy ``ignore_index``).
IGNORE_INDEX = -100
#: Pattern names, in the order of their weights in ``NoiseConfig.pattern_weights``.
PATTERNS: tuple[str, ...] = (
    "span",
    "whole_word",
    "elastic",
    "iid",
    "partial_word",
    "substitution",
)
#: Partial-word anchors, in the order of ``NoiseConfig.anchor_weights``.
PARTIAL_ANCHORS: tuple[str, ...] = ("end", "beginning", "middle")
#: Channels whose input availability is sampled, and the availability modes.
CHANNELS: tuple[str, ...] = ("boundary", "diacritics", "punctuation")
AVAILABILITY_MODES: tuple[str, ...] = ("full", "none", "patchy")

_UNKNOWN = {
    "boundary": A.BND_UNKNOWN,
    "diacritics": A.DIA_UNKNOWN,
    "punctuation": A.PUNCT_UNKNOWN,
    "capitals": A.CAP_UNKNOWN,
}
# Largest valid source id per plane (letters may hold MASK_ID for a real lacuna).
_MAX_ID = {
    "letters": A.MASK_ID,
    "boundary": A.BND_UNKNOWN,
    "diacritics": A.DIA_UNKNOWN,
    "punctuation": A.PUNCT_UNKNOWN,
    "capitals": A.CAP_UNKNOWN,
}


@dataclass
class NoiseConfig:
    """Every number of the published objective, with the published defaults."""

    rate_alpha: float = 2.0
    rate_beta: float = 4.0
    rate_min: float = 0.05
    rate_max: float = 0.95
    # pattern mixture
    p_span: float = 0.15
    p_whole_word: float = 0.20
    p_elastic: float = 0.15
    p_iid: float = 0.15
    p_partial_word: float = 0.20
    p_substitution: float = 0.15
    # span lengths: geometric with this mean, truncated to 1..span_max
    span_mean: float = 3.5
    span_max: int = 20
    # partial-word anchoring
    anchor_end: float = 0.5
    anchor_beginning: float = 0.3
    anchor_middle: float = 0.2
    # elastic: M = L + elastic_min_extra + U{0..floor(elastic_extra_frac * L)}
    elastic_min_extra: int = 2
    elastic_extra_frac: float = 0.3
    # channel availability (the rest of the mass is "patchy")
    boundary_full: float = 0.5
    boundary_none: float = 0.3
    dia_full: float = 0.3
    dia_none: float = 0.5
    punct_full: float = 0.3
    punct_none: float = 0.5
    # untouched letters supervised per substituted letter (identity targets)
    substitution_keep_ratio: float = 1.0
    # words longer than this are not candidates for the word patterns
    max_word_letters: int = 32
    # weight of the auxiliary plane losses (applied by the loss, not by the sampler)
    aux_loss_weight: float = 0.1

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ConfigError(f"NoiseConfig.{f.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"NoiseConfig.{f.name} must be finite and >= 0, got {value!r}")
        if self.rate_alpha <= 0 or self.rate_beta <= 0:
            raise ConfigError("NoiseConfig.rate_alpha and rate_beta must be > 0")
        if not 0.0 < self.rate_min <= self.rate_max <= 1.0:
            raise ConfigError(
                f"NoiseConfig needs 0 < rate_min <= rate_max <= 1, got {self.rate_min}, {self.rate_max}"
            )
        self._check_simplex("pattern weights", self.pattern_weights)
        self._check_simplex("anchor weights", self.anchor_weights)
        if self.anchor_end + self.anchor_beginning <= 0:
            raise ConfigError("NoiseConfig: anchor_end + anchor_beginning must be > 0")
        for name in ("boundary", "dia", "punct"):
            full, none = getattr(self, f"{name}_full"), getattr(self, f"{name}_none")
            if full + none > 1.0 + 1e-9:
                raise ConfigError(f"NoiseConfig: {name}_full + {name}_none must be <= 1")
        if self.span_mean < 1.0:
            raise ConfigError("NoiseConfig.span_mean must be >= 1 (a span has at least one letter)")
        for name in ("span_max", "elastic_min_extra", "max_word_letters"):
            if int(getattr(self, name)) != getattr(self, name):
                raise ConfigError(f"NoiseConfig.{name} must be an integer")
        if self.span_max < 1 or self.max_word_letters < 1:
            raise ConfigError("NoiseConfig.span_max and max_word_letters must be >= 1")

    @staticmethod
    def _check_simplex(what: str, weights: tuple[float, ...]) -> None:
        if abs(sum(weights) - 1.0) > 1e-6:
            raise ConfigError(f"NoiseConfig {what} must sum to 1, got {sum(weights):.6f}")

    @property
    def pattern_weights(self) -> tuple[float, ...]:
        """Weights of ``PATTERNS``, in that order."""
        return (
            self.p_span,
            self.p_whole_word,
            self.p_elastic,
            self.p_iid,
            self.p_partial_word,
            self.p_substitution,
        )

    @property
    def anchor_weights(self) -> tuple[float, float, float]:
        """Weights of ``PARTIAL_ANCHORS`` (end, beginning, middle)."""
        return (self.anchor_end, self.anchor_beginning, self.anchor_middle)

    def availability(self, channel: str) -> tuple[float, float]:
        """``(p_full, p_none)`` of a channel in ``CHANNELS``."""
        prefix = {"boundary": "boundary", "diacritics": "dia", "punctuation": "punct"}[channel]
        return getattr(self, f"{prefix}_full"), getattr(self, f"{prefix}_none")


def _plane(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise InvalidExampleError(f"Example.{name} must be 1-D, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise InvalidExampleError(f"Example.{name} must hold integer ids, got dtype {arr.dtype}")
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) > _MAX_ID[name]):
        raise InvalidExampleError(
            f"Example.{name} holds ids outside 0..{_MAX_ID[name]} "
            f"(min {int(arr.min())}, max {int(arr.max())})"
        )
    return arr.astype(np.uint8, copy=False)


@dataclass
class Example:
    """The uncorrupted planes of one record window (ids from ``stoicheia_spacy.alphabet``).

    ``lacuna`` flags real lacunae (never masked by a pattern, never supervised); letters
    equal to ``MASK_ID`` are lacunae whether flagged or not. Arrays are validated and
    stored as uint8; bad shapes, lengths or ids raise ``InvalidExampleError``.
    """

    letters: np.ndarray
    boundary: np.ndarray
    diacritics: np.ndarray
    capitals: np.ndarray
    punctuation: np.ndarray
    lacuna: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.letters = _plane("letters", self.letters)
        self.boundary = _plane("boundary", self.boundary)
        self.diacritics = _plane("diacritics", self.diacritics)
        self.capitals = _plane("capitals", self.capitals)
        self.punctuation = _plane("punctuation", self.punctuation)
        n = self.letters.shape[0]
        for name in ("boundary", "diacritics", "capitals", "punctuation"):
            if getattr(self, name).shape[0] != n:
                raise InvalidExampleError(
                    f"Example.{name} has length {getattr(self, name).shape[0]}, letters has {n}"
                )
        if self.lacuna is not None:
            lac = np.asarray(self.lacuna)
            if lac.shape != (n,) or (lac.size and lac.dtype.kind not in "biu"):
                raise InvalidExampleError(
                    f"Example.lacuna must be a boolean array of length {n}, got "
                    f"shape {lac.shape} dtype {lac.dtype}"
                )
            self.lacuna = lac.astype(bool, copy=False)

    def __len__(self) -> int:
        return int(self.letters.shape[0])

    @classmethod
    def from_planes(cls, planes: Any) -> Example:
        """Build from a ``stoicheia_spacy.codec.CharPlanes`` (lacuna = letters == MASK_ID)."""
        letters = np.asarray(planes.letters)
        return cls(
            letters=letters,
            boundary=planes.boundary,
            diacritics=planes.diacritics,
            capitals=planes.capitals,
            punctuation=planes.punctuation,
            lacuna=letters == A.MASK_ID,
        )


@dataclass
class CorruptedExample:
    """Model inputs and targets of one corrupted sequence (length ``M``, may exceed the input's).

    Targets are ``IGNORE_INDEX`` (-100) where not supervised; ``char_weight`` is ``1/rate``
    where ``char_target`` is supervised, else 0. ``availability`` maps each channel to the
    mode drawn for it (``full``/``none``/``patchy``).
    """

    input_ids: np.ndarray
    boundary: np.ndarray
    dia: np.ndarray
    punct: np.ndarray
    char_target: np.ndarray
    char_weight: np.ndarray
    bnd_target: np.ndarray
    dia_target: np.ndarray
    punct_target: np.ndarray
    cap_target: np.ndarray
    pattern: str
    rate: float
    availability: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


def _truncated_geometric_mean(mean: float, max_len: int) -> float:
    """Mean of a geometric law on 1, 2, ... of mean ``mean`` conditioned on <= ``max_len``."""
    lengths = np.arange(1, max_len + 1)
    p = 1.0 / mean
    pmf = p * (1.0 - p) ** (lengths - 1)
    return float((lengths * pmf).sum() / pmf.sum())


def sample_span_lengths(
    size: int, mean: float, max_len: int, rng: np.random.Generator
) -> np.ndarray:
    """``size`` draws of a geometric law on 1, 2, ... with mean ``mean``, truncated to ``max_len``.

    Truncation conditions on ``<= max_len`` (inverse CDF on the truncated range), so no
    mass piles up at ``max_len``.
    """
    if mean <= 1.0:
        return np.ones(size, dtype=np.int64)
    q = 1.0 - 1.0 / mean  # continuation probability
    top = 1.0 - q**max_len  # CDF at max_len
    u = rng.random(size) * top
    lengths = np.ceil(np.log1p(-u) / math.log(q)).astype(np.int64)
    return np.clip(lengths, 1, max_len)


def _expand_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each start/length, vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


def _closest_prefix(sizes: np.ndarray, k: int) -> int:
    """Number of leading items (>= 1) whose cumulated size is closest to ``k``."""
    cum = np.cumsum(sizes)
    return int(np.argmin(np.abs(cum - k))) + 1


class CorruptionSampler:
    """Draws one published corruption per call: ``sampler(example, rng) -> CorruptedExample``."""

    def __init__(self, config: NoiseConfig | None = None) -> None:
        self.config = config if config is not None else NoiseConfig()
        cfg = self.config
        self._pattern_cdf = np.cumsum(cfg.pattern_weights)
        self._span_mean = _truncated_geometric_mean(cfg.span_mean, int(cfg.span_max))
        pe, pb, _pm = cfg.anchor_weights
        self._anchor_cdf3 = np.cumsum(cfg.anchor_weights)
        self._anchor_cut2 = pe / (pe + pb)  # two-letter words: end vs beginning only

    # ------------------------------------------------------------------ draws
    def sample_rate(self, rng: np.random.Generator) -> float:
        """``t ~ Beta(alpha, beta)`` clipped to ``[rate_min, rate_max]``."""
        cfg = self.config
        t = float(rng.beta(cfg.rate_alpha, cfg.rate_beta))
        return min(max(t, cfg.rate_min), cfg.rate_max)

    def sample_pattern(self, rng: np.random.Generator) -> str:
        """One pattern name drawn from the configured mixture."""
        idx = int(np.searchsorted(self._pattern_cdf, rng.random() * self._pattern_cdf[-1], "right"))
        return PATTERNS[min(idx, len(PATTERNS) - 1)]

    def sample_hidden(
        self, channel: str, n: int, rng: np.random.Generator
    ) -> tuple[str, np.ndarray]:
        """Availability mode of ``channel`` and the boolean mask of its hidden positions."""
        p_full, p_none = self.config.availability(channel)
        u = rng.random()
        if u < p_full:
            return "full", np.zeros(n, dtype=bool)
        if u < p_full + p_none:
            return "none", np.ones(n, dtype=bool)
        return "patchy", rng.random(n) < rng.random()

    # --------------------------------------------------------------- patterns
    def _iid(self, eligible: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        return eligible[rng.choice(eligible.shape[0], size=k, replace=False)]

    def _span(self, eligible: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        cfg = self.config
        chunks: list[np.ndarray] = []
        total = 0
        while total < k:
            draw = sample_span_lengths(
                int(1.3 * (k - total) / self._span_mean) + 8, cfg.span_mean, int(cfg.span_max), rng
            )
            chunks.append(draw)
            total += int(draw.sum())
        lengths = np.concatenate(chunks)
        cum = np.cumsum(lengths)
        s = int(np.searchsorted(cum, k)) + 1  # spans needed to reach k
        lengths = lengths[:s].copy()
        lengths[-1] -= int(cum[s - 1]) - k
        # s span blocks among the n - k kept letters: choose the block slots uniformly.
        n = eligible.shape[0]
        slots = np.sort(rng.choice(n - k + s, size=s, replace=False))
        starts = slots - np.arange(s) + (np.cumsum(lengths) - lengths)
        return eligible[_expand_ranges(starts, lengths)]

    def _partial(
        self,
        w_start: np.ndarray,
        w_len: np.ndarray,
        candidates: np.ndarray,
        k: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        order = rng.permutation(candidates)
        length = w_len[order]
        u = rng.random(order.shape[0])
        anchor3 = np.searchsorted(self._anchor_cdf3, u * self._anchor_cdf3[-1], "right")
        anchor2 = np.asarray(u >= self._anchor_cut2, dtype=np.int64)
        anchor = np.minimum(np.where(length >= 3, anchor3, anchor2), 2)
        cap = length - 1 - (anchor == 2)
        m = 1 + (rng.random(order.shape[0]) * cap).astype(np.int64)
        cum = np.cumsum(m)
        if cum[-1] >= k:
            j = int(np.searchsorted(cum, k)) + 1
            order, length, anchor, cap, m = order[:j], length[:j], anchor[:j], cap[:j], m[:j].copy()
            m[-1] -= int(cum[j - 1]) - k
        else:  # not enough: spread the deficit over the words' spare capacity
            spare = cap - m
            deficit = min(k - int(cum[-1]), int(spare.sum()))
            if deficit > 0:
                picks = rng.choice(int(spare.sum()), size=deficit, replace=False)
                owner = np.searchsorted(np.cumsum(spare), picks, "right")
                m = m + np.bincount(owner, minlength=m.shape[0])
        # offset of the masked run inside the word
        middle_room = np.maximum(length - 1 - m, 1)  # middle starts in 1..L-1-m
        offset = np.where(
            anchor == 0,
            length - m,
            np.where(anchor == 1, 0, 1 + (rng.random(m.shape[0]) * middle_room).astype(np.int64)),
        )
        return _expand_ranges(w_start[order] + offset, m)

    # ------------------------------------------------------------------- call
    def __call__(self, example: Example, rng: np.random.Generator) -> CorruptedExample:
        """Corrupt one sequence; deterministic given the state of ``rng``."""
        if not isinstance(example, Example):
            raise InvalidExampleError(
                f"CorruptionSampler expects a pretrain.corruption.Example, got {type(example).__name__}"
            )
        cfg = self.config
        letters = example.letters.astype(np.int64)
        n = letters.shape[0]
        lacuna = letters >= A.N_ALPHA
        if example.lacuna is not None:
            lacuna |= example.lacuna
        eligible = np.flatnonzero(~lacuna)
        n_el = eligible.shape[0]

        t = self.sample_rate(rng)
        pattern = self.sample_pattern(rng)
        k = max(1, int(round(t * n_el))) if n_el else 0

        masked = np.zeros(n, dtype=bool)
        supervised_letter = np.zeros(n, dtype=bool)
        inputs = np.where(lacuna, A.MASK_ID, letters)
        elastic_words: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

        if k and pattern in ("whole_word", "elastic", "partial_word"):
            ends = (example.boundary == A.BND_WORD_END) | (example.boundary == A.BND_SENT_END)
            ends[-1] = True
            end_idx = np.flatnonzero(ends)
            w_start = np.concatenate(([0], end_idx[:-1] + 1)).astype(np.int64)
            w_len = end_idx - w_start + 1
            w_lac = np.add.reduceat(lacuna.astype(np.int64), w_start)
            short = w_len <= cfg.max_word_letters
            if pattern == "whole_word":
                cands = np.flatnonzero(short & (w_lac < w_len))
                if cands.size:
                    order = rng.permutation(cands)
                    j = _closest_prefix((w_len - w_lac)[order], k)
                    chosen = np.zeros(w_len.shape[0], dtype=bool)
                    chosen[order[:j]] = True
                    masked = np.repeat(chosen, w_len) & ~lacuna
            elif pattern == "elastic":
                cands = np.flatnonzero(short & (w_lac == 0))
                if cands.size:
                    order = rng.permutation(cands)
                    j = _closest_prefix(w_len[order], k)
                    chosen = np.sort(order[:j])
                    lens = w_len[chosen]
                    extra = cfg.elastic_min_extra + (
                        rng.random(j) * (np.floor(cfg.elastic_extra_frac * lens) + 1)
                    ).astype(np.int64)
                    masked[_expand_ranges(w_start[chosen], lens)] = True
                    elastic_words = (w_start[chosen], lens, extra)
            else:
                min_len = 2 if cfg.anchor_end + cfg.anchor_beginning > 0 else 3
                cands = np.flatnonzero(short & (w_lac == 0) & (w_len >= min_len))
                if cands.size:
                    masked[self._partial(w_start, w_len, cands, k, rng)] = True
            if not cands.size:
                pattern = "iid"
        if k and pattern == "span":
            masked[self._span(eligible, k, rng)] = True
        elif k and pattern == "iid":
            masked[self._iid(eligible, k, rng)] = True
        elif k and pattern == "substitution":
            pos = self._iid(eligible, k, rng)
            inputs[pos] = (letters[pos] + rng.integers(1, A.N_ALPHA, size=k)) % A.N_ALPHA
            supervised_letter[pos] = True
            n_keep = min(int(round(cfg.substitution_keep_ratio * k)), n_el - k)
            if n_keep > 0:
                untouched = np.flatnonzero(~lacuna & ~supervised_letter)
                supervised_letter[
                    untouched[rng.choice(untouched.shape[0], n_keep, replace=False)]
                ] = True

        inputs[masked] = A.MASK_ID
        supervised_letter |= masked
        valid = ~lacuna
        weight = np.float32(1.0 / t)

        availability: dict[str, str] = {}
        planes_in: dict[str, np.ndarray] = {}
        targets: dict[str, np.ndarray] = {}
        for channel, source in (
            ("boundary", example.boundary),
            ("diacritics", example.diacritics),
            ("punctuation", example.punctuation),
        ):
            mode, hidden = self.sample_hidden(channel, n, rng)
            availability[channel] = mode
            unknown = _UNKNOWN[channel]
            src = source.astype(np.int64)
            planes_in[channel] = np.where(hidden | masked, unknown, src)
            targets[channel] = np.where(
                (hidden | masked) & valid & (src != unknown), src, IGNORE_INDEX
            )
        caps = example.capitals.astype(np.int64)
        cap_target = np.where(masked & valid & (caps != A.CAP_UNKNOWN), caps, IGNORE_INDEX)
        char_target = np.where(supervised_letter, letters, IGNORE_INDEX)

        out = {
            "input_ids": inputs,
            "boundary": planes_in["boundary"],
            "dia": planes_in["diacritics"],
            "punct": planes_in["punctuation"],
            "char_target": char_target,
            "bnd_target": targets["boundary"],
            "dia_target": targets["diacritics"],
            "punct_target": targets["punctuation"],
            "cap_target": cap_target,
        }
        if elastic_words is not None:
            out = self._expand_elastic(out, n, *elastic_words)
        char_weight = np.where(out["char_target"] != IGNORE_INDEX, weight, np.float32(0.0))
        return CorruptedExample(
            char_weight=char_weight.astype(np.float32, copy=False),
            pattern=pattern,
            rate=t,
            availability=availability,
            **out,
        )

    @staticmethod
    def _expand_elastic(
        out: dict[str, np.ndarray],
        n: int,
        starts: np.ndarray,
        lens: np.ndarray,
        extra: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """Insert ``extra`` MASK slots after each elastic word; their targets are BLANK."""
        repeats = np.ones(n, dtype=np.int64)
        last = starts + lens - 1
        repeats[last] += extra
        expanded = {name: np.repeat(arr, repeats) for name, arr in out.items()}
        # new index of each word's last letter, then the BLANK slots that follow it
        new_last = np.cumsum(repeats)[last] - repeats[last]
        blanks = _expand_ranges(new_last + 1, extra)
        expanded["char_target"][blanks] = A.BLANK_ID
        for name in ("bnd_target", "dia_target", "punct_target", "cap_target"):
            expanded[name][blanks] = IGNORE_INDEX
        # inputs of the BLANK slots are copies of a masked letter's: MASK and UNKNOWN already
        return expanded


# ----------------------------------------------------------------------- bench
_BENCH_WORDS = (
    "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε "
    "πολλὰς δ᾽ ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν ἡρώων αὐτοὺς δὲ ἑλώρια τεῦχε κύνεσσιν"
).split()


def _bench_example(length: int, rng: np.random.Generator) -> Example:
    """A synthetic window of real word lengths (ids only matter for speed here)."""
    word_lens = np.array([sum(ch.isalpha() for ch in w) for w in _BENCH_WORDS])
    lens = rng.choice(word_lens, size=length)  # more words than needed
    ends = np.cumsum(lens) - 1
    ends = ends[ends < length]
    boundary = np.zeros(length, dtype=np.uint8)
    boundary[ends] = A.BND_WORD_END
    boundary[-1] = A.BND_SENT_END
    return Example(
        letters=rng.integers(0, A.N_ALPHA, length, dtype=np.uint8),
        boundary=boundary,
        diacritics=rng.integers(0, A.N_DIA_STATES, length, dtype=np.uint8),
        capitals=(rng.random(length) < 0.02).astype(np.uint8),
        punctuation=np.where(rng.random(length) < 0.05, A.PUNCT_COMMA, A.PUNCT_NONE).astype(
            np.uint8
        ),
    )


def _baseline_iid(example: Example, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """BERT-style 15 % iid masking of the same planes: the speed floor for the ratio."""
    letters = example.letters.astype(np.int64)
    masked = rng.random(letters.shape[0]) < 0.15
    return (
        np.where(masked, A.MASK_ID, letters),
        np.where(masked, letters, IGNORE_INDEX),
        np.where(masked, A.BND_UNKNOWN, example.boundary.astype(np.int64)),
        np.where(masked, A.DIA_UNKNOWN, example.diacritics.astype(np.int64)),
        np.where(masked, A.PUNCT_UNKNOWN, example.punctuation.astype(np.int64)),
    )


def bench(
    n_sequences: int = 2000, length: int = 4096, seed: int = 0, *, file: Any = None
) -> dict[str, float]:
    """Time the sampler on ``length``-letter windows; prints sequences/s and the ratio to
    a plain 15 % iid masking baseline timed in the same run. Returns the numbers."""
    rng = np.random.default_rng(seed)
    examples = [_bench_example(length, rng) for _ in range(16)]
    sampler = CorruptionSampler()
    results: dict[str, float] = {}
    for name, fn in (("baseline_iid15", _baseline_iid), ("published", sampler)):
        start = time.perf_counter()
        for i in range(n_sequences):
            fn(examples[i % len(examples)], rng)
        results[name] = n_sequences / (time.perf_counter() - start)
    per_pattern: dict[str, list[float]] = {p: [] for p in PATTERNS}
    for i in range(max(n_sequences // 2, 1)):
        start = time.perf_counter()
        pattern = sampler(examples[i % len(examples)], rng).pattern
        per_pattern[pattern].append(time.perf_counter() - start)
    print(f"corruption sampler, {length}-letter sequences, {n_sequences} each", file=file)
    print(
        f"  baseline iid 15%: {results['baseline_iid15']:9.0f} seq/s\n"
        f"  published:        {results['published']:9.0f} seq/s  "
        f"(ratio to baseline {results['published'] / results['baseline_iid15']:.2f}, "
        f"{60 * results['published']:.0f} seq/min)",
        file=file,
    )
    for pattern, times in per_pattern.items():
        if times:
            rate = len(times) / sum(times)
            results[f"pattern_{pattern}"] = rate
            print(f"    {pattern:<13} {rate:9.0f} seq/s", file=file)
    return results


def main(argv: list[str] | None = None) -> int:
    """``python -m pretrain.corruption --bench [--n N] [--length L]``."""
    parser = argparse.ArgumentParser(prog="python -m pretrain.corruption")
    parser.add_argument("--bench", action="store_true", help="time the sampler")
    parser.add_argument("--n", type=int, default=2000, help="sequences per timing")
    parser.add_argument("--length", type=int, default=4096, help="letters per sequence")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.bench:
        parser.print_help()
        return 0
    bench(args.n, args.length, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
