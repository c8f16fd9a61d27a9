from __future__ import annotations

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab
from stoicheia_lab.treebanks.harmonise import Sentence, base_relation
from stoicheia_lab.treebanks.to_docbin import iter_docs, sentences_to_docbin

from stoicheia_spacy.errors import TreebankError
from stoicheia_spacy.morph.agdt_to_ud import agdt_to_feats, agdt_to_upos


@pytest.mark.parametrize("source", ["agdt", "homer", "gorman", "pedalion"])
def test_docbin_roundtrip_keeps_every_annotation(harmonised_samples, source: str) -> None:
    sents: list[Sentence] = harmonised_samples[source][:60]
    data = sentences_to_docbin(sents, sents_per_doc=7).to_bytes()
    docs = list(DocBin().from_bytes(data).get_docs(Vocab()))
    got = [sent for doc in docs for sent in doc.sents]
    assert len(got) == len(sents)
    for span, s in zip(got, sents, strict=True):
        assert [t.text for t in span] == s.forms
        assert [t.tag_ for t in span] == s.tags
        assert [t.lemma_ for t in span] == s.lemmas
        assert [t.dep_ for t in span] == s.relations
        assert [t.pos_ for t in span] == [
            agdt_to_upos(t, lem) for t, lem in zip(s.tags, s.lemmas, strict=True)
        ]
        assert [str(t.morph) or "_" for t in span] == [agdt_to_feats(t) for t in s.tags]
        heads = [0 if t.head.i == t.i else t.head.i - span.start + 1 for t in span]
        assert heads == s.heads
        assert span[0].is_sent_start


def test_base_relations_and_bad_input(harmonised_samples) -> None:
    sents = harmonised_samples["gorman"][:5]
    doc = next(iter_docs(Vocab(), sents, relations="base"))
    assert [t.dep_ for t in doc] == [base_relation(r) for s in sents for r in s.relations]
    assert "ποιησαίμην, ὦ ἄνδρες," in doc.text  # no space before punctuation
    broken = Sentence(
        "x",
        "d",
        "1",
        "",
        ["λόγος", "ἔστι"],
        ["λόγος", "εἰμί"],
        ["n-s---mn-", "v3spia---"],
        ["SBJ", "PRED"],
        [0, 0],
    )
    with pytest.raises(TreebankError):
        sentences_to_docbin([broken])
    with pytest.raises(TreebankError):
        list(iter_docs(Vocab(), sents, sents_per_doc=0))
