"""Planes of a Doc built token by token, as the released tagger-parser was trained to read them.

The research treebank route (the one behind the released tagger-parser) encodes every
syntactic word on its own and concatenates the words of a sentence; it does not read
running text. So, with the encoder setting ``planes = "tokens"``:

- only a token with a Greek letter is a word (an *encodable* token), unless Latin letters
  make up 5 % or more of its letters; its Greek letters are the positions, with their
  capitals;
- every combining mark after a letter belongs to that letter, whatever stands between:
  a breathing written on a consonant as the elision mark (``καθ̓``, ``δ̓``) or on a
  final ``ῤ`` is a smooth breathing on that letter (our text codec reads it as elision
  and keeps no breathing); marks before the token's first letter are ignored;
- the boundary plane is 0 inside a word, 1 at a word's last letter and 2 at the last
  letter of a sentence (the last word of each sentence of
  :func:`~stoicheia_spacy.encoder.token_planes.sentence_lengths`, the sentences the parser reads:
  the Doc's sentence starts when set, e.g. one sentence per line of pre-tokenized input,
  else cuts after sentence-final punctuation);
- the punctuation plane is 0 except on a word's last letter, which takes the highest
  class of the non-Greek tokens that follow it (a comma, a high dot, ...), so
  punctuation inside a word is not read;
- a token without a Greek letter has no letters (downstream components give it no word
  slot); no Leiden markup is read.

Within a token, letters, capitals and offsets come from :func:`stoicheia_spacy.codec.encode_planes`
and only the diacritics are re-read with the rule above.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

import numpy as np
from spacy.tokens import Doc

from ..alphabet import BND_SENT_END, BND_WORD_END, PUNCT_NONE
from ..codec import CharPlanes, encode_planes
from ..codec.tables import PUNCT_CLASS
from .types import StoicheiaDocData

if TYPE_CHECKING:  # pragma: no cover
    from ..codec import CharPlanes

_ACCENT = {"\u0301": 1, "\u0341": 1, "\u0300": 2, "\u0340": 2, "\u0342": 3, "\u0302": 3}
_BREATHING = {"\u0313": 1, "\u0343": 1, "\u0314": 2}
_IOTA, _DIAERESIS = "\u0345", "\u0308"


def _dia(segment: str) -> int:
    """The diacritic id of the marks in ``segment`` (a letter and what follows it up to the
    next letter): ``((accent * 3 + breathing) * 2 + iota) * 2 + diaeresis``; for each kind
    the last of acute < grave < circumflex (resp. smooth < rough) present wins."""
    marks = set(unicodedata.normalize("NFD", segment))
    accent = max((v for k, v in _ACCENT.items() if k in marks), default=0)
    breathing = max((v for k, v in _BREATHING.items() if k in marks), default=0)
    return ((accent * 3 + breathing) * 2 + int(_IOTA in marks)) * 2 + int(_DIAERESIS in marks)


def punct_class(text: str) -> int:
    """The highest punctuation class (:data:`~stoicheia_spacy.codec.tables.PUNCT_CLASS`) in ``text``."""
    return max((PUNCT_CLASS.get(unicodedata.normalize("NFD", ch), PUNCT_NONE) for ch in text), default=PUNCT_NONE)


#: The research encoder drops a word whose Greek letters are fewer than this share of its letters.
MIN_GREEK_RATIO = 0.95


def word_planes(text: str) -> CharPlanes | None:
    """The codec planes of one token's text, or None when it is no word (module doc)."""
    planes = encode_planes(text)
    n = len(planes.letters)
    if not n:
        return None
    latin = sum("a" <= ch <= "z" for ch in unicodedata.normalize("NFD", text).lower())
    return planes if n / (n + latin) >= MIN_GREEK_RATIO else None


#: Tokens made only of these characters end a sentence when a Doc has no sentence starts.
SENTENCE_FINAL = frozenset(".;;·· !?")


def sentence_lengths(doc: Doc) -> list[int]:
    """Token counts of a Doc's sentences: its sentence starts when set (a senter, gold
    sentences), else cut after tokens made only of sentence-final punctuation
    (``. ; ; · ·  ! ?``), the last sentence running to the end of the Doc."""
    n = len(doc)
    if n == 0:
        return []
    if doc.has_annotation("SENT_START"):
        starts = [i for i, tok in enumerate(doc) if i == 0 or tok.is_sent_start]
    else:
        starts = [0] + [i + 1 for i, tok in enumerate(doc[:-1]) if set(tok.text) <= SENTENCE_FINAL and tok.text]
    bounds = [*starts, n]
    return [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def token_doc_inputs(doc: Doc) -> StoicheiaDocData:
    """:class:`StoicheiaDocData` of ``doc`` with the token-by-token planes (module doc)."""
    parts: list[CharPlanes] = []
    owner: list[int] = []
    sent_ends = set((np.cumsum(sentence_lengths(doc)) - 1).tolist())
    for tok in doc:
        word = word_planes(tok.text)
        if word is not None:
            planes, n = word, len(word.letters)
            ends = list(planes.offsets[1:]) + [len(tok.text)]
            dia = np.array([_dia(tok.text[int(a):int(b)]) for a, b in zip(planes.offsets, ends, strict=True)],
                           dtype=np.uint8)
            boundary = np.zeros(n, dtype=np.uint8)
            boundary[-1] = BND_WORD_END
            parts.append(CharPlanes(planes.letters, boundary, dia, planes.capitals, np.zeros(n, dtype=np.uint8),
                                    planes.offsets + tok.idx))
            owner.append(tok.i)
        elif parts:
            cls = punct_class(tok.text)
            last = parts[-1]
            last.punctuation[-1] = max(int(last.punctuation[-1]), cls)
        if parts and tok.i in sent_ends:
            parts[-1].boundary[-1] = BND_SENT_END
    if parts:
        parts[-1].boundary[-1] = BND_SENT_END
        planes = CharPlanes(*(np.concatenate([getattr(p, name) for p in parts]) for name in
                              ("letters", "boundary", "diacritics", "capitals", "punctuation", "offsets")))
    else:
        planes = encode_planes("")
    lengths = np.zeros(len(doc), dtype=np.int64)
    for i, p in zip(owner, parts, strict=True):
        lengths[i] = len(p.letters)
    letter_token = np.repeat(np.arange(len(doc), dtype=np.int64), lengths)
    return StoicheiaDocData(planes, letter_token, lengths, inputs=planes)


__all__ = ["MIN_GREEK_RATIO", "SENTENCE_FINAL", "punct_class", "sentence_lengths", "token_doc_inputs", "word_planes"]
