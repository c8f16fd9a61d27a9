"""Map a 9-position AGDT tag (and lemma) to a UD UPOS and UD FEATS, following the
conventions of UD_Ancient_Greek-Perseus (which was converted from AGDT).

UPOS from the part of speech: ``l`` DET, ``n`` NOUN, ``a`` ADJ, ``p`` PRON, ``v`` VERB
(AUX when the lemma is εἰμί), ``d`` ADV, ``r`` ADP, ``c`` CCONJ (SCONJ for the
subordinators in :data:`SCONJ_LEMMAS`), ``m`` NUM, ``i`` INTJ, ``g`` ADV, ``u`` PUNCT,
``x``/``-`` X.

FEATS position by position: person ``Person=1/2/3``; number ``Number=Sing/Plur/Dual``;
tense ``p`` Pres, ``i`` Aspect=Imp|Tense=Past, ``r`` Aspect=Perf|Tense=Past, ``l``
Tense=Pqp, ``t`` Aspect=Perf|Tense=Fut, ``f`` Fut, ``a`` Past; mood ``i/s/o/m``
Mood=Ind/Sub/Opt/Imp with VerbForm=Fin, ``n`` VerbForm=Inf, ``p`` VerbForm=Part, ``g``
VerbForm=Gdv; voice ``a`` Act, ``p`` Pass, ``m`` and ``e`` (medio-passive) Mid; gender
``m/f/n`` Masc/Fem/Neut (``c`` common: no feature, as UD Perseus); case ``n/g/d/a/v``
Nom/Gen/Dat/Acc/Voc; degree ``c`` Cmp, ``s`` Sup.

Known divergences from UD Perseus gold (measured in ``tests/lab/treebanks/test_agdt_to_ud.py``
on UD Perseus dev/test sentences matched to AGDT 2.1): UD Perseus was converted from an
earlier AGDT release, so where AGDT 2.1 re-tagged a word its gold differs: particles are
``g`` in 2.1 but ``d``/``c`` in UD (γάρ ADV vs δέ/τε CCONJ: we map ``g`` to ADV, which
is UD Perseus's majority); καί/δέ as ``d`` (adverbial "also") vs CCONJ; articles are
DET in both, but UD never uses PROPN (AGDT does not mark proper nouns) and has NUM only
for ``m``; AUX is εἰμί only (copula and auxiliary alike, as in UD Perseus); ἐπεί is
CCONJ as in UD Perseus (linguistically a subordinator). Features follow the tag exactly:
UD Perseus has ``Case=Loc`` for a few locatives (-ησι) whose AGDT case ``l`` is outside
the 6-class case inventory (so ``-`` here), and no VerbForm for the few participles
mis-tagged with mood ``g``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from ..errors import InvalidTagError
from .agdt_tags import TAG_LENGTH

UPOS_TAGS: tuple[str, ...] = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
    "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip

_POS_TO_UPOS = {
    "l": "DET", "n": "NOUN", "a": "ADJ", "p": "PRON", "v": "VERB", "d": "ADV", "r": "ADP",
    "c": "CCONJ", "m": "NUM", "i": "INTJ", "g": "ADV", "u": "PUNCT", "x": "X", "-": "X",
}  # fmt: skip

#: Lemmas of ``c`` words that UD tags SCONJ.
SCONJ_LEMMAS = frozenset(
    "ὡς ὥς εἰ ὅτι ὥστε ἐάν ἤν ἄν ὅπως ὥσπερ ἵνα ὅτε ὅταν πρίν διότι ἕως εἴπερ πλήν μέχρι "
    "ἄχρι ὁπότε ὁπόταν ἐπειδή ἐπειδάν ἐπάν ἡνίκα ὁπότερον ὅπου ὅθεν ἐπείπερ καθότι "
    "ὅπερ ἐάνπερ κἄν εὖτε καθά διόπερ".split()
)
AUX_LEMMAS = frozenset({"εἰμί"})

_FEATS: tuple[dict[str, str], ...] = (
    {},
    {"1": "Person=1", "2": "Person=2", "3": "Person=3"},
    {"s": "Number=Sing", "p": "Number=Plur", "d": "Number=Dual"},
    {
        "p": "Tense=Pres", "i": "Aspect=Imp|Tense=Past", "r": "Aspect=Perf|Tense=Past",
        "l": "Tense=Pqp", "t": "Aspect=Perf|Tense=Fut", "f": "Tense=Fut", "a": "Tense=Past",
    },
    {
        "i": "Mood=Ind|VerbForm=Fin", "s": "Mood=Sub|VerbForm=Fin", "o": "Mood=Opt|VerbForm=Fin",
        "m": "Mood=Imp|VerbForm=Fin", "n": "VerbForm=Inf", "p": "VerbForm=Part",
        "g": "VerbForm=Gdv",
    },
    {"a": "Voice=Act", "p": "Voice=Pass", "m": "Voice=Mid", "e": "Voice=Mid"},
    {"m": "Gender=Masc", "f": "Gender=Fem", "n": "Gender=Neut"},
    {"n": "Case=Nom", "g": "Case=Gen", "d": "Case=Dat", "a": "Case=Acc", "v": "Case=Voc"},
    {"c": "Degree=Cmp", "s": "Degree=Sup"},
)  # fmt: skip

_DIGITS = re.compile(r"\d+$")


def _lemma_key(lemma: str) -> str:
    return _DIGITS.sub("", unicodedata.normalize("NFC", lemma.strip()))


def agdt_to_upos(tag: str, lemma: str = "") -> str:
    """UD UPOS of an AGDT tag (and lemma, for AUX and SCONJ); raises
    :class:`InvalidTagError` on a tag that is not 9 characters."""
    if not isinstance(tag, str) or len(tag) != TAG_LENGTH:
        raise InvalidTagError(f"not a 9-position AGDT tag: {tag!r}")
    upos = _POS_TO_UPOS.get(tag[0], "X")
    if upos == "VERB" and _lemma_key(lemma) in AUX_LEMMAS:
        return "AUX"
    if upos == "CCONJ" and _lemma_key(lemma) in SCONJ_LEMMAS:
        return "SCONJ"
    return upos


@lru_cache(maxsize=8192)
def agdt_to_feats(tag: str) -> str:
    """UD FEATS string (features sorted by name, ``_`` when empty) of an AGDT tag."""
    if not isinstance(tag, str) or len(tag) != TAG_LENGTH:
        raise InvalidTagError(f"not a 9-position AGDT tag: {tag!r}")
    feats: list[str] = []
    for i in range(1, TAG_LENGTH):
        value = _FEATS[i].get(tag[i])
        if value:
            feats.extend(value.split("|"))
    if not feats:
        return "_"
    return "|".join(sorted(feats, key=lambda f: f.split("=", 1)[0].lower()))


def map_tags(tags: Sequence[str], lemmas: Sequence[str]) -> tuple[list[str], list[str]]:
    """UPOS and FEATS lists for parallel tag and lemma lists."""
    if len(tags) != len(lemmas):
        raise InvalidTagError(f"{len(tags)} tags but {len(lemmas)} lemmas")
    return [agdt_to_upos(t, lem) for t, lem in zip(tags, lemmas, strict=True)], [
        agdt_to_feats(t) for t in tags
    ]
