"""The released meter model's decode as its authors evaluate it (scanner ``decode = "research"``).

Per letter, from the two released heads (no syllabification of our own):

* **macrons**: the macron head's argmax (long on equal scores) at every *ambiguous*
  letter (:func:`ambiguous_mask`: a bare α ι υ without circumflex or iota subscript that is
  not part of a diphthong inside a word; diaeresis on the second vowel breaks the
  diphthong). The metre never changes a macron.
* **scansion labels**: the scan head's argmax per letter (0 none, 1 heavy syllable ends
  here, 2 light ends, 3 verse ends), then two rules in this order:
  :func:`merge_vowelless` (a labelled span without a vowel is folded into the span before
  it, which loses its label; the merged span keeps the later label) and
  :func:`circumflex_heavy` (a light span holding a circumflex becomes heavy).
* **gated Viterbi** (:func:`gated`, :func:`gated_auto`): the most probable label string
  (log of the probabilities clipped at 1e-9) whose labelled letters spell a path
  through a metre's automaton (:data:`GRAMMARS`; the syllable that completes the metre is
  labelled 3 and scored with the verse-end probability), used only when it costs at most
  ``theta`` nats per letter more than the per-letter argmax. Forced: the verse's metre;
  automatic: the metre whose path scores best per letter. When the gate rejects, the
  labels are the rule-corrected ones above (the research code returns the bare argmax
  there, skipping the two rules its own docstring promises; the golden fixtures flag this
  ``gate_fallback_without_rules`` and we follow its ``paper_implied_labels``).

Renderings as the research command line prints them: :func:`insert_marks` (``--macronize``:
``_`` after a long, ``^`` after a short letter, after the letter's combining marks) and
:func:`bracketize` (``--scan``: ``[heavy]`` / ``{light}`` spans, a verse-end span shown heavy).
Letters are located by their offsets in the text (the codec's letters), so the strings
are the input text with marks added.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..alphabet import ACCENT_CIRCUMFLEX, ALPHABET, BND_INTERNAL
from ..errors import DecodingError

NONE, HEAVY, LIGHT, VERSE = 0, 1, 2, 3
MAC_LONG, MAC_SHORT = 0, 1

_ID = {ch: i for i, ch in enumerate(ALPHABET)}
_VOWELS = np.array([_ID[c] for c in "αεηιουω"])
_DICHRONA = np.array([_ID[c] for c in "αιυ"])
_DIPHTHONGS = {(_ID[a], _ID[b]) for a, b in ("αι", "αυ", "ει", "ευ", "ηυ", "οι", "ου", "υι", "ωυ")}

# --------------------------------------------------------------------------- metres
# Each metre is a sequence of positions; a position lists its realisations (weight strings).
_H, _HL, _L, _FINAL = ("H",), ("H", "LL"), ("L",), ("H", "L")
_ANCEPS, _LONGUM = ("H", "L", "LL"), ("H", "LL")
_ANAP = ("LLH", "HH", "HLL")
_BREVE_C = ("L", "LL")
#: The research grammars, by name, in the order automatic detection tries them.
GRAMMARS: dict[str, list[tuple[str, ...]]] = {
    "hex": [_H, _HL] * 5 + [_H, _FINAL],
    "penta": [_H, _HL] * 2 + [_H] + [_H, _L, _L, _H, _L, _L, _FINAL],
    "ia6": [_ANCEPS, _LONGUM, _L, _LONGUM] * 2 + [_ANCEPS, _LONGUM, _L, _FINAL],
    "ia6c": [_ANCEPS, _LONGUM, _BREVE_C, _LONGUM] * 2 + [_ANCEPS, _LONGUM, _BREVE_C, _FINAL],
    "troch_tet": [_LONGUM, _L, _LONGUM, _ANCEPS] * 3 + [_LONGUM, _L, _FINAL],
    "anap_tet": [_ANAP] * 7 + [_FINAL],
    "chol": [_ANCEPS, _LONGUM, _L, _LONGUM] * 2 + [_ANCEPS, _LONGUM, _H, _FINAL],
}
AUTO_ORDER: tuple[str, ...] = ("hex", "penta", "ia6", "ia6c", "troch_tet", "anap_tet", "chol")
#: The forced metre of an elegiac couplet (not a grammar: :func:`verse_grammar` alternates hex / penta).
ELEGIAC = "elegiac"
#: Metre names of the research corpus -> grammar (a grammar name maps to itself).
METER_NAMES: dict[str, str] = {
    "dactylic hexameter": "hex", "hexameter": "hex", "dactylic pentameter": "penta", "pentameter": "penta",
    "iambic trimeter (tragic)": "ia6", "iambic trimeter (anapaestic)": "ia6c", "ia6g": "ia6",
    "tr7": "troch_tet", "!_tr7": "troch_tet", "an4": "anap_tet", "an4cat": "anap_tet", "choliambic": "chol",
    **{name: name for name in GRAMMARS},
    # the lattice decoder's metres (assets/meters) by their file names
    "dactylic_hexameter": "hex", "elegiac_pentameter": "penta", "iambic_trimeter": "ia6",
    "iambic_trimeter_resolved": "ia6c", "trochaic_tetrameter_catalectic": "troch_tet",
    "anapaestic_tetrameter_catalectic": "anap_tet", "choliamb": "chol",
    # the elegiac couplet: its verses alternate hexameter and pentameter, the first a hexameter
    "elegiac": ELEGIAC, "elegiac couplet": ELEGIAC, "elegiacs": ELEGIAC, "eleg": ELEGIAC,
}
#: The lattice decoder's metres (``assets/meters`` names) that realise each grammar.
LATTICE_METERS: dict[str, tuple[str, ...]] = {
    "hex": ("dactylic_hexameter",), "penta": ("elegiac_pentameter",),
    "ia6": ("iambic_trimeter", "iambic_trimeter_resolved"), "ia6c": ("iambic_trimeter_resolved",),
    "troch_tet": ("trochaic_tetrameter_catalectic",), "anap_tet": ("anapaestic_tetrameter_catalectic",),
    "chol": ("choliamb",),
}
DEFAULT_THETA = 0.1
LOG_FLOOR = 1e-9
#: Per-letter integers: a list or a numpy array.
Labels = Sequence[int] | np.ndarray


def grammar_name(meter: str | None) -> str | None:
    """The grammar of a metre name (``"dactylic hexameter"``, ``"hex"`` …), None when none fits."""
    if meter is None:
        return None
    return METER_NAMES.get(meter.strip()) or METER_NAMES.get(meter.strip().lower())


def verse_grammar(grammar: str | None, index: int) -> str | None:
    """The grammar verse ``index`` (0-based) of a poem is forced to: ``grammar`` itself, or for
    :data:`ELEGIAC` the couplet's hexameter (even verses) and pentameter (odd verses)."""
    if grammar == ELEGIAC:
        return "hex" if index % 2 == 0 else "penta"
    return grammar


@dataclass(frozen=True)
class _Automaton:
    """States 0 = start, 1 = accept, others inner; ``moves[state][weight]`` = next states."""

    moves: tuple[dict[str, tuple[int, ...]], ...]


def _automaton(spec: Sequence[tuple[str, ...]]) -> _Automaton:
    n_pos = len(spec)
    # boundary state of position p: p == 0 -> 0, p == n_pos -> 1, else 1 + p
    def boundary(p: int) -> int:
        return 0 if p == 0 else 1 if p == n_pos else 1 + p

    moves: list[dict[str, set[int]]] = [dict() for _ in range(n_pos + 1)]
    for p, realisations in enumerate(spec):
        for real in realisations:
            state = boundary(p)
            for j, weight in enumerate(real):
                if j == len(real) - 1:
                    nxt = boundary(p + 1)
                else:
                    moves.append({})
                    nxt = len(moves) - 1
                moves[state].setdefault(weight, set()).add(nxt)
                state = nxt
    return _Automaton(tuple({w: tuple(sorted(s)) for w, s in m.items()} for m in moves))


_AUTOMATA = {name: _automaton(spec) for name, spec in GRAMMARS.items()}
_ACCEPT = 1


def viterbi(logp: np.ndarray, meter: str) -> tuple[list[int] | None, float]:
    """Best per-letter labels whose labelled letters follow ``meter`` and their summed
    log-probability; ``(None, -inf)`` when no such labelling exists. ``logp``: (n, 4)."""
    auto = _AUTOMATA[meter]
    n = len(logp)
    best: dict[int, float] = {0: 0.0}
    back: list[dict[int, tuple[int, int]]] = []
    for i in range(n):
        lp = logp[i]
        nxt: dict[int, float] = {}
        ptr: dict[int, tuple[int, int]] = {}
        for state, score in best.items():
            cand = score + lp[NONE]
            if cand > nxt.get(state, -np.inf):
                nxt[state], ptr[state] = cand, (state, NONE)
            for weight, label in (("H", HEAVY), ("L", LIGHT)):
                for s2 in auto.moves[state].get(weight, ()):
                    lab = VERSE if s2 == _ACCEPT else label
                    cand = score + lp[lab]
                    if cand > nxt.get(s2, -np.inf):
                        nxt[s2], ptr[s2] = cand, (state, lab)
        best = nxt
        back.append(ptr)
        if not best:
            return None, -np.inf
    if _ACCEPT not in best:
        return None, -np.inf
    labels = [NONE] * n
    state = _ACCEPT
    for i in range(n - 1, -1, -1):
        state, labels[i] = back[i][state]
    return labels, float(best[_ACCEPT])


@dataclass(frozen=True)
class MeterDecision:
    """One gated decode: the metre tried, whether its path was used, the gate statistic
    (``cost`` nats per letter over the argmax, None when the metre has no path) and labels."""

    meter: str | None
    applied: bool
    cost: float | None
    labels: list[int]


def log_probs(probs: np.ndarray) -> np.ndarray:
    """The Viterbi scores: log of the scan probabilities clipped at 1e-9."""
    return np.log(np.clip(np.asarray(probs, dtype=np.float64), LOG_FLOOR, 1.0))


def _cost(logp: np.ndarray, score: float) -> float:
    return float((logp.max(axis=1).sum() - score) / max(1, len(logp)))


def gated(logp: np.ndarray, meter: str, fallback: Labels, theta: float = DEFAULT_THETA) -> MeterDecision:
    """The verse's metre forced: its Viterbi labels if they cost at most ``theta`` nats per
    letter more than the argmax, else ``fallback`` (the rule-corrected labels)."""
    if meter not in GRAMMARS:
        raise DecodingError(f"unknown metre {meter!r}; expected one of {sorted(METER_NAMES)}")
    labels, score = viterbi(logp, meter)
    if labels is None:
        return MeterDecision(meter, False, None, list(fallback))
    cost = _cost(logp, score)
    return MeterDecision(meter, cost <= theta, cost, labels if cost <= theta else list(fallback))


def meter_costs(logp: np.ndarray) -> dict[str, float | None]:
    """Gate statistic of every grammar (None when it has no path of this length)."""
    out: dict[str, float | None] = {}
    for name in AUTO_ORDER:
        labels, score = viterbi(logp, name)
        out[name] = None if labels is None else _cost(logp, score)
    return out


def gated_auto(logp: np.ndarray, fallback: Labels, theta: float = DEFAULT_THETA) -> MeterDecision:
    """Automatic metre: the grammar with the best path score per letter (first in
    :data:`AUTO_ORDER` on equal scores), then the gate."""
    best: tuple[str | None, list[int] | None, float, float] = (None, None, -np.inf, -np.inf)
    for grammar in AUTO_ORDER:
        path, total = viterbi(logp, grammar)
        if path is not None and total / len(logp) > best[2]:
            best = (grammar, path, total / len(logp), total)
    name, labels, _, score = best
    if name is None or labels is None:
        return MeterDecision(None, False, None, list(fallback))
    cost = _cost(logp, score)
    return MeterDecision(name, cost <= theta, cost, labels if cost <= theta else list(fallback))


# --------------------------------------------------------------------------- rules
def ambiguous_mask(letters: np.ndarray, boundary: np.ndarray, diacritics: np.ndarray) -> np.ndarray:
    """The macron head's domain (see module doc), from the codec planes."""
    letters = np.asarray(letters, dtype=np.int64)
    dia = np.asarray(diacritics, dtype=np.int64)
    accent, iota, diaeresis = dia // 12, (dia // 2) % 2, dia % 2
    out = np.isin(letters, _DICHRONA) & (accent != ACCENT_CIRCUMFLEX) & (iota == 0)
    if len(letters) > 1:
        pair = np.array([(int(a), int(b)) in _DIPHTHONGS for a, b in zip(letters[:-1], letters[1:], strict=True)])
        pair &= np.asarray(boundary)[:-1] == BND_INTERNAL
        pair &= diaeresis[1:] == 0
        out[1:] &= ~pair
        out[:-1] &= ~pair
    return out


def merge_vowelless(letters: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Fold every labelled span without a vowel into the span before it (see module doc)."""
    out = np.asarray(labels).copy()
    vowel = np.isin(np.asarray(letters), _VOWELS)
    kept: list[int] = []
    start = 0
    for i in np.nonzero(out != NONE)[0].tolist():
        if kept and not vowel[start : i + 1].any():
            out[kept.pop()] = NONE
        kept.append(i)
        start = i + 1
    return out


def circumflex_heavy(diacritics: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """A light span holding a circumflexed letter becomes heavy (verse ends are left alone)."""
    out = np.asarray(labels).copy()
    circ = np.asarray(diacritics, dtype=np.int64) // 12 == ACCENT_CIRCUMFLEX
    start = 0
    for i in np.nonzero(out != NONE)[0].tolist():
        if out[i] == LIGHT and circ[start : i + 1].any():
            out[i] = HEAVY
        start = i + 1
    return out


def scan_labels(letters: np.ndarray, diacritics: np.ndarray, scan_probs: np.ndarray) -> np.ndarray:
    """Per-letter argmax of the scan head, then both rules."""
    raw = np.argmax(np.asarray(scan_probs), axis=1)
    return circumflex_heavy(diacritics, merge_vowelless(letters, raw))


# --------------------------------------------------------------------------- renderings
def pattern(labels: Labels) -> str:
    """``H``/``L``/``V`` for each labelled letter (the fixtures' pattern)."""
    return "".join("HLV"[int(x) - 1] for x in labels if int(x) != NONE)


def metrical_pattern(labels: Labels) -> str:
    """``–``/``⏑`` per labelled letter (a verse end shown long)."""
    return "".join("⏑" if int(x) == LIGHT else "–" for x in labels if int(x) != NONE)


def _letter_positions(text: str, offsets: Labels) -> dict[int, int]:
    n = len(text)
    return {off: k for k, off in enumerate(np.asarray(offsets, dtype=np.int64).tolist()) if 0 <= off < n}


def insert_marks(text: str, offsets: Labels, marks: dict[int, int]) -> str:
    """``text`` with ``_`` (long) / ``^`` (short) after each letter ``k`` in ``marks``
    (letter index -> MAC_LONG/MAC_SHORT); letter ``k`` sits at ``text[offsets[k]]``."""
    at = _letter_positions(text, offsets)
    out: list[str] = []
    pending: str | None = None
    for pos, ch in enumerate(text):
        if pending is not None and not unicodedata.category(ch).startswith("M"):
            out.append(pending)
            pending = None
        out.append(ch)
        k = at.get(pos)
        if k is not None and k in marks:
            pending = "_" if marks[k] == MAC_LONG else "^"
    if pending is not None:
        out.append(pending)
    return "".join(out)


def bracket_spans(text: str, offsets: Labels, labels: Labels) -> list[tuple[str, int]]:
    """The text cut after every labelled letter: (piece, label), the last piece label 0
    when unlabelled letters or other characters follow the last labelled one."""
    at = _letter_positions(text, offsets)
    out: list[tuple[str, int]] = []
    cur: list[str] = []
    for pos, ch in enumerate(text):
        cur.append(ch)
        k = at.get(pos)
        if k is not None and int(labels[k]) != NONE:
            out.append(("".join(cur), int(labels[k])))
            cur = []
    if cur:
        out.append(("".join(cur), NONE))
    return out


def bracketize(text: str, offsets: Labels, labels: Labels) -> str:
    """``[heavy]`` / ``{light}`` spans (a verse end shown heavy), as the research ``--scan``."""
    parts = []
    for piece, label in bracket_spans(text, offsets, labels):
        if label == NONE:
            parts.append(piece)
        elif label == LIGHT:
            parts.append("{" + piece + "}")
        else:
            parts.append("[" + piece + "]")
    return "".join(parts)


def decision_dict(decision: MeterDecision, text: str, offsets: Labels, *, forced: bool) -> dict[str, Any]:
    """``span._.meter`` of one gated decode (labels, patterns and the bracketed line)."""
    return {"name": decision.meter, "used": decision.applied, "cost": decision.cost, "forced": forced,
            "labels": [int(x) for x in decision.labels], "pattern": pattern(decision.labels),
            "bracketed": bracketize(text, offsets, decision.labels)}


__all__ = ["AUTO_ORDER", "DEFAULT_THETA", "ELEGIAC", "GRAMMARS", "LATTICE_METERS", "HEAVY", "LIGHT", "METER_NAMES", "NONE", "VERSE",
           "MeterDecision", "ambiguous_mask", "bracket_spans", "bracketize", "circumflex_heavy",
           "decision_dict", "gated", "gated_auto", "grammar_name", "insert_marks", "log_probs",
           "merge_vowelless", "meter_costs", "metrical_pattern", "pattern", "scan_labels", "verse_grammar", "viterbi"]
