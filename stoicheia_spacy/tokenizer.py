"""``stoicheia.GreekTokenizer.v1``: spaCy's ``grc`` tokenizer that keeps elided words whole.

An apostrophe right after a Greek letter marks elision (``ἔστ’``, ``ἄλγε᾽``, ``δ'``) and is
part of the word, as in the treebanks; spaCy's defaults split it off as a closing quote
when punctuation follows (``ἔστ’,`` -> ``ἔστ``, ``’``, ``,``). Here the apostrophe-like
suffixes (U+0027, U+2019, U+02BC, U+1FBD) only split after a non-Greek character, and a
full stop or ano teleia after an elided word splits off. Every other rule is spaCy's.
"""

from __future__ import annotations

from collections.abc import Callable
from re import Pattern

from spacy.language import Language
from spacy.tokenizer import Tokenizer
from spacy.util import compile_suffix_regex, registry

#: Characters used for elision in Greek editions.
APOSTROPHES = "'\u2019\u02bc\u1fbd"
_GREEK = "\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f"


def elision_safe_suffixes(suffixes: list[str | Pattern[str]]) -> list[str | Pattern[str]]:
    """``suffixes`` with each apostrophe rule limited to a position not after a Greek letter."""
    plain = {"\\'", "'", "\u2019", "\u02bc", "\u1fbd"}
    kept = [s for s in suffixes if s not in plain]
    after_elision = f"(?<=[{_GREEK}][{APOSTROPHES}])[\\.\u00b7\u0387]"  # ἔστ’. -> ἔστ’ .
    return [f"(?<![{_GREEK}])[{APOSTROPHES}]", after_elision, *kept]


@registry.tokenizers("stoicheia.GreekTokenizer.v1")
def create_greek_tokenizer() -> Callable[[Language], Tokenizer]:
    """spaCy's rule-based tokenizer for ``grc`` with elision kept on the word (module doc)."""

    def make(nlp: Language) -> Tokenizer:
        base: Tokenizer = registry.tokenizers.get("spacy.Tokenizer.v1")()(nlp)
        rules = elision_safe_suffixes(list(nlp.Defaults.suffixes or []))
        base.suffix_search = compile_suffix_regex(rules).search
        return base

    return make
