"""``stoicheia.GreekTokenizer.v1``: spaCy's ``grc`` tokenizer that keeps elided words whole.

An apostrophe right after a Greek letter marks elision (``ἔστ’``, ``ἄλγε᾽``, ``δ'``) and is
part of the word, as in the treebanks; spaCy's defaults split it off as a closing quote
when punctuation follows (``ἔστ’,`` -> ``ἔστ``, ``’``, ``,``). Here the apostrophe-like
suffixes (U+0027, U+2019, U+02BC, U+1FBD) only split after a non-Greek character, and a
full stop or ano teleia after an elided word splits off.

An editor's supplement (:data:`SUPPLEMENT`: ``[...]`` holding only Greek letters, marks,
elision and spaces) is part of the words it restores: ``ἐνέτυχ[όν]``, ``ἀποδο[ῦ]ναι`` and
``[ἀργύριον]`` are one word each, ``δ[ι' ἐ]μοῦ`` two (``δ[ι'``, ``ἐ]μοῦ``). Its brackets are
read as letters when the text is cut into words, so spaCy's rules (punctuation, elision)
apply to the restored word. Each token keeps its supplement marked: ``token._.supplied``
is the tuple of ``(start, end)`` offsets within ``token.text`` of the supplied letters with
their brackets, ``token._.word`` the word without the brackets (``ἐνέτυχόν``), which the
morphosyntax components read; the token's NORM is that word's norm. An editor's addition of
letters the scribe left out (:data:`ADDITION`: ``ἐποίησε⟨ν⟩``, ``⟨ἂν⟩``) is marked and read the same way.

Other Leiden markup is one token per gap or editorial span: ``[...]``, ``[.4]``, ``[---]``,
``[ca. 5]``, ``[.2-5]``, an erasure ``⟦αβ⟧`` / ``〚αβ〛``, superfluous letters ``{αβ}`` and Ithaca's
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
_PUNCT = ".,;:\u00b7\u0387"

#: A stop after a closing quotation mark or parenthesis (``οἶδα».`` -> ``οἶδα``, ``»``, ``.``;
#: ``λέγεται).``: spaCy's rules split the stop only after a letter, so word, mark and stop stayed one token).
AFTER_CLOSING_QUOTE = f"(?<=[»›”\")⟩])[{_PUNCT}]"
#: One Leiden gap or editorial span on one line: ``[...]``, ``[ca. 5]``, ``[αβγ]``,
#: ``⟦αβ⟧``, ``〚αβ〛``, ``{αβ}``, ``|gap=4|`` (Ithaca).
GAP_TOKEN = re.compile(
    r"\[[^\[\]⟦⟧〚〛\n]*\]|⟦[^⟦⟧\n]*⟧|〚[^〚〛\n]*〛|\{[^{}\n]*\}|\|gap=[^|\s\[\]]*\|"
)
_GAP_OPENERS = frozenset("[⟦〚{|")
#: An editor's supplement of letters: ``[όν]``, ``[ἀργύριον]``, ``[ι' ἐ]`` (module doc).
SUPPLEMENT = re.compile(f"\\[(?=[^\\]\n]*[\u0370-\u03ff\u1f00-\u1fff])[{_GREEK}{APOSTROPHES}{_PUNCT} ]+\\]")
#: An editor's addition of letters the scribe left out (``ἐποίησε⟨ν⟩``, ``⟨ἂν⟩``): part of its word,
#: marked on the token as a supplement is.
ADDITION = re.compile(f"⟨[{_GREEK}{APOSTROPHES}]+⟩")
_MARKED = re.compile(f"{SUPPLEMENT.pattern}|{ADDITION.pattern}")
_BRACKETS = str.maketrans("", "", "[]⟨⟩")
#: A supplement's bracket next to one of these (inside it) is read as that character, else as a letter.
_PUNCT_NEXT = re.compile(f"\\[(?=[{_PUNCT} ])|(?<=[{_PUNCT} ])\\]")
#: Placeholder UPOS and tag, lemma and relation of a gap token (module doc).
GAP_TAG = "X"
GAP_LEMMA = "_"
GAP_DEP = "dep"


def is_gap_token(text: str) -> bool:
    """Whether a token's text is one whole Leiden gap or editorial span other than a
    supplement of letters (module doc)."""
    return (bool(text) and text[0] in _GAP_OPENERS and GAP_TOKEN.fullmatch(text) is not None
            and SUPPLEMENT.fullmatch(text) is None)


def supplied_spans(doc: Doc) -> list[tuple[tuple[int, int], ...]]:
    """Per token of ``doc``: the ``(start, end)`` offsets within the token's text of the
    supplied letters and their brackets (:data:`SUPPLEMENT`, :data:`ADDITION`; empty for most tokens)."""
    cache = doc.user_data.get(_SUPPLIED_KEY)
    if cache is not None and cache[0] == len(doc):
        return cast(list[tuple[tuple[int, int], ...]], cache[1])
    out: list[list[tuple[int, int]]] = [[] for _ in range(len(doc))]
    for match in _MARKED.finditer(doc.text):
        span = doc.char_span(match.start(), match.end(), alignment_mode="expand")
        for tok in span if span is not None else ():
            a, b = max(match.start(), tok.idx), min(match.end(), tok.idx + len(tok.text))
            if a < b:
                out[tok.i].append((a - tok.idx, b - tok.idx))
    result = [tuple(spans) for spans in out]
    doc.user_data[_SUPPLIED_KEY] = (len(doc), result)
    return result


def word_text(token: Token) -> str:
    """A token's word without the brackets of its supplement or addition (``ἐνέτυχ[όν]`` ->
    ``ἐνέτυχόν``, ``ἐποίησε⟨ν⟩`` -> ``ἐποίησεν``)."""
    spans = supplied_spans(token.doc)[token.i]
    if not spans:
        return token.text
    text, parts, pos = token.text, [], 0
    for a, b in spans:
        parts += [text[pos:a], text[a:b].translate(_BRACKETS)]
        pos = b
    word = "".join([*parts, text[pos:]])
    return word or token.text


def word_texts(doc: Doc) -> list[str]:
    """:func:`word_text` of every token of ``doc``."""
    spans = supplied_spans(doc)
    return [word_text(tok) if spans[tok.i] else tok.text for tok in doc]


_SUPPLIED_KEY = "stoicheia_supplied"
for _name, _getter in (("supplied", lambda tok: supplied_spans(tok.doc)[tok.i]), ("word", word_text)):
    if not Token.has_extension(_name):
        Token.set_extension(_name, getter=_getter)


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
    """``suffixes`` with each apostrophe rule limited to a position not after a Greek letter, and
    a stop split off after an elided word or a closing quote (:data:`AFTER_CLOSING_QUOTE`)."""
    plain = {"\\'", "'", "\u2019", "\u02bc", "\u1fbd"}
    kept = [s for s in suffixes if s not in plain]
    after_elision = f"(?<=[{_GREEK}][{APOSTROPHES}])[\\.\u00b7\u0387]"  # ἔστ’. -> ἔστ’ .
    return [f"(?<![{_GREEK}])[{APOSTROPHES}]", after_elision, AFTER_CLOSING_QUOTE, *kept]


def _masked(match: re.Match[str]) -> str:
    """A supplement with its brackets read as letters, or as the punctuation they touch
    (``[αν·]`` -> ``ααν··``, so the stop stays a token of its own; a bracket cut off on its
    own is then put back on its neighbour)."""
    text = match.group()
    inner = text[1:-1]
    opener = inner[0] if _PUNCT_NEXT.match(text) else "α"
    closer = inner[-1] if inner[-1] in _PUNCT else "α"
    return opener + inner + closer


class GreekTokenizer(Tokenizer):
    """spaCy's tokenizer, with every Leiden gap (:data:`GAP_TOKEN`) one token (module doc)."""

    def __call__(self, text: str) -> Doc:
        if not _GAP_OPENERS.intersection(text):
            return super().__call__(text)
        if "[" in text and SUPPLEMENT.search(text):
            return self._with_supplements(text)
        return self._with_gaps(text)

    def _with_supplements(self, text: str) -> Doc:
        """Cut ``text`` with each supplement's brackets read as letters (module doc)."""
        masked = SUPPLEMENT.sub(_masked, text)
        cut = self._with_gaps(masked)
        words: list[str] = []
        spaces: list[bool] = []
        glue = False  # a lone "[" waits for the next token
        for t in cut:
            form = text[t.idx:t.idx + len(t.text)]
            if glue:
                words[-1] += form
                spaces[-1] = bool(t.whitespace_)
            elif form == "]" and words and not spaces[-1]:
                words[-1] += form
                spaces[-1] = bool(t.whitespace_)
                continue
            else:
                words.append(form)
                spaces.append(bool(t.whitespace_))
            glue = form == "[" and not t.whitespace_
        doc = Doc(self.vocab, words=words, spaces=spaces)
        for tok, form in zip(doc, word_texts(doc), strict=True):
            if form != tok.text:
                tok.norm_ = self.vocab[form].norm_
        return doc

    def _with_gaps(self, text: str) -> Doc:
        """Cut ``text`` with every gap one token (module doc)."""
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
