"""``stoicheia.GreekTokenizer.v1``: spaCy's ``grc`` tokenizer that keeps elided words whole.

An apostrophe right after a Greek letter marks elision (``ἔστ’``, ``ἄλγε᾽``, ``δ'``) and is
part of the word, as in the treebanks; spaCy's defaults split it off as a closing quote
when punctuation follows (``ἔστ’,`` -> ``ἔστ``, ``’``, ``,``). Here the apostrophe-like
suffixes (U+0027, U+2019, U+02BC, U+1FBD) only split after a non-Greek character, and a
full stop or ano teleia after an elided word splits off.

Leiden markup is one token per gap or editorial span: ``[...]``, ``[.4]``, ``[---]``,
``[ca. 5]``, ``[.2-5]``, a supplement ``[αβγ]`` (also inside a word: ``ἔδοξ[εν]`` ->
``ἔδοξ``, ``[εν]``), an erasure ``⟦αβ⟧`` / ``〚αβ〛``, superfluous letters ``{αβ}`` and Ithaca's
``|gap=4|``. Such a token (:func:`is_gap_token`) is text the heads cannot read as a word,
so the morphosyntax components give it a documented placeholder instead of a prediction:
``pos_`` and ``tag_`` :data:`GAP_TAG` (``X``), ``lemma_`` :data:`GAP_LEMMA` (``_``), and an
arc ``dep`` (:data:`GAP_DEP`) to the previous word of its sentence (the next one at the
start); no word takes a gap as its head, and a gap never ends or splits a sentence. The
encoder reads ``doc.text`` itself, so it still sees the gap as unknown (MASK) letters.
Every other rule is spaCy's, and ``doc.text`` is always the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from re import Pattern
from typing import Any, cast

from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.tokens import Doc, Token
from spacy.util import compile_suffix_regex, registry

#: Characters used for elision in Greek editions.
APOSTROPHES = "'\u2019\u02bc\u1fbd"
_GREEK = "\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f"

#: One Leiden gap or editorial span on one line: ``[...]``, ``[ca. 5]``, ``[αβγ]``,
#: ``⟦αβ⟧``, ``〚αβ〛``, ``{αβ}``, ``|gap=4|`` (Ithaca).
GAP_TOKEN = re.compile(
    r"\[[^\[\]⟦⟧〚〛\n]*\]|⟦[^⟦⟧\n]*⟧|〚[^〚〛\n]*〛|\{[^{}\n]*\}|\|gap=[^|\s\[\]]*\|"
)
_GAP_OPENERS = frozenset("[⟦〚{|")
#: Placeholder UPOS and tag, lemma and relation of a gap token (module doc).
GAP_TAG = "X"
GAP_LEMMA = "_"
GAP_DEP = "dep"


def is_gap_token(text: str) -> bool:
    """Whether a token's text is one whole Leiden gap or editorial span (module doc)."""
    return bool(text) and text[0] in _GAP_OPENERS and GAP_TOKEN.fullmatch(text) is not None


def gap_flags(doc: Doc) -> list[bool]:
    """Per token of ``doc``: whether it is a gap token."""
    return [is_gap_token(tok.text) for tok in doc]


def placeholder_head(i: int, start: int, end: int, gaps: Sequence[bool]) -> int:
    """The word a gap token ``i`` of the sentence ``[start, end)`` attaches to: the previous
    non-gap token, else the next one, else the sentence's first token (all gaps)."""
    for j in range(i - 1, start - 1, -1):
        if not gaps[j]:
            return j
    for j in range(i + 1, end):
        if not gaps[j]:
            return j
    return start


def mark_gap(token: Token) -> None:
    """Give a gap token its placeholder tag, UPOS, empty morphology and lemma."""
    token.tag_ = GAP_TAG
    token.pos_ = GAP_TAG
    cast(Any, token).set_morph(None)
    token.lemma_ = GAP_LEMMA


def elision_safe_suffixes(suffixes: list[str | Pattern[str]]) -> list[str | Pattern[str]]:
    """``suffixes`` with each apostrophe rule limited to a position not after a Greek letter."""
    plain = {"\\'", "'", "\u2019", "\u02bc", "\u1fbd"}
    kept = [s for s in suffixes if s not in plain]
    after_elision = f"(?<=[{_GREEK}][{APOSTROPHES}])[\\.\u00b7\u0387]"  # ἔστ’. -> ἔστ’ .
    return [f"(?<![{_GREEK}])[{APOSTROPHES}]", after_elision, *kept]


class GreekTokenizer(Tokenizer):
    """spaCy's tokenizer, with every Leiden gap (:data:`GAP_TOKEN`) one token (module doc)."""

    def __call__(self, text: str) -> Doc:
        if not _GAP_OPENERS.intersection(text):
            return super().__call__(text)
        pieces: list[Doc] = []
        pos = 0
        for match in GAP_TOKEN.finditer(text):
            if match.start() > pos:
                pieces.append(super().__call__(text[pos:match.start()]))
            end = match.end()
            space = text.startswith(" ", end)  # one following space is the gap's whitespace
            pieces.append(Doc(self.vocab, words=[match.group()], spaces=[space]))
            pos = end + space
        if not pieces:
            return super().__call__(text)
        if pos < len(text):
            pieces.append(super().__call__(text[pos:]))
        # only the tokens, their whitespace and norms: no sentence start at each piece
        return Doc.from_docs(pieces, ensure_whitespace=False, attrs=["NORM"])


@registry.tokenizers("stoicheia.GreekTokenizer.v1")
def create_greek_tokenizer() -> Callable[[Language], Tokenizer]:
    """spaCy's rule-based tokenizer for ``grc`` with elision kept on the word and one token
    per Leiden gap (module doc)."""

    def make(nlp: Language) -> Tokenizer:
        base: Tokenizer = registry.tokenizers.get("spacy.Tokenizer.v1")()(nlp)
        rules = elision_safe_suffixes(list(nlp.Defaults.suffixes or []))
        return GreekTokenizer(nlp.vocab, rules=base.rules, prefix_search=base.prefix_search,
                              suffix_search=compile_suffix_regex(rules).search,
                              infix_finditer=base.infix_finditer, token_match=base.token_match,
                              url_match=base.url_match)

    return make
