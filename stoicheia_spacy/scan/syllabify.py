"""Greek syllabification, rule weights and dichrona detection on codec planes (numpy).

Works on :class:`~stoicheia_spacy.codec.CharPlanes` so every syllable is a span of
codec letter positions (the positions the encoder and the scanner heads see).

* **Nuclei**: vowels; ``αι ει οι υι αυ ευ ηυ ου ωυ`` form a diphthong inside a word
  when the second vowel has no diaeresis and the first no accent or breathing.
* **Dichrona** (the ambiguous vowels): bare ``α ι υ`` that are a nucleus of their own
  (not in a diphthong) and carry neither a circumflex nor an iota subscript.
* **Weights** by rule (columns as :mod:`stoicheia_spacy.scan.viterbi`: 0 heavy, 1 light,
  -1 undetermined): heavy if the nucleus is long (``η ω``, diphthong, circumflex,
  iota subscript, a dichronon known long) or two or more consonants follow it
  (``ζ ξ ψ`` count two; across word ends, as in verse); light if the nucleus is short
  and at most one consonant follows; undetermined for an unknown dichronon in an open
  syllable and for a short nucleus before mute + liquid/nasal (correption). A
  consonant at the end of the line closes the last syllable (brevis in longo for prose,
  as in Norma).
* **Boundaries** (Norma's conventions): one consonant between nuclei starts the next
  syllable (``ζ ξ ψ`` close the previous one); of two or more, the first closes the
  previous syllable, or all of the previous word's consonants do; a light syllable
  before mute + liquid keeps the whole cluster in the next onset; elided consonants
  join the next word.

Epic correption and synizesis are alternatives the metre decoder may choose
(:mod:`stoicheia_spacy.scan.lattice`); lengthening before liquids is left to the model.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from ..alphabet import ALPHABET, dia_features
from ..codec import CharPlanes

HEAVY, LIGHT, UNKNOWN = 0, 1, -1

_ID = {ch: i for i, ch in enumerate(ALPHABET)}
VOWELS = np.array([_ID[c] for c in "αεηιουω"])
DICHRONA = np.array([_ID[c] for c in "αιυ"])
LONG_VOWELS = np.array([_ID[c] for c in "ηω"])
DOUBLES = np.array([_ID[c] for c in "ζξψ"])
STOPS = np.array([_ID[c] for c in "πβφκγχτδθ"])
LIQUIDS = np.array([_ID[c] for c in "λρμν"])
#: Diphthongs as (first, second) letter-id pairs.
DIPHTHONGS = {(_ID[a], _ID[b]) for a, b in ("αι", "ει", "οι", "υι", "αυ", "ευ", "ηυ", "ου", "ωυ")}
#: Long vowels that take an iota adscript (``τῆι``, ``δήμωι``): one long nucleus with the ι.
ADSCRIPT_HOSTS = np.array([_ID[c] for c in "ηω"])
IOTA = _ID["ι"]
ELISION_MARKS = frozenset("’'᾽ʼ`")



def member_table(ids: np.ndarray) -> np.ndarray:
    """Bool (25,): entry ``i + 1`` says whether letter id ``i`` is one of ``ids`` (entry 0: id -1,
    not a letter). ``table[letters + 1]`` is ``np.isin(letters, ids)`` for ids from
    :func:`_letters`, as one lookup instead of a sort per call."""
    table = np.zeros(len(ALPHABET[:24]) + 1, dtype=bool)
    table[np.asarray(ids) + 1] = True
    return table


IS_VOWEL, IS_DICHRONON, IS_LONG_VOWEL = member_table(VOWELS), member_table(DICHRONA), member_table(LONG_VOWELS)
IS_DOUBLE, IS_STOP, IS_LIQUID = member_table(DOUBLES), member_table(STOPS), member_table(LIQUIDS)
IS_ADSCRIPT_HOST = member_table(ADSCRIPT_HOSTS)

_FEATURES = np.array([dia_features(s) for s in range(48)], dtype=np.int64)  # (48, 4)
_PAIR = np.zeros((24, 24), dtype=bool)
for _a, _b in DIPHTHONGS:
    _PAIR[_a, _b] = True


@dataclass(frozen=True)
class Syllables:
    """Syllables of one line: letter spans, nuclei and rule weights (all ``(S,)`` int arrays)."""

    starts: np.ndarray  # first letter index
    ends: np.ndarray  # last letter index (inclusive)
    nucleus: np.ndarray  # first vowel of the nucleus
    long_nucleus: np.ndarray  # 1 long, 0 short, -1 unknown dichronon
    weights: np.ndarray  # HEAVY / LIGHT / UNKNOWN (rule)
    muta_cum_liquida: np.ndarray  # bool: short nucleus before stop + liquid/nasal

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def pattern(self, weights: np.ndarray | None = None) -> str:
        """``–`` heavy, ``⏑`` light, ``×`` undetermined."""
        w = self.weights if weights is None else np.asarray(weights)
        return "".join("–" if x == HEAVY else "⏑" if x == LIGHT else "×" for x in w.tolist())


def _letters(planes: CharPlanes) -> np.ndarray:
    letters = np.asarray(planes.letters, dtype=np.int64)
    return np.where(letters < 24, letters, -1)


def _features(planes: CharPlanes) -> np.ndarray:
    dia = np.asarray(planes.diacritics, dtype=np.int64)
    return _FEATURES[np.clip(dia, 0, 47)] * (dia < 48)[:, None]  # unknown -> no diacritics


def word_ends(planes: CharPlanes, text: str | None = None) -> np.ndarray:
    """Bool (n,): letter ends a word; with ``text``, elided word ends (``δ’``) do not count."""
    ends = np.asarray(planes.boundary) > 0
    ends = ends & (np.asarray(planes.boundary) < 3)
    if text is not None and ends.any():
        idx = np.nonzero(ends)[0]
        nxt = np.asarray(planes.offsets)[idx] + 1
        elided = np.array([i < len(text) and text[i] in ELISION_MARKS for i in nxt.tolist()], dtype=bool)
        is_cons = ~IS_VOWEL[_letters(planes)[idx] + 1]
        ends[idx[elided & is_cons]] = False
    if len(ends):
        ends[-1] = True
    return ends


def diphthong_second(planes: CharPlanes) -> np.ndarray:
    """Bool (n,): the letter is the second vowel of a diphthong or an iota adscript.

    An adscript is a bare ι (no accent, breathing or diaeresis) after η or ω, whatever
    their accent (``τῆι``, ``ἧι``, ``δήμωι``), or after a circumflexed α (``ἀγορᾶι``): the
    accent of a true diphthong stands on its second vowel, so an accented first vowel
    with a bare ι is the long vowel written with its iota.
    """
    return _diphthong_second(_letters(planes), _features(planes), planes)


def _diphthong_second(letters: np.ndarray, feats: np.ndarray, planes: CharPlanes) -> np.ndarray:
    """:func:`diphthong_second` from the planes' :func:`_letters` and :func:`_features`."""
    n = letters.shape[0]
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    a, b = letters[:-1], letters[1:]
    ok = (a >= 0) & (b >= 0)
    pair = np.zeros(n - 1, dtype=bool)
    pair[ok] = _PAIR[a[ok], b[ok]]
    same_word = ~(np.asarray(planes.boundary)[:-1] > 0)
    no_diaeresis = feats[1:, 3] == 0
    first_bare = (feats[:-1, 0] == 0) & (feats[:-1, 1] == 0)
    second_bare = (feats[1:, 0] == 0) & (feats[1:, 1] == 0) & no_diaeresis
    host = IS_ADSCRIPT_HOST[a + 1] | ((a == _ID["α"]) & (feats[:-1, 0] == 3))
    adscript = host & (b == IOTA) & second_bare & (feats[:-1, 2] == 0)
    out[1:] = same_word & ((pair & no_diaeresis & first_bare) | adscript)
    return out


def dichrona_mask(planes: CharPlanes) -> np.ndarray:
    """Bool (n,): ambiguous dichrona (bare α ι υ, own nucleus, no circumflex/iota subscript)."""
    letters, feats = _letters(planes), _features(planes)
    return _dichrona(letters, feats, _diphthong_second(letters, feats, planes))


def _dichrona(letters: np.ndarray, feats: np.ndarray, second: np.ndarray) -> np.ndarray:
    """:func:`dichrona_mask` from the letters, features and :func:`diphthong_second`."""
    first = np.zeros_like(second)
    first[:-1] = second[1:]
    return IS_DICHRONON[letters + 1] & ~second & ~first & (feats[:, 0] != 3) & (feats[:, 2] == 0)


def syllabify(
    planes: CharPlanes,
    *,
    text: str | None = None,
    lengths: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> Syllables:
    """Syllables of one line (see module doc).

    ``lengths`` (n,) gives known dichronon lengths (1 long, 0 short, -1 unknown);
    ``weights`` (S,) known syllable weights, used only to place boundaries in
    mute + liquid clusters (a light syllable keeps the cluster in the next onset).
    ``text`` (the string ``planes`` were encoded from) lets elided consonants join
    the next word.
    """
    letters = _letters(planes)
    n = letters.shape[0]
    is_vowel = IS_VOWEL[letters + 1]
    feats = _features(planes)
    second = _diphthong_second(letters, feats, planes)
    start = is_vowel & ~second
    nuc = np.nonzero(start)[0]
    empty = np.zeros(0, dtype=np.int64)
    if nuc.size == 0:
        return Syllables(empty, empty, empty, empty, empty, np.zeros(0, dtype=bool))
    nuc_end = nuc + second[np.minimum(nuc + 1, n - 1)].astype(np.int64) * (nuc + 1 < n)
    dich = _dichrona(letters, feats, second)
    long_n = np.where(
        second[np.minimum(nuc + 1, n - 1)] & (nuc + 1 < n)
        | IS_LONG_VOWEL[letters[nuc] + 1]
        | (feats[nuc, 0] == 3)
        | (feats[nuc, 2] == 1),
        1, 0,
    )
    if lengths is not None:
        known = np.asarray(lengths, dtype=np.int64)[nuc]
        long_n = np.where(dich[nuc], known, long_n)
    else:
        long_n = np.where(dich[nuc], -1, long_n)

    cons = (letters >= 0) & ~is_vowel
    weight_c = np.where(IS_DOUBLE[letters + 1], 2, 1) * cons
    cum_w = np.concatenate([[0], np.cumsum(weight_c)])
    cum_c = np.concatenate([[0], np.cumsum(cons)])
    s_next = np.append(nuc[1:], n)  # next nucleus (or end)
    e = nuc_end
    n_cons = cum_w[s_next] - cum_w[e + 1]  # weighted consonants after the nucleus
    n_letters = cum_c[s_next] - cum_c[e + 1]
    last = np.zeros(nuc.size, dtype=bool)
    last[-1] = True
    mcl = np.zeros(nuc.size, dtype=bool)
    two = (n_letters == 2) & ~last
    if two.any():
        c1, c2 = letters[np.minimum(e + 1, n - 1)], letters[np.minimum(e + 2, n - 1)]
        mcl = two & IS_STOP[c1 + 1] & IS_LIQUID[c2 + 1]
    heavy = (long_n == 1) | ((n_cons >= 2) & ~mcl) | (last & (n_cons >= 1))
    light = (long_n == 0) & ((n_cons <= 1) & ~(last & (n_cons >= 1)))
    rule = np.where(heavy, HEAVY, np.where(light, LIGHT, UNKNOWN))
    mcl_short = mcl & (long_n != 1)

    # boundaries: split index = last letter of each syllable
    wend = word_ends(planes, text)
    cum_we = np.concatenate([[0], np.cumsum(wend)])
    split = e.copy()
    gap = s_next - e - 1  # letters between nuclei (non-letters are not in planes)
    one = (gap == 1) & ~last
    split = np.where(one & IS_DOUBLE[letters[np.minimum(e + 1, n - 1)] + 1], e + 1, split)
    many = (gap >= 2) & ~last
    known_light = np.zeros(nuc.size, dtype=bool)
    if weights is not None:
        known_light = np.asarray(weights)[: nuc.size] == LIGHT
    keep_onset = mcl_short & known_light
    for k in np.nonzero(many & ~keep_onset)[0].tolist():  # per syllable, not per letter
        lo, hi = int(e[k]), int(s_next[k])
        # a word end before a consonant-initial word: previous word's consonants close it
        inner = cum_we[hi - 1] - cum_we[lo + 1]
        if inner > 0:
            w = lo + 1 + int(np.argmax(wend[lo + 1 : hi - 1]))
            onset = hi - 1 - w
            split[k] = hi - 1 if onset == 1 and letters[hi - 1] in DOUBLES else w
        else:
            split[k] = lo + 1
    split[-1] = n - 1
    starts = np.concatenate([[0], split[:-1] + 1])
    return Syllables(starts.astype(np.int64), split.astype(np.int64), nuc.astype(np.int64),
                     long_n.astype(np.int64), rule.astype(np.int64), mcl_short)


def ambiguous_nuclei(syl: Syllables, planes: CharPlanes) -> np.ndarray:
    """Letter indices of dichrona whose length decides the syllable's weight (open syllables)."""
    dich = dichrona_mask(planes)
    return syl.nucleus[(syl.weights == UNKNOWN) & dich[syl.nucleus] & ~syl.muta_cum_liquida]


def weights_from_lengths(syl: Syllables, lengths_at_nuclei: np.ndarray) -> np.ndarray:
    """Fill undetermined weights whose nucleus length is now known (1 long -> heavy, 0 -> light)."""
    w = syl.weights.copy()
    fill = (w == UNKNOWN) & (np.asarray(lengths_at_nuclei) >= 0) & ~syl.muta_cum_liquida
    w[fill] = np.where(np.asarray(lengths_at_nuclei)[fill] == 1, HEAVY, LIGHT)
    return w


MACRON, BREVE = "\u0304", "\u0306"


def macronize_text(text: str, planes: CharPlanes, lengths: np.ndarray) -> str:
    """``text`` with U+0304 (long) / U+0306 (short) after each dichronon of known length.

    The mark goes after the letter and any combining marks on it, so the result is
    the input with marks inserted (NFC is not applied: accents stay as written).
    """
    return macronize_offsets(text, np.asarray(planes.offsets), lengths)


def macronize_offsets(text: str, offsets: np.ndarray, lengths: np.ndarray) -> str:
    """:func:`macronize_text` given only the letters' offsets in ``text`` (all it reads of the planes)."""
    lengths = np.asarray(lengths)
    idx = np.nonzero(lengths >= 0)[0]
    if idx.size == 0:
        return text
    pieces: list[str] = []
    prev = 0
    for i in idx.tolist():  # one per marked vowel
        pos = int(offsets[i])
        ch = unicodedata.normalize("NFD", text[pos])
        end = pos + 1
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1
        mark = MACRON if lengths[i] == 1 else BREVE
        base, marks = ch[0], ch[1:] + text[pos + 1 : end]
        pieces.append(text[prev:pos] + unicodedata.normalize("NFC", base + mark + marks))
        prev = end
    pieces.append(text[prev:])
    return "".join(pieces)


def word_syllable_ends(ends: np.ndarray, first_nucleus: np.ndarray, last_nucleus: np.ndarray,
                       planes: CharPlanes, text: str | None = None) -> np.ndarray:
    """Syllable ends for display, one word at a time.

    The phonological syllables of a verse run across word ends (``πολύτροπον, ὃς``: the ν
    opens the next syllable, ``ν, ὃς``); shown per word, a syllable ends at its word's end
    whenever the next syllable's nucleus is in another word, so the consonants go back to
    their word (``πον | ὃς``). ``ends`` are the syllables' last letters, ``first_nucleus`` /
    ``last_nucleus`` their nuclei (the same but for a merged syllable). Elided consonants
    belong to the next word (:func:`word_ends`).
    """
    ends = np.asarray(ends, dtype=np.int64)
    if ends.size < 2:
        return ends.copy()
    wend = word_ends(planes, text)
    word_id = np.concatenate([[0], np.cumsum(wend)[:-1]])  # words before each letter
    word_last = np.nonzero(wend)[0]  # last letter of each word
    here = word_id[np.asarray(last_nucleus, dtype=np.int64)[:-1]]
    there = word_id[np.asarray(first_nucleus, dtype=np.int64)[1:]]
    out = ends.copy()
    out[:-1] = np.where(here == there, ends[:-1], word_last[here])
    return out
