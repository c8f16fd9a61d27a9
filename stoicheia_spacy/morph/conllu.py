"""CoNLL-U writing of parsed Docs: the ten fields of a word (:func:`span_words`) and a Doc as
CoNLL-U text (:func:`to_conllu`), including the sentences a release decoder of the parser read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import conllu
import numpy as np

from ..tokenizer import word_text

#: ``doc.user_data`` key a release decoder of the parser writes: ``{"decode", "sentences"}``.
RELEASE_PARSE = "stoicheia_release_parse"


#: UD's escapes of the characters ``SpacesAfter`` writes
_SPACE_ESCAPES = str.maketrans({" ": "\\s", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"})


def spacing_misc(after: str | None) -> dict[str, str]:
    """The MISC fields of what follows a word before the next (``after``; None for the
    sentence's last word): none for one space, ``SpaceAfter=No`` for none, else UD's
    ``SpacesAfter`` (a line break between verses is ``SpacesAfter=\\n``)."""
    if after == "":
        return {"SpaceAfter": "No"}
    if after is None or after == " ":
        return {}
    return {"SpacesAfter": after.translate(_SPACE_ESCAPES)}


def _misc(token: Any, form: str, after: str | None) -> str:
    """MISC of a word: ``LeidenForm`` (the token as edited, when a supplement is marked on it)
    and its :func:`spacing_misc`."""
    fields = [f"LeidenForm={token.text}"] if form != token.text else []
    fields += [f"{key}={value}" for key, value in spacing_misc(after).items()]
    return "|".join(fields) or "_"


def word_tokens(sent: Iterable[Any]) -> list[Any]:
    """The tokens of a sentence that are CoNLL-U words: all but whitespace tokens (a line break
    between verses is a token of its own in spaCy, and no word in CoNLL-U)."""
    return [t for t in sent if not t.is_space]


def _head(token: Any) -> int:
    return int(token.head.i)


def _greedy_head(token: Any) -> int:
    return int(token._.greedy_head)


def _heads(words: list[Any], head_of: Any) -> list[int]:
    """1-based CoNLL-U heads of ``words`` (0 = root) from ``head_of(token)`` (a token index of
    the Doc); a head that is a whitespace token passes on to that token's own head."""
    if not words:
        return []
    number = {t.i: k for k, t in enumerate(words, 1)}
    doc = words[0].doc
    out = []
    for tok in words:
        head, seen = head_of(tok), 0
        while head != tok.i and head not in number and seen < len(doc):
            nxt = head_of(doc[head])
            head, seen = (tok.i if nxt == head else nxt), seen + 1
        out.append(0 if head == tok.i or head not in number else number[head])
    return out


def span_words(sent: Iterable[Any]) -> list[dict[str, Any]]:
    """CoNLL-U words of a spaCy sentence (a ``Span`` or one-sentence ``Doc``), the ten fields
    in CoNLL-U order: FORM the whole word (an editor's supplement without its brackets, the
    Leiden form as ``LeidenForm`` in MISC: :func:`~stoicheia_spacy.tokenizer.word_text`), UPOS
    from ``pos_``, XPOS from ``tag_``, feats from ``morph``, heads 1-based within the sentence
    (0 = root), ``SpaceAfter=No`` or ``SpacesAfter`` in MISC; whitespace tokens are no words
    (:func:`word_tokens`). So predicted and gold Docs with the same words can be scored, and a
    Doc written (:func:`to_conllu`)."""
    words = word_tokens(sent)
    forms = [word_text(t) for t in words]
    heads = _heads(words, _head)
    text = words[0].doc.text if words else ""
    afters: list[str | None] = [text[t.idx + len(t):n.idx] for t, n in zip(words[:-1], words[1:], strict=True)] + [None]
    return [{"id": k, "form": form, "lemma": t.lemma_ or "_", "upos": t.pos_ or "_", "xpos": t.tag_ or "_",
             "feats": str(t.morph) or "_", "head": head, "deprel": t.dep_ or "_", "deps": "_",
             "misc": _misc(t, form, after)}
            for k, (t, form, head, after) in enumerate(zip(words, forms, heads, afters, strict=True), 1)]


def to_conllu(doc: Any, doc_id: str | None = None) -> str:
    """A Doc as CoNLL-U text (written with the ``conllu`` package), one block per sentence.

    Sentences come from the parse (or sentence starts; else the whole Doc is one);
    HEAD and DEPREL are ``_`` when the Doc has no dependency annotation. A Doc parsed by a
    release decoder (``research``/``paper``, :mod:`stoicheia_spacy.morph.parser`) is
    written with the sentences the parser read, every word on the root with HEAD 0 (a
    research tree may have several), and, under ``paper``, the greedy heads and relations.
    """
    parsed = doc.has_annotation("DEP")
    release = doc.user_data.get(RELEASE_PARSE) if parsed else None
    if release:
        bounds = np.cumsum([0, *release["sentences"]])
        sents = [doc[int(a):int(b)] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    else:
        sents = list(doc.sents) if parsed or doc.has_annotation("SENT_START") else [doc[:]]
    blocks = []
    for k, sent in enumerate(sents, 1):
        words = span_words(sent)
        if release:
            toks = word_tokens(sent)
            greedy = release["decode"] == "paper"
            heads = _heads(toks, _greedy_head if greedy else _head)
            for word, tok, head in zip(words, toks, heads, strict=True):
                word["head"] = head
                word["deprel"] = (tok._.greedy_dep if greedy else tok.dep_) or "_"
        if not parsed:
            for word in words:
                word["head"] = None
        metadata = {"newdoc id": doc_id} if doc_id and k == 1 else {}
        metadata.update({"sent_id": f"{doc_id + '-' if doc_id else ''}{k}", "text": " ".join(sent.text.split("\n")).strip()})
        tokens = [conllu.models.Token(word) for word in words]
        blocks.append(conllu.models.TokenList(tokens, metadata=conllu.models.Metadata(metadata)).serialize())
    return "".join(blocks)
