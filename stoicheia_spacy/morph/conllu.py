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


def _misc(token: Any, form: str, last: bool) -> str:
    """MISC of a word: ``LeidenForm`` (the token as edited, when a supplement is marked on it)
    and ``SpaceAfter=No``."""
    fields = [f"LeidenForm={token.text}"] if form != token.text else []
    if not (token.whitespace_ or last):
        fields.append("SpaceAfter=No")
    return "|".join(fields) or "_"


def span_words(sent: Iterable[Any]) -> list[dict[str, Any]]:
    """CoNLL-U words of a spaCy sentence (a ``Span`` or one-sentence ``Doc``), the ten fields
    in CoNLL-U order: FORM the whole word (an editor's supplement without its brackets, the
    Leiden form as ``LeidenForm`` in MISC: :func:`~stoicheia_spacy.tokenizer.word_text`), UPOS
    from ``pos_``, XPOS from ``tag_``, feats from ``morph``, heads 1-based within the sentence
    (0 = root), ``SpaceAfter=No`` in MISC; so predicted and gold Docs with the same words can
    be scored, and a Doc written (:func:`to_conllu`)."""
    words = list(sent)
    last = len(words) - 1
    forms = [word_text(t) for t in words]
    return [{"id": k, "form": form, "lemma": t.lemma_ or "_", "upos": t.pos_ or "_", "xpos": t.tag_ or "_",
             "feats": str(t.morph) or "_", "head": 0 if t.head.i == t.i else t.head.i - t.sent.start + 1,
             "deprel": t.dep_ or "_", "deps": "_", "misc": _misc(t, form, k - 1 == last)}
            for k, (t, form) in enumerate(zip(words, forms, strict=True), 1)]


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
            greedy = release["decode"] == "paper"
            for word, tok in zip(words, sent, strict=True):
                head = tok._.greedy_head if greedy else tok.head.i
                word["head"] = 0 if head == tok.i else head - sent.start + 1
                word["deprel"] = (tok._.greedy_dep if greedy else tok.dep_) or "_"
        if not parsed:
            for word in words:
                word["head"] = None
        metadata = {"newdoc id": doc_id} if doc_id and k == 1 else {}
        metadata.update({"sent_id": f"{doc_id + '-' if doc_id else ''}{k}", "text": sent.text.strip()})
        tokens = [conllu.models.Token(word) for word in words]
        blocks.append(conllu.models.TokenList(tokens, metadata=conllu.models.Metadata(metadata)).serialize())
    return "".join(blocks)
