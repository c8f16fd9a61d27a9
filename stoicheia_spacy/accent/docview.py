"""``doc._.accent_doc``: the accentuated, divided words of a Doc as a Doc of their own.

A pipe cannot change ``doc.text``, so for unaccented *scriptio continua* the
``stoicheia_accentuator`` pipe writes the divided, accented rendering to
``doc._.accent_text``; ``doc._.accent_doc`` (a getter, built on access) tokenizes that
rendering as the ``stoicheia.Segmenter.v1`` tokenizer does -- one token per word (an
elided word keeps its ``’``), punctuation marks and Leiden gap markup (``[.4]``) as tokens
of their own -- and carries ``_.source_text`` (the original ``doc.text``),
``_.source_alignment`` and ``_.accent_planes``::

    doc = nlp("εναρχηηνολογοσκαιολογοσηνπροστονθεον")
    [t.text for t in doc._.accent_doc]      # ['ἐν', 'ἀρχῇ', 'ἦν', 'ὁ', 'λόγος', ...]

None when the Doc was not accentuated.
"""

from __future__ import annotations

import re

from spacy.tokens import Doc

from ..codec import PUNCT_OUT

_PUNCT = "".join(sorted({c for c in PUNCT_OUT if c}))
#: gap markup (``[.4]``, ``[---]``, ``|gap=3|``) or a word or one punctuation mark
_TOKEN = re.compile(rf"\[[^\]\s]*\]|\|gap=[^|\s]*\||[^\s{re.escape(_PUNCT)}\[|]+|[{re.escape(_PUNCT)}\[|]")

for _name in ("source_text", "source_alignment", "accent_planes"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)


def words_and_spaces(text: str, pattern: re.Pattern[str]) -> tuple[list[str], list[bool]]:
    """spaCy ``words``/``spaces`` of rendered text: the matches of ``pattern``, each followed
    by a space or not."""
    words: list[str] = []
    spaces: list[bool] = []
    for m in pattern.finditer(text):
        words.append(m.group())
        spaces.append(m.end() < len(text) and text[m.end()].isspace())
    return words, spaces


def view_words(text: str) -> tuple[list[str], list[bool]]:
    """spaCy ``words``/``spaces`` of an accentuated rendering (see the module doc)."""
    return words_and_spaces(text, _TOKEN)


def accent_doc(doc: Doc) -> Doc | None:
    """The Doc view of ``doc._.accent_text`` (see the module doc)."""
    rendered = doc._.accent_text if Doc.has_extension("accent_text") else None
    if rendered is None:
        return None
    words, spaces = view_words(rendered)
    view = Doc(doc.vocab, words=words, spaces=spaces)
    view._.source_text = doc.text
    view._.source_alignment = doc._.source_alignment
    view._.accent_planes = doc._.accent_planes
    return view


if not Doc.has_extension("accent_doc"):
    Doc.set_extension("accent_doc", getter=accent_doc)

__all__ = ["accent_doc", "view_words"]
