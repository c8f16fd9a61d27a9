"""Lexicon-aware macron decoding: lexicon candidates + the backbone's macron head + metre.

Per dichronon the decoder reads these kinds of evidence:

* the macron head's (temperature-scaled) long probability ``p`` in context;
* the :class:`~.macron_lexicon.MacronLexicon` patterns of the word, as one vote per
  source (Hypotactic, LSJ, Wiktionary): ``(long - short) / (long + short)`` over that
  source's patterns that mark the letter (0 when none does); for words it lacks, the
  vote of their longest known unaccented suffix, and for α whether the form with η is
  attested (Doric/Aeolic ᾱ);
* the accent rules (:func:`accent_votes`): a proparoxytone or properispomenon has a
  short ultima; an acute on a long penult means a long ultima; an acute on a dichronic
  penult before a short ultima means a short penult; a vowel of crasis (breathing
  inside a word, ``κἀγώ``, ``τἄρα``) is long;
* the deictic suffix (:func:`deictic_iota`): the -ί of οὑτοσί, τουτί, ὁδί, νυνί is long;
* dialect (:func:`dialect_features`): an α whose η-form is attested is either the Attic ᾱ
  after ε, ι, ρ that Ionic writes η (χώρα/χώρη) or, elsewhere inside the word and where
  no Attic source (LSJ, Wiktionary paradigms) lists the α-form, a Doric/Aeolic ᾱ for
  Attic-Ionic η (νικάσας/νικήσας, ἀνίκατος/ἀνίκητος);
* corpus attestation (:func:`corpus_votes`): how often the dichronon of this form scanned
  long / short in Hypotactic's verse (:meth:`MacronLexicon.corpus_counts`), as the log-odds
  ``log((long + ½) / (short + ½))`` and the count ``log(1 + long + short)``;
* in verse, the metre: the scanner's Viterbi path through the metre automata fixes the
  weight of an open syllable and so the length of its dichronon (``vote`` +1 long,
  -1 short, 0 where the metre was not used) and how firmly it holds that weight
  (:func:`~.lattice.weight_margins`, capped at :data:`MARGIN_CAP` where it forces it).

Two logistic stages, fitted on Norma's ``dev.txt`` (:func:`fit_logistic`), turn this
into a calibrated probability: :meth:`MacronDecoder.prior` (head, lexicon and rules:
:data:`PRIOR_FEATURES`; this is what the metre decoder sees) and
:meth:`MacronDecoder.posterior` (prior, metre vote and margin, the letter's position, the
dialect cues: :data:`POSTERIOR_FEATURES`); which columns a fitted stage uses is in its
``features``, chosen on dev by ``meter-eval`` (:data:`PRIOR_GROUPS`, :data:`POSTERIOR_GROUPS`). Where
the lexicon has no pattern, only the head speaks; without a lexicon the ``backbone``
calibration is used. ``abstain_below`` in the scanner leaves a vowel unmarked when
``max(p, 1 - p)`` is below it.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..alphabet import ACCENT_ACUTE, ACCENT_CIRCUMFLEX, ALPHABET
from ..codec import CharPlanes
from .macron_lexicon import SOURCES, MacronLexicon, form_key, strip_diacritics
from .syllabify import (
    ELISION_MARKS,
    IS_VOWEL,
    LONG_VOWELS,
    _features,
    _letters,
    diphthong_second,
    syllabify,
    word_ends,
)

_WORD = re.compile(r"[^\W\d_]+")
PRIOR_FEATURES = ("backbone", "hypotactic", "lsj", "wiktionary", "covered", "ambiguous_x_backbone", "accent",
                  "suffix", "eta", "hypotactic_final", "deictic", "alpha_purum_eta", "doric_alpha",
                  "corpus_log_odds", "corpus_log_count")
#: Prior feature groups the meter-eval selection tries (columns of :func:`prior_features`).
PRIOR_GROUPS = {"base": tuple(range(10)), "deictic": (10,), "dialect": (11, 12), "corpus": (13, 14)}
N_VOTES = 7
POSTERIOR_FEATURES = ("prior", "metre", "metre_margin", "metre_forced", "alpha", "iota", "last_vowel",
                      "first_vowel", "last_vowel_x_prior", "next_vowel", "verse_metre", "alpha_purum_eta",
                      "doric_alpha", "corpus_log_odds", "corpus_log_count")
#: Posterior feature groups the meter-eval selection tries (columns of :func:`posterior_features`).
POSTERIOR_GROUPS = {"base": (0, 1), "margin": (2, 3), "position": (4, 5, 6, 7, 8, 9, 10), "dialect": (11, 12),
                    "corpus": (13, 14)}
MARGIN_CAP = 20.0


_ID_EPSILON, _ID_OMICRON = ALPHABET.index("ε"), ALPHABET.index("ο")
_LONG_IDS = frozenset(LONG_VOWELS.tolist())


def _is_vowel(ch: str) -> bool:
    return unicodedata.normalize("NFD", ch)[0].lower() in "αεηιουω"


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


#: ``(word, lo, hi)`` of the words with a dichronon (:func:`dichronic_words`).
Words = Sequence[tuple[str, int, int]]


def dichronic_words(text: str, planes: CharPlanes, dich: np.ndarray) -> list[tuple[str, int, int]]:
    """:func:`_dichronic_words` as a list: the feature functions below take it as ``words``, so
    that a decoder reading several of them finds a Doc's words once."""
    return list(_dichronic_words(text, planes, dich))


def _dichronic_words(text: str, planes: CharPlanes, dich: np.ndarray) -> Iterator[tuple[str, int, int]]:
    """``(word, lo, hi)`` for each word of ``text`` with a dichronon whose letters are
    ``planes[lo:hi]`` one for one (its form key as long as its letter span)."""
    offsets = np.asarray(planes.offsets)
    for m in _WORD.finditer(text):
        lo, hi = int(np.searchsorted(offsets, m.start())), int(np.searchsorted(offsets, m.end()))
        if hi > lo and dich[lo:hi].any() and len(form_key(m.group())) == hi - lo:
            yield m.group(), lo, hi


def lexicon_votes(text: str, planes: CharPlanes, dich: np.ndarray, lexicon: MacronLexicon | None,
                  words: Words | None = None) -> np.ndarray:
    """(n, 7): per letter the Hypotactic, LSJ, Wiktionary votes, whether any source marks it,
    the suffix vote (words without an entry), the η-variant flag and the Hypotactic vote
    again in its own column when the letter is the word's last vowel (scansion-derived
    markup there mixes in weight by position, so it gets its own weight)."""
    n = len(planes)
    out = np.zeros((n, N_VOTES), dtype=np.float64)
    if lexicon is None or n == 0 or not dich.any():
        return out
    for word, lo, hi in (_dichronic_words(text, planes, dich) if words is None else words):
        cands = lexicon.candidates(word)
        for j in np.nonzero(dich[lo:hi])[0].tolist():
            out[lo + j, 5] = float(lexicon.eta_variant_attested(word, j))
            if not cands:
                out[lo + j, 4] = lexicon.suffix_vote(word, j)[0]
        if not cands or len(cands[0][0]) != hi - lo:
            continue
        for j in np.nonzero(dich[lo:hi])[0].tolist():
            tally = np.zeros((3, 2))
            for pattern, src, _ in cands:
                c = pattern[j]
                if c == ".":
                    continue
                for k, bit in enumerate(SOURCES.values()):
                    if src & bit:
                        tally[k, int(c == "1")] += 1
            tot = tally.sum(axis=1)
            out[lo + j, :3] = np.where(tot > 0, (tally[:, 1] - tally[:, 0]) / np.maximum(tot, 1), 0.0)
            out[lo + j, 3] = float(tot.sum() > 0)
            if not any(_is_vowel(c) for c in word[j + 1 :]):
                out[lo + j, 6], out[lo + j, 0] = out[lo + j, 0], 0.0
    return out


#: Demonstratives and adverbs that take the deictic -ί (Smyth 333g), as unaccented letters before it.
DEICTIC_STEMS = frozenset("""
ουτοσ αυτη τουτ τουτου ταυτησ τουτω ταυτη τουτον ταυτην ουτοι αυται ταυτ τουτων τουτοισ ταυταισ τουτουσ ταυτασ
οδ ηδ τοδ τουδ τησδ τωδ τηδ τονδ τηνδ οιδ αιδ ταδ τωνδ τοισδ ταισδ τουσδ τασδ
εκεινοσ εκεινη εκειν εκεινου εκεινησ εκεινω εκεινον εκεινην εκεινοι εκειναι εκεινων εκεινοισ εκεινουσ εκεινασ
τοσουτοσ τοσουτον τοσουτ τοσαυτ τοιουτοσ τοιουτον τοιουτ τοιαυτ τηλικουτοσ τηλικουτον
νυν δευρ ωδ ουτωσ ενθαδ ενθενδ εντευθεν
""".split())


def deictic_iota(text: str, planes: CharPlanes, dich: np.ndarray, words: Words | None = None) -> np.ndarray:
    """(n,) 1 at the deictic suffix -ί, always long and accented (οὑτοσί, τουτῳί, ὁδί, νυνί, δευρί):
    a dichronic accented ι ending a word whose letters before it are a :data:`DEICTIC_STEMS` form."""
    n = len(planes)
    out = np.zeros(n, dtype=np.float64)
    if n == 0 or not dich.any():
        return out
    for word, _lo, hi in (_dichronic_words(text, planes, dich) if words is None else words):
        key = form_key(word)
        if not dich[hi - 1]:
            continue
        last = unicodedata.normalize("NFD", key[-1])
        if last[0] == "ι" and ("\u0301" in last or "\u0300" in last) and strip_diacritics(key[:-1]) in DEICTIC_STEMS:
            out[hi - 1] = 1.0
    return out


def dialect_features(text: str, planes: CharPlanes, dich: np.ndarray, lexicon: MacronLexicon | None,
                     words: Words | None = None) -> np.ndarray:
    """(n, 2) per dichronic α whose η-form is attested (:meth:`MacronLexicon.eta_variant_attested`):

    0. after ε, ι or ρ in its word: the Attic ᾱ (alpha purum) that Ionic writes η (χώρα/χώρη);
    1. elsewhere inside the word (neither its first letter nor its last vowel), with no LSJ or
       Wiktionary pattern for the α-form: a Doric/Aeolic ᾱ where Attic-Ionic has η
       (νικάσας/νικήσας). Word edges are left out because there the η-form is mostly another
       inflection of the same word, not its dialect form: the temporal augment at the start
       (ἀκούσατε/ἠκούσατε), neuter plural -ᾰ beside feminine -η and ἄν beside ἤν at the end; so is
       a form the Attic sources list (its α is then an Attic α, not a substitute for η).
    """
    n = len(planes)
    out = np.zeros((n, 2), dtype=np.float64)
    if lexicon is None or n == 0 or not dich.any():
        return out
    attic = SOURCES["lsj"] | SOURCES["wiktionary"]
    for word, lo, hi in (_dichronic_words(text, planes, dich) if words is None else words):
        bare = strip_diacritics(form_key(word))
        listed = any(int(src) & attic for _, src, _ in lexicon.candidates(word))
        for j in np.nonzero(dich[lo:hi])[0].tolist():
            if not lexicon.eta_variant_attested(word, j):
                continue
            if j > 0 and bare[j - 1] in "ειρ":
                out[lo + j, 0] = 1.0
            elif j > 0 and not listed and any(c in "αεηιουω" for c in bare[j + 1 :]):
                out[lo + j, 1] = 1.0
    return out


def corpus_votes(text: str, planes: CharPlanes, dich: np.ndarray, lexicon: MacronLexicon | None,
                 words: Words | None = None) -> np.ndarray:
    """(n, 2) per dichronon: ``log((long + ½) / (short + ½))`` and ``log(1 + long + short)`` of the
    lexicon's corpus table (:meth:`MacronLexicon.corpus_counts`; zeros where the form or the letter
    is unseen, and without a lexicon or a table)."""
    n = len(planes)
    out = np.zeros((n, 2), dtype=np.float64)
    if lexicon is None or not lexicon.corpus or n == 0 or not dich.any():
        return out
    for word, lo, hi in (_dichronic_words(text, planes, dich) if words is None else words):
        for j in np.nonzero(dich[lo:hi])[0].tolist():
            long, short = lexicon.corpus_counts(word, j)
            if long + short:
                out[lo + j] = np.log((long + 0.5) / (short + 0.5)), np.log1p(long + short)
    return out


def accent_votes(text: str, planes: CharPlanes, dich: np.ndarray) -> np.ndarray:
    """(n,) +1 long / -1 short / 0 at dichrona whose length the accent fixes (see module doc)."""
    n = len(planes)
    out = np.zeros(n, dtype=np.float64)
    if n == 0 or not dich.any():
        return out
    syl = syllabify(planes, text=text)
    if len(syl) == 0:
        return out
    feats = _features(planes)
    letters, accent = _letters(planes), feats[:, 0]
    second = diphthong_second(planes)
    inside = np.zeros(n, dtype=bool)
    inside[1:] = np.asarray(planes.boundary)[:-1] == 0
    out[dich & inside & (feats[:, 1] > 0)] = 1.0  # crasis
    offsets = np.asarray(planes.offsets)
    ends = np.nonzero(word_ends(planes))[0]
    word_of = np.searchsorted(ends, syl.nucleus)  # non-decreasing: each word's syllables are a run
    nuc_end = syl.nucleus + second[np.minimum(syl.nucleus + 1, n - 1)] * (syl.nucleus + 1 < n)
    accents = np.maximum(accent[syl.nucleus], accent[nuc_end]).tolist()
    nuc_l, nuc_end_l, words_l = syl.nucleus.tolist(), nuc_end.tolist(), word_of.tolist()
    second_l, letters_l, dich_l = second.tolist(), letters.tolist(), dich.tolist()
    ends_l, offsets_l = ends.tolist(), offsets.tolist()
    cuts = [0, *(np.flatnonzero(np.diff(word_of)) + 1).tolist(), len(words_l)]
    for lo, hi in itertools.pairwise(cuts):  # one word's syllables lo..hi-1, in Python scalars
        w = words_l[lo]
        end = ends_l[w] if w < len(ends_l) else n - 1
        after = offsets_l[end] + 1
        if after < len(text) and text[after] in ELISION_MARKS:
            continue  # elided: the written ultima is not the word's
        acc = accents[lo:hi]
        first = next((i for i, a in enumerate(acc) if a > 0), None)
        if first is None:
            continue
        k = hi - lo - 1 - first  # 0 ultima, 1 penult, 2 antepenult
        ult, pen = nuc_l[hi - 1], nuc_l[hi - 2] if hi - lo > 1 else -1
        pen_long = pen >= 0 and (second_l[min(pen + 1, n - 1)] or letters_l[pen] in _LONG_IDS)
        ult_short = not second_l[min(ult + 1, n - 1)] and letters_l[ult] in (_ID_EPSILON, _ID_OMICRON)
        if dich_l[ult] and ult == nuc_end_l[hi - 1]:
            if k == 2 and acc[first] == ACCENT_ACUTE or k == 1 and acc[first] == ACCENT_CIRCUMFLEX:
                out[ult] = -1.0
            elif k == 1 and acc[first] == ACCENT_ACUTE and pen_long:
                out[ult] = 1.0
        if k == 1 and pen >= 0 and dich_l[pen] and acc[first] == ACCENT_ACUTE and ult_short:
            out[pen] = -1.0
    return out


def prior_features(p_backbone: np.ndarray, votes: np.ndarray, accent: np.ndarray | None = None,
                   deictic: np.ndarray | None = None, dialect: np.ndarray | None = None,
                   corpus: np.ndarray | None = None) -> np.ndarray:
    """(n, len(PRIOR_FEATURES)) design matrix of the prior stage (missing parts are zeros)."""
    z = _logit(p_backbone)
    n = len(z)
    ambiguous = (votes[:, 3] > 0) & (np.abs(votes[:, :3]).max(axis=1) < 1)
    acc = np.zeros(n) if accent is None else np.asarray(accent, dtype=np.float64)
    dei = np.zeros(n) if deictic is None else np.asarray(deictic, dtype=np.float64)
    dia = np.zeros((n, 2)) if dialect is None else np.asarray(dialect, dtype=np.float64)
    cor = np.zeros((n, 2)) if corpus is None else np.asarray(corpus, dtype=np.float64)
    return np.column_stack([z, votes[:, 0], votes[:, 1], votes[:, 2], votes[:, 3], ambiguous * z, acc,
                            votes[:, 4], votes[:, 5], votes[:, 6], dei, dia[:, 0], dia[:, 1], cor[:, 0], cor[:, 1]])


def position_features(planes: CharPlanes) -> np.ndarray:
    """(n, 5) per letter: is α, is ι, last vowel of its word, first vowel of its word, next letter
    of the word a vowel."""
    n = len(planes)
    out = np.zeros((n, 5), dtype=np.float64)
    if n == 0:
        return out
    letters = _letters(planes)
    vowel = IS_VOWEL[letters + 1]
    ends = word_ends(planes)
    word = np.concatenate([[0], np.cumsum(ends)[:-1]])  # word index of each letter
    out[:, 0] = letters == ALPHABET.index("α")
    out[:, 1] = letters == ALPHABET.index("ι")
    vw = np.nonzero(vowel)[0]
    if vw.size:
        w = word[vw]
        out[vw[np.r_[w[1:] != w[:-1], True]], 2] = 1.0
        out[vw[np.r_[True, w[1:] != w[:-1]]], 3] = 1.0
    out[:-1, 4] = vowel[1:] & ~ends[:-1].astype(bool)
    return out


def posterior_features(p_prior: np.ndarray, metre: np.ndarray, margin: np.ndarray | None = None,
                       position: np.ndarray | None = None, verse_metre: np.ndarray | None = None,
                       dialect: np.ndarray | None = None, corpus: np.ndarray | None = None) -> np.ndarray:
    """(n, len(POSTERIOR_FEATURES)) design matrix of the posterior stage.

    ``margin``: the metre's max-marginal margin in nats (:func:`~.lattice.weight_margins`);
    ``position``: :func:`position_features`; ``verse_metre``: 1 where the letter's verse was
    decoded through a metre; ``dialect``: :func:`dialect_features`; ``corpus``: :func:`corpus_votes`.
    Missing parts are zeros
    (a stage fitted without them ignores them).
    """
    z = _logit(p_prior)
    n = len(z)
    m = np.asarray(metre, dtype=np.float64)
    mg = np.zeros(n) if margin is None else np.minimum(np.asarray(margin, dtype=np.float64), MARGIN_CAP)
    pos = np.zeros((n, 5)) if position is None else np.asarray(position, dtype=np.float64)
    vm = np.zeros(n) if verse_metre is None else np.asarray(verse_metre, dtype=np.float64)
    dia = np.zeros((n, 2)) if dialect is None else np.asarray(dialect, dtype=np.float64)
    cor = np.zeros((n, 2)) if corpus is None else np.asarray(corpus, dtype=np.float64)
    return np.column_stack([z, m, m * mg / MARGIN_CAP, m * (mg >= MARGIN_CAP), pos[:, 0], pos[:, 1], pos[:, 2],
                            pos[:, 3], pos[:, 2] * z, pos[:, 4], vm, dia[:, 0], dia[:, 1], cor[:, 0], cor[:, 1]])


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 50) -> dict[str, list[float] | float]:
    """Weights and bias of an L2-regularised logistic regression (Newton steps)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    xb = np.column_stack([x, np.ones(len(x))])
    w = np.zeros(xb.shape[1])
    reg = l2 * np.eye(xb.shape[1])
    reg[-1, -1] = 0.0
    for _ in range(iters):
        p = _sigmoid(xb @ w)
        grad = xb.T @ (p - y) + reg @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + reg + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"weights": w[:-1].tolist(), "bias": float(w[-1])}


def _apply(params: dict, x: np.ndarray) -> np.ndarray:
    """Logistic stage; ``params["features"]`` (column indices) selects the design columns."""
    w = np.asarray(params["weights"], dtype=np.float64)
    cols = params.get("features", list(range(len(w))))
    return _sigmoid(x[:, cols] @ w + float(params["bias"]))


def _uses(params: dict, stage: str, group: str) -> bool:
    """The fitted stage reads a column of feature group ``group``."""
    groups = PRIOR_GROUPS if stage == "prior" else POSTERIOR_GROUPS
    cols = params.get("features", range(len(params["weights"])))
    return bool(set(cols) & set(groups[group]))


@dataclass
class MacronDecoder:
    """Calibrated macron probabilities from head, lexicon and metre (see module doc).

    ``calibration``: ``{"lexicon": {"prior": …, "posterior": …}, "backbone": {…}}`` as
    written by ``projects/meter/scripts/macron_eval.py``; the ``backbone`` pair is used
    when no lexicon is loaded. A stage without parameters passes its input through.
    """

    lexicon: MacronLexicon | None
    calibration: dict

    @property
    def _stages(self) -> dict:
        return self.calibration.get("lexicon" if self.lexicon is not None else "backbone", {})

    def prior(self, text: str, planes: CharPlanes, p_backbone: np.ndarray, dich: np.ndarray) -> np.ndarray:
        """Head + lexicon probability of long per letter (the input where no stage is fitted)."""
        params = self._stages.get("prior")
        if params is None:
            return p_backbone
        words = dichronic_words(text, planes, dich)
        votes = lexicon_votes(text, planes, dich, self.lexicon, words)
        corpus = corpus_votes(text, planes, dich, self.lexicon, words) if _uses(params, "prior", "corpus") else None
        x = prior_features(p_backbone, votes, accent_votes(text, planes, dich), deictic_iota(text, planes, dich, words),
                           dialect_features(text, planes, dich, self.lexicon, words), corpus)
        return np.where(dich, _apply(params, x), p_backbone)

    def posterior(self, p_prior: np.ndarray, metre: np.ndarray, dich: np.ndarray, *,
                  margin: np.ndarray | None = None, planes: CharPlanes | None = None,
                  verse_metre: np.ndarray | None = None, text: str | None = None) -> np.ndarray:
        """Prior + metre vote (+1 long, -1 short, 0 none) and, where the fitted stage uses them,
        the metre's margin, the letter's position and (``text`` and ``planes`` given, a lexicon
        loaded) the dialect cues and the corpus counts -> calibrated probability of long.

        A stage without ``features`` uses the first columns (older cfgs: prior and metre).
        """
        params = self._stages.get("posterior")
        if params is None:
            return np.where(metre > 0, np.maximum(p_prior, 0.5 + 1e-6),
                            np.where(metre < 0, np.minimum(p_prior, 0.5 - 1e-6), p_prior))
        position = None if planes is None else position_features(planes)
        dialect = corpus = None
        if planes is not None and text is not None and self.lexicon is not None:
            uses = _uses(params, "posterior", "dialect") or _uses(params, "posterior", "corpus")
            words = dichronic_words(text, planes, dich) if uses else None
            if _uses(params, "posterior", "dialect"):
                dialect = dialect_features(text, planes, dich, self.lexicon, words)
            if _uses(params, "posterior", "corpus"):
                corpus = corpus_votes(text, planes, dich, self.lexicon, words)
        x = posterior_features(p_prior, metre, margin, position, verse_metre, dialect, corpus)
        return np.where(dich, _apply(params, x), p_prior)
