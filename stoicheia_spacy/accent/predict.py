"""Batched plane prediction with per-plane control: accents, breathings, word division,
punctuation and capitals for (partly) unmarked Greek.

Every plane except the letters is governed by a :data:`PlaneMode`:

* ``"keep"`` (fill): marks present in the input are kept and shown to the model; positions
  without a mark are hidden (UNKNOWN) and predicted.  "Present" means: a word/sentence end
  (boundary), a non-zero diacritic state, a punctuation mark, an upper-case letter.  For
  diacritics of word-divided input "present" is per word: a word with any diacritic is
  kept whole, the unmarked words are predicted (undivided input: per letter).
  For the boundary plane this means spaced text can still gain word breaks.
* ``"copy"``: the input plane is taken as is (also its zeros) and shown to the model;
  nothing is predicted (e.g. accentuate already divided text without re-segmenting it).
* ``"predict"``: the plane is hidden everywhere and predicted everywhere.
* ``"drop"`` (alias ``"unknown"``): hidden and left unmarked in the output (no spaces,
  bare letters, no punctuation, lower case).

Capitals: the released backbones have a capitalization OUTPUT head only; input capitals
are not a model input (unless a fine-tune with ``use_cap_input`` is loaded, which then
receives the kept capitals).  ``keep``/``copy`` act on the output only.  ``lowercase``
discards the input's capitals before the modes apply.

Decoding is an argmax per head restricted to valid states, vectorised over the batch:
diacritic states impossible on a letter are masked (consonants bare, ρ only rough;
iota subscript only on α η ω; diaeresis only on ι υ and never with a breathing;
circumflex never on ε ο); boundary and punctuation are decoded jointly (punctuation
only at word ends; ``.``/``;`` exactly at sentence ends; the last letter ends a word).
With ``orthography=True`` (default) decoded word division also constrains breathings
(exactly one on a word-initial vowel or ρ, on the second vowel of an initial diphthong,
none elsewhere) and capitals (word-initial letters only).  Kept/copied values are
never changed.  All documents and all windows of long documents go through one packed
forward (:func:`stoicheia_spacy.backbone.windows.pack_planes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
import torch

from ..alphabet import (
    ALPHABET,
    BND_INTERNAL,
    BND_SENT_END,
    BND_UNKNOWN,
    BND_WORD_END,
    BREATHING_NONE,
    BREATHING_ROUGH,
    CAP_LOWER,
    CAP_UNKNOWN,
    CAP_UPPER,
    DIA_UNKNOWN,
    MASK_ID,
    N_BOUNDARY_OUT,
    N_CHAR_IDS,
    N_DIA_STATES,
    N_PUNCT_OUT,
    PAD_ID,
    PUNCT_NONE,
    PUNCT_UNKNOWN,
)
from ..backbone.windows import pack_planes
from ..codec import CharPlanes, word_spans
from ..errors import ConfigError
from .lattice import LatticeParams, decode_lattice
from .lexasset import load_lexicon
from .validity import VOWELS, dia_accent, dia_breathing, dia_valid_table, pair_valid

if TYPE_CHECKING:  # pragma: no cover
    from ..backbone import StoicheiaEncoder
    from .formlex import FormLexicon

PlaneMode = Literal["keep", "copy", "predict", "drop", "auto"]
MODES: tuple[str, ...] = ("keep", "copy", "predict", "drop", "unknown", "auto")
#: ``lexicon`` argument meaning "the installed accent lexicon, if any" (:mod:`.lexasset`)
INSTALLED = "installed"
CONTROLLED: tuple[str, ...] = ("boundary", "diacritics", "punctuation", "capitals")


_IS_VOWEL = np.zeros(N_CHAR_IDS, dtype=bool)
_IS_VOWEL[[ALPHABET.index(c) for c in VOWELS]] = True
_RHO = ALPHABET.index("ρ")
_BEFORE_IOTA = np.zeros(N_CHAR_IDS, dtype=bool)
_BEFORE_IOTA[[ALPHABET.index(c) for c in "αεου"]] = True
_BEFORE_UPSILON = np.zeros(N_CHAR_IDS, dtype=bool)
_BEFORE_UPSILON[[ALPHABET.index(c) for c in "αεηοω"]] = True
_IOTA, _UPSILON = ALPHABET.index("ι"), ALPHABET.index("υ")


def _norm_mode(plane: str, mode: str) -> str:
    if mode not in MODES or (mode == "auto" and plane != "boundary"):
        allowed = list(MODES) if plane == "boundary" else [m for m in MODES if m != "auto"]
        raise ConfigError(f"plane {plane!r}: mode {mode!r} is not one of {allowed}")
    return "drop" if mode == "unknown" else mode


def marks_word_division(planes: CharPlanes) -> bool:
    """True when the text divides words somewhere (a word or sentence end before its
    last letter); False for scriptio continua."""
    b = planes.boundary[:-1]
    return bool(((b == BND_WORD_END) | (b == BND_SENT_END)).any())


@dataclass(frozen=True)
class PlaneControl:
    """What to do with each plane (see the module docstring)."""

    boundary: str = "keep"
    diacritics: str = "keep"
    punctuation: str = "keep"
    capitals: str = "predict"
    lowercase: bool = False
    orthography: bool = True

    def __post_init__(self) -> None:
        for plane in CONTROLLED:
            object.__setattr__(self, plane, _norm_mode(plane, getattr(self, plane)))

    def mode(self, plane: str) -> str:
        """The (normalised) mode of ``plane``."""
        return cast(str, getattr(self, plane))

    def resolve(self, planes: CharPlanes) -> PlaneControl:
        """``boundary = "auto"`` made concrete for one text: ``"copy"`` when the text divides
        words, ``"predict"`` for scriptio continua (the other modes are returned as is)."""
        if self.boundary != "auto":
            return self
        return replace(self, boundary="copy" if marks_word_division(planes) else "predict")

    @classmethod
    def from_dict(cls, cfg: dict[str, object]) -> PlaneControl:
        """Build from a config dict; unknown keys raise :class:`ConfigError`."""
        allowed = {*CONTROLLED, "lowercase", "orthography"}
        bad = sorted(set(cfg) - allowed)
        if bad:
            raise ConfigError(f"unknown plane control option(s) {bad}; choose from {sorted(allowed)}")
        return cls(**cfg)  # type: ignore[arg-type]


@dataclass
class PlanePrediction:
    """Output planes of one document (offsets = the input's) and, per plane, a bool mask of
    the letters whose value the model chose plus the probability of the chosen value."""

    planes: CharPlanes
    filled: dict[str, np.ndarray] = field(default_factory=dict)
    confidence: dict[str, np.ndarray] = field(default_factory=dict)


def breathing_sites(letters: np.ndarray, word_start: np.ndarray) -> np.ndarray:
    """Bool per letter: the letter that carries a word's breathing (word-initial vowel or ρ;
    the second vowel of a word-initial diphthong αι ει οι υι αυ ευ ηυ ου ωυ)."""
    n = len(letters)
    nxt = np.full(n, PAD_ID, dtype=np.int64)
    nxt[:-1] = letters[1:]
    nxt_start = np.ones(n, dtype=bool)
    nxt_start[:-1] = word_start[1:]
    lt = letters.astype(np.int64)
    diph = ~nxt_start & (((nxt == _IOTA) & _BEFORE_IOTA[lt]) | ((nxt == _UPSILON) & _BEFORE_UPSILON[lt]))
    initial = word_start & (_IS_VOWEL[lt] | (lt == _RHO))
    sites = initial & ~diph
    second = np.zeros(n, dtype=bool)
    second[1:] = (initial & diph)[:-1]
    return sites | second


def _one_accent(
    logp: np.ndarray, allow: np.ndarray, word_start: np.ndarray, fixed: np.ndarray, given: np.ndarray
) -> np.ndarray:
    """Restrict ``allow`` so that every word carries at most one accent: the accented letter
    (or none) is chosen per word by the best total log-probability. Words with a kept
    accent get no further accent."""
    n = len(word_start)
    has_acc = dia_accent() != 0
    scores = np.where(allow, logp, -np.inf)
    bare = np.where(has_acc[None, :], -np.inf, scores).max(1)
    acc = np.where(has_acc[None, :], scores, -np.inf).max(1)
    gain = acc - bare  # -inf where no accent is allowed
    gain[fixed] = -np.inf
    starts = np.flatnonzero(word_start)
    word = np.cumsum(word_start) - 1
    best = np.maximum.reduceat(gain, starts)
    kept_acc = np.zeros(len(starts), dtype=bool)
    given_acc = fixed & (given != DIA_UNKNOWN)
    np.logical_or.at(kept_acc, word[given_acc], has_acc[np.minimum(given[given_acc], N_DIA_STATES - 1)])
    first = np.full(len(starts), n, dtype=np.int64)
    winner = (gain == best[word]) & (gain > 0) & ~kept_acc[word]
    np.minimum.at(first, word[winner], np.flatnonzero(winner))
    chosen = np.zeros(n, dtype=bool)
    chosen[first[first < n]] = True
    out = allow.copy()
    out[~chosen & ~fixed] &= ~has_acc[None, :]
    out[chosen] &= has_acc[None, :]
    return out


# ---------------------------------------------------------------- inputs
def model_inputs(planes: CharPlanes, control: PlaneControl) -> tuple[CharPlanes, dict[str, np.ndarray]]:
    """The planes the model sees, and per controlled plane a bool mask of the letters whose
    input value is fixed (kept/copied) in the output."""
    control = control.resolve(planes)
    src = planes.copy()
    if control.lowercase:
        src.capitals[:] = CAP_LOWER
    out = src.copy()
    fixed: dict[str, np.ndarray] = {}
    marked = {
        "boundary": (src.boundary == BND_WORD_END) | (src.boundary == BND_SENT_END),
        "diacritics": (src.diacritics != 0) & (src.diacritics != DIA_UNKNOWN),
        "punctuation": (src.punctuation != PUNCT_NONE) & (src.punctuation != PUNCT_UNKNOWN),
        "capitals": src.capitals == CAP_UPPER,
    }
    unknown = {"boundary": BND_UNKNOWN, "diacritics": DIA_UNKNOWN, "punctuation": PUNCT_UNKNOWN,
               "capitals": CAP_UNKNOWN}
    n = len(planes)
    for plane in CONTROLLED:
        mode = control.mode(plane)
        if mode == "keep":
            fix = marked[plane]
            if plane == "diacritics" and ((src.boundary[:-1] == BND_WORD_END) | (src.boundary[:-1] == BND_SENT_END)).any():
                # divided input: a word that carries any diacritic is complete as given
                spans = word_spans(src)
                word_marked = np.logical_or.reduceat(fix, spans[:, 0])
                fix = np.repeat(word_marked, spans[:, 1] - spans[:, 0])
        elif mode == "copy":
            fix = getattr(src, plane) != unknown[plane]
        else:
            fix = np.zeros(n, dtype=bool)
        fix &= src.letters != MASK_ID  # a gap's letters are always predicted (or dropped)
        fixed[plane] = fix
        arr = getattr(out, plane)
        arr[~fix] = unknown[plane]
    return out, fixed


# ---------------------------------------------------------------- forward
def run_heads(
    model: StoicheiaEncoder,
    inputs: Sequence[CharPlanes],
    *,
    max_length: int = 2048,
    overlap: int = 256,
    max_rows: int = 64,
) -> list[dict[str, np.ndarray]]:
    """Log-probabilities of the boundary, dia, punct, cap and char heads, per document
    ``(n_letters, C)`` float32. Every document and window is packed into the rows of one
    forward (split into chunks of ``max_rows`` rows only to bound memory)."""
    heads = ("boundary", "dia", "punct", "cap", "char")
    out: list[dict[str, np.ndarray]] = [
        {h: np.zeros((len(p), 0), np.float32) for h in heads} for p in inputs
    ]
    live = [i for i, p in enumerate(inputs) if len(p)]
    if not live:
        return out
    packed = pack_planes([inputs[i] for i in live], max_length=max_length, overlap=overlap)
    param = next(model.parameters())
    device = param.device
    flat: dict[str, list[np.ndarray]] = {h: [] for h in heads}
    use_cap = bool(getattr(model.config, "use_cap_input", False))
    with torch.inference_mode():
        for r0 in range(0, packed.n_rows, max_rows):
            rows = slice(r0, r0 + max_rows)

            def t(a: np.ndarray, rows: slice = rows) -> torch.Tensor:
                return torch.from_numpy(np.ascontiguousarray(a[rows])).to(device)

            res = model(
                t(packed.input_ids), t(packed.boundary), t(packed.dia), t(packed.punct),
                seg_id=t(packed.seg_id), positions=t(packed.positions),
                cap=t(packed.cap) if use_cap else None,
            )
            for h in heads:
                logits = getattr(res, h).float()
                flat[h].append(torch.log_softmax(logits, -1).flatten(0, 1).cpu().numpy())
    stacked = {h: np.concatenate(v, 0) for h, v in flat.items()}
    for j, i in enumerate(live):
        idx = packed.doc_index[j]
        out[i] = {h: stacked[h][idx] for h in heads}
    return out


# ---------------------------------------------------------------- decoding
def _restricted_argmax(logp: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.where(allowed, logp, -np.inf)
    best = scores.argmax(-1)
    return best, np.exp(np.take_along_axis(scores, best[:, None], -1)[:, 0])


def decode_heads(
    planes: CharPlanes, inputs: CharPlanes, fixed: dict[str, np.ndarray], logp: dict[str, np.ndarray],
    control: PlaneControl, *, lexicon: FormLexicon | str | None = INSTALLED,
    params: LatticeParams | None = None,
) -> PlanePrediction:
    """Decode one document's head log-probabilities into output planes.

    With a lexicon (default: the installed one, :func:`.lexasset.load_lexicon`) word
    division and diacritics are decoded jointly over a word lattice
    (:func:`.lattice.decode_lattice`); ``lexicon=None`` (or none installed) decodes each
    plane per letter (vectorised argmax under the orthography rules)."""
    control = control.resolve(planes)
    if isinstance(lexicon, str):
        lexicon = load_lexicon()
    if (lexicon is not None and len(planes) and control.mode("diacritics") != "drop"
            and control.mode("boundary") != "drop"):
        return _decode_lattice(planes, inputs, fixed, logp, control, lexicon, params)
    n = len(planes)
    out = inputs.copy()
    out.letters[:] = planes.letters
    filled: dict[str, np.ndarray] = {}
    conf: dict[str, np.ndarray] = {}
    if control.lowercase:
        out.capitals[:] = np.where(fixed["capitals"], out.capitals, CAP_LOWER)
    else:
        out.capitals[:] = planes.capitals
    if n == 0:
        return PlanePrediction(out, {p: np.zeros(0, bool) for p in CONTROLLED},
                               {p: np.zeros(0, np.float32) for p in CONTROLLED})
    last = np.zeros(n, dtype=bool)
    last[-1] = True

    # ---- boundary and punctuation, jointly
    b_mode, p_mode = control.mode("boundary"), control.mode("punctuation")
    b_allow = np.ones((n, N_BOUNDARY_OUT), dtype=bool)
    fb = fixed["boundary"]
    if b_mode in ("keep", "copy"):
        b_allow[fb] = False
        b_allow[fb, inputs.boundary[fb]] = True
    b_allow[last, BND_INTERNAL] = False
    p_allow = np.ones((n, N_PUNCT_OUT), dtype=bool)
    fp = fixed["punctuation"]
    p_allow[fp] = False
    p_allow[fp, inputs.punctuation[fp]] = True
    if p_mode == "drop":
        p_allow[:] = False
        p_allow[:, PUNCT_NONE] = True
    pair = np.broadcast_to(pair_valid(), (n, N_BOUNDARY_OUT, N_PUNCT_OUT)).copy()
    # a sentence may end without punctuation at the text's end, where the input says so,
    # or wherever punctuation is not being decided
    loose = last | (fb & (inputs.boundary == BND_SENT_END))
    if p_mode == "drop":
        loose[:] = True
    pair[loose, BND_SENT_END, PUNCT_NONE] = True
    allow = pair & b_allow[:, :, None] & p_allow[:, None, :]
    none_ok = ~allow.any((1, 2))
    if none_ok.any():  # contradictory kept input: fall back to the per-plane constraints
        allow[none_ok] = b_allow[none_ok, :, None] & p_allow[none_ok, None, :]
    p_logp = logp["punct"] if p_mode != "drop" else np.zeros((n, N_PUNCT_OUT), np.float32)
    joint = logp["boundary"][:, :, None] + p_logp[:, None, :]
    best, prob = _restricted_argmax(joint.reshape(n, -1), allow.reshape(n, -1))
    bnd, pun = best // N_PUNCT_OUT, best % N_PUNCT_OUT
    if b_mode == "drop":
        out.boundary[:] = BND_UNKNOWN
        filled["boundary"] = np.zeros(n, bool)
    else:
        out.boundary[:] = np.where(fb, inputs.boundary, bnd)
        filled["boundary"] = ~fb
    conf["boundary"] = np.where(filled["boundary"], prob, 1.0).astype(np.float32)
    if p_mode == "drop":
        out.punctuation[:] = PUNCT_NONE
        filled["punctuation"] = np.zeros(n, bool)
    else:
        out.punctuation[:] = np.where(fp, inputs.punctuation, pun)
        filled["punctuation"] = ~fp
    conf["punctuation"] = np.where(filled["punctuation"], prob, 1.0).astype(np.float32)

    ends = (out.boundary == BND_WORD_END) | (out.boundary == BND_SENT_END)
    word_start = np.ones(n, dtype=bool)
    word_start[1:] = ends[:-1]
    known_bnd = b_mode != "drop"

    # ---- diacritics
    d_mode = control.mode("diacritics")
    fd = fixed["diacritics"]
    if d_mode == "drop":
        out.diacritics[:] = 0
        filled["diacritics"] = np.zeros(n, bool)
        conf["diacritics"] = np.ones(n, np.float32)
    else:
        d_allow = dia_valid_table()[planes.letters.astype(np.int64)].copy()
        if control.orthography and known_bnd:
            sites = breathing_sites(planes.letters, word_start)
            br = dia_breathing()
            d_allow &= np.where(sites[:, None], br[None, :] != BREATHING_NONE, br[None, :] == BREATHING_NONE)
            rho_site = sites & (planes.letters == _RHO)
            d_allow[rho_site] &= br[None, :] == BREATHING_ROUGH
            d_allow[planes.letters == MASK_ID] = True
            empty = ~d_allow.any(1)
            d_allow[empty] = dia_valid_table()[planes.letters[empty].astype(np.int64)]
        if control.orthography and known_bnd:
            d_allow = _one_accent(logp["dia"], d_allow, word_start, fd, inputs.diacritics)
        dia, dprob = _restricted_argmax(logp["dia"], d_allow)
        out.diacritics[:] = np.where(fd, inputs.diacritics, dia)
        filled["diacritics"] = ~fd
        conf["diacritics"] = np.where(fd, 1.0, dprob).astype(np.float32)

    # ---- capitals
    c_mode = control.mode("capitals")
    fc = fixed["capitals"]
    if c_mode == "drop":
        out.capitals[:] = CAP_LOWER
        filled["capitals"] = np.zeros(n, bool)
        conf["capitals"] = np.ones(n, np.float32)
    elif c_mode == "copy":
        out.capitals[:] = np.where(fc, out.capitals, CAP_LOWER)
        filled["capitals"] = np.zeros(n, bool)
        conf["capitals"] = np.ones(n, np.float32)
    else:
        c_allow = np.ones((n, 2), dtype=bool)
        if control.orthography and known_bnd:
            c_allow[~word_start, CAP_UPPER] = False
        cap, cprob = _restricted_argmax(logp["cap"], c_allow)
        out.capitals[:] = np.where(fc, CAP_UPPER, cap)
        filled["capitals"] = ~fc
        conf["capitals"] = np.where(fc, 1.0, cprob).astype(np.float32)
    return PlanePrediction(out, filled, conf)


def predict_planes(
    model: StoicheiaEncoder,
    planes: Sequence[CharPlanes],
    control: PlaneControl | None = None,
    *,
    max_length: int = 2048,
    overlap: int = 256,
    max_rows: int = 64,
    lexicon: FormLexicon | str | None = INSTALLED,
) -> list[PlanePrediction]:
    """Predict the controlled planes of a batch of documents in one packed forward
    (``lexicon``: as for :func:`decode_heads`)."""
    control = control or PlaneControl()
    if isinstance(lexicon, str):
        lexicon = load_lexicon()
    prepared = [model_inputs(p, control) for p in planes]
    logps = run_heads(model, [x for x, _ in prepared], max_length=max_length, overlap=overlap,
                      max_rows=max_rows)
    return [decode_heads(p, x, fixed, lp, control, lexicon=lexicon)
            for p, (x, fixed), lp in zip(planes, prepared, logps, strict=True)]


def _decode_lattice(
    planes: CharPlanes, inputs: CharPlanes, fixed: dict[str, np.ndarray], logp: dict[str, np.ndarray],
    control: PlaneControl, lexicon: FormLexicon, params: LatticeParams | None,
) -> PlanePrediction:
    """:func:`decode_heads` through the word lattice; kept/copied input values win."""
    n = len(planes)
    fb = fixed["boundary"]
    given_end = (inputs.boundary == BND_WORD_END) | (inputs.boundary == BND_SENT_END)
    res = decode_lattice(planes.letters, logp, lexicon, params, must_end=fb & given_end, no_end=fb & ~given_end)
    lat = res.planes
    out = inputs.copy()
    out.letters[:] = planes.letters
    out.elided = lat.elided
    filled: dict[str, np.ndarray] = {}
    conf: dict[str, np.ndarray] = {}
    rows = np.arange(n)

    def prob(head: str, chosen: np.ndarray) -> np.ndarray:
        lp = logp.get(head)
        return np.ones(n, np.float32) if lp is None else np.exp(lp[rows, chosen.astype(np.int64)]).astype(np.float32)

    out.boundary[:] = np.where(fb, inputs.boundary, lat.boundary)
    filled["boundary"] = ~fb
    conf["boundary"] = np.where(fb, 1.0, prob("boundary", lat.boundary)).astype(np.float32)
    fp = fixed["punctuation"]
    if control.mode("punctuation") == "drop":
        out.punctuation[:] = PUNCT_NONE
        filled["punctuation"] = np.zeros(n, bool)
    else:
        out.punctuation[:] = np.where(fp, inputs.punctuation, lat.punctuation)
        filled["punctuation"] = ~fp
    conf["punctuation"] = np.where(filled["punctuation"], prob("punct", out.punctuation), 1.0).astype(np.float32)
    fd = fixed["diacritics"]
    out.diacritics[:] = np.where(fd, inputs.diacritics, lat.diacritics)
    filled["diacritics"] = ~fd
    conf["diacritics"] = np.where(fd, 1.0, prob("dia", lat.diacritics)).astype(np.float32)
    c_mode, fc = control.mode("capitals"), fixed["capitals"]
    if c_mode == "drop":
        out.capitals[:] = CAP_LOWER
        filled["capitals"] = np.zeros(n, bool)
    elif c_mode == "copy":
        out.capitals[:] = np.where(fc, planes.capitals, CAP_LOWER)
        filled["capitals"] = np.zeros(n, bool)
    else:
        out.capitals[:] = np.where(fc, CAP_UPPER, lat.capitals)
        filled["capitals"] = ~fc
    conf["capitals"] = np.where(filled["capitals"], prob("cap", out.capitals), 1.0).astype(np.float32)
    return PlanePrediction(out, filled, conf)


def strip_planes(planes: CharPlanes) -> CharPlanes:
    """Scriptio continua of ``planes``: lower case, no diacritics, no word division or
    punctuation (the last letter stays sentence-final, as the codec encodes it)."""
    out = replace(planes.copy())
    out.diacritics[:] = 0
    out.punctuation[:] = PUNCT_NONE
    out.capitals[:] = CAP_LOWER
    out.boundary[:] = BND_INTERNAL
    if len(out):
        out.boundary[-1] = BND_SENT_END
    return out
