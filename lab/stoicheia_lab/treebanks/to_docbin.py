"""Convert harmonised sentences to spaCy ``Doc``/``DocBin`` for training the morphosyntax
components.

Per token: ``tag_`` = the AGDT tag, ``dep_`` = the AGDT relation (``relations="base"``
strips ``_CO``/``_AP``/``_PA``, giving the 24 labels of :data:`.harmonise.BASE_RELATIONS`),
``head`` from the tree (the sentence root is its own head, as in spaCy), ``lemma_`` the
cleaned lemma, ``pos_`` and ``morph`` from :mod:`.agdt_to_ud`. Sentences are packed
``sents_per_doc`` to a Doc; sentence starts follow from the trees (one tree per
sentence), and are also written as ``SENT_START``. A space follows every word except
before punctuation and at the end of a Doc.

Attributes are written with one ``Doc.from_array`` call per Doc from hash arrays built
with dictionaries of the (few thousand) distinct tags/relations/lemmas, so converting
the ~1.5 M words of the four treebanks takes well under a minute per pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, cast

import numpy as np
from spacy.attrs import DEP, HEAD, LEMMA, MORPH, POS, TAG
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from stoicheia_spacy.errors import TreebankError
from stoicheia_spacy.morph.agdt_to_ud import agdt_to_feats, agdt_to_upos

from .harmonise import Sentence, base_relation

_ATTRS = [TAG, POS, MORPH, LEMMA, HEAD, DEP]


class _Hasher:
    """Caches of string -> hash for one vocab."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self.strings: dict[str, int] = {}
        self.morphs: dict[str, int] = {}
        self.upos: dict[tuple[str, str], int] = {}

    def string(self, text: str) -> int:
        value = self.strings.get(text)
        if value is None:
            value = self.strings[text] = self.vocab.strings.add(text)
        return value

    def morph(self, tag: str) -> int:
        value = self.morphs.get(tag)
        if value is None:
            feats = agdt_to_feats(tag)
            value = self.morphs[tag] = self.vocab.morphology.add("" if feats == "_" else feats)
        return value

    def pos(self, tag: str, lemma: str) -> int:
        key = (tag[0], lemma) if tag[0] in "vc" else (tag[0], "")
        value = self.upos.get(key)
        if value is None:
            value = self.upos[key] = POS_IDS[agdt_to_upos(tag, lemma)]
        return value


def _check(sentence: Sentence) -> None:
    n = len(sentence.forms)
    lengths = {
        len(sentence.lemmas),
        len(sentence.tags),
        len(sentence.relations),
        len(sentence.heads),
    }
    if n == 0 or lengths != {n}:
        raise TreebankError(
            f"sentence {sentence.doc_id}#{sentence.sent_id} has ragged or empty fields"
        )
    if sum(1 for h in sentence.heads if h == 0) != 1 or any(h < 0 or h > n for h in sentence.heads):
        raise TreebankError(
            f"sentence {sentence.doc_id}#{sentence.sent_id} is not a single-root tree"
        )


def sentences_to_doc(
    vocab: Vocab,
    sentences: Sequence[Sentence],
    *,
    relations: Literal["full", "base"] = "full",
    _hasher: _Hasher | None = None,
) -> Doc:
    """One Doc holding ``sentences`` (each a single-root tree, see :func:`.harmonise`)."""
    if not sentences:
        raise TreebankError("cannot build a Doc from no sentences")
    hasher = _hasher or _Hasher(vocab)
    words: list[str] = []
    tags: list[str] = []
    lemmas: list[str] = []
    deps: list[str] = []
    heads: list[int] = []
    for sent in sentences:
        _check(sent)
        offset = len(words)
        words.extend(sent.forms)
        tags.extend(sent.tags)
        lemmas.extend(sent.lemmas)
        deps.extend(
            sent.relations if relations == "full" else [base_relation(r) for r in sent.relations]
        )
        heads.extend(offset + (h - 1 if h > 0 else i) for i, h in enumerate(sent.heads))
    n = len(words)
    is_punct = np.fromiter((t[0] == "u" for t in tags), dtype=bool, count=n)
    spaces = np.ones(n, dtype=bool)
    spaces[:-1] = ~is_punct[1:]
    spaces[-1] = False
    doc = Doc(vocab, words=words, spaces=spaces.tolist())
    arr = np.empty((n, len(_ATTRS)), dtype=np.uint64)
    arr[:, 0] = np.fromiter((hasher.string(t) for t in tags), dtype=np.uint64, count=n)
    arr[:, 1] = np.fromiter(
        (hasher.pos(t, lem) for t, lem in zip(tags, lemmas, strict=True)), dtype=np.uint64, count=n
    )
    arr[:, 2] = np.fromiter((hasher.morph(t) for t in tags), dtype=np.uint64, count=n)
    arr[:, 3] = np.fromiter((hasher.string(lem) for lem in lemmas), dtype=np.uint64, count=n)
    arr[:, 4] = (np.asarray(heads, dtype=np.int64) - np.arange(n, dtype=np.int64)).view(np.uint64)
    arr[:, 5] = np.fromiter((hasher.string(d) for d in deps), dtype=np.uint64, count=n)
    doc.from_array(_ATTRS, cast(Any, arr))
    return doc


def iter_docs(
    vocab: Vocab,
    sentences: Iterable[Sentence],
    *,
    sents_per_doc: int = 10,
    relations: Literal["full", "base"] = "full",
) -> Iterator[Doc]:
    """Docs of ``sents_per_doc`` consecutive sentences (a new Doc at each new document)."""
    if sents_per_doc < 1:
        raise TreebankError(f"sents_per_doc must be positive, got {sents_per_doc}")
    if relations not in ("full", "base"):
        raise TreebankError(f"relations must be 'full' or 'base', not {relations!r}")
    hasher = _Hasher(vocab)
    chunk: list[Sentence] = []
    for sent in sentences:
        if chunk and (
            len(chunk) >= sents_per_doc
            or (sent.source, sent.doc_id) != (chunk[0].source, chunk[0].doc_id)
        ):
            yield sentences_to_doc(vocab, chunk, relations=relations, _hasher=hasher)
            chunk = []
        chunk.append(sent)
    if chunk:
        yield sentences_to_doc(vocab, chunk, relations=relations, _hasher=hasher)


def sentences_to_docbin(
    sentences: Iterable[Sentence],
    *,
    vocab: Vocab | None = None,
    sents_per_doc: int = 10,
    relations: Literal["full", "base"] = "full",
) -> DocBin:
    """A DocBin (attributes TAG, POS, MORPH, LEMMA, HEAD, DEP, SENT_START) of the sentences."""
    vocab = vocab if vocab is not None else Vocab()
    docbin = DocBin(
        attrs=["ORTH", "SPACY", "TAG", "POS", "MORPH", "LEMMA", "HEAD", "DEP", "SENT_START"]
    )
    for doc in iter_docs(vocab, sentences, sents_per_doc=sents_per_doc, relations=relations):
        docbin.add(doc)
    return docbin
