"""The lemmatizer computes its 19,740-script output layer only for tokens whose lemma the
form table does not decide (a form with one attested lemma takes it whatever the logits):
the lemmas equal the whole-matrix decode on real Greek."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import spacy

from stoicheia_spacy.morph.lemmatizer import TableLogits
from stoicheia_spacy.tokenizer import word_texts

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ud_sentences_200.txt"


def test_table_decided_tokens_skip_the_output_layer_with_the_same_lemmas(default_morph: spacy.Language) -> None:
    nlp = default_morph
    lem = nlp.get_pipe("stoicheia_lemmatizer")
    table = lem.form_table()
    if table is None:
        pytest.skip("the lexicon data package (form table) is not installed")
    texts = [line for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()][:40]
    with nlp.select_pipes(disable=["stoicheia_lemmatizer"]):
        docs = list(nlp.pipe(texts))
    lazy = lem.predict(docs)
    assert all(isinstance(x, TableLogits) for x in lazy)
    needed = sum(int(x.needed.sum()) for x in lazy)
    tokens = sum(len(d) for d in docs)
    assert 0 < needed < tokens  # e.g. καί, δέ, ὁ: one lemma in the table, no row computed
    for doc, logits in zip(docs, lazy, strict=True):
        whole = lem.model.ops.to_numpy(lem.model.predict([doc])[0])
        assert np.allclose(np.asarray(logits), whole, atol=1e-5)
        want = lem.lemmatize_flagged(word_texts(doc), whole, table, lem.settings.table_weight(doc))[0]
        lem.set_annotations([doc], [logits])
        assert [t.lemma_ for t in doc] == want
    assert any(t.lemma_ == "καί" for d in docs for t in d)
