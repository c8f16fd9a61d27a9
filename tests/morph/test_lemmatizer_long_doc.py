"""A long Doc's lemmas without its whole ``n_tokens × n_scripts`` logit matrix: 200 KB of Greek
held 24,000 × 19,740 floats (1.9 GB) at once in the lemmatizer; the rows are now computed a
block at a time, with the same values and the same lemmas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import spacy
from spacy.tokens import Doc

from stoicheia_spacy.morph.lemmatizer import BLOCK, ScriptLogits
from stoicheia_spacy.tokenizer import word_texts

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ud_sentences_200.txt"


def test_long_doc_lemmas_come_from_blocks_equal_to_the_whole_matrix(default_morph: spacy.Language) -> None:
    nlp = default_morph
    words = FIXTURE.read_text(encoding="utf-8").split()[: BLOCK + 140]
    with nlp.select_pipes(enable=["stoicheia_encoder", "stoicheia_morphologizer"]):
        doc = nlp(Doc(nlp.vocab, words=words))
    lem = nlp.get_pipe("stoicheia_lemmatizer")
    [lazy] = lem.predict([doc])
    assert isinstance(lazy, ScriptLogits) and lazy.shape == (len(doc), len(lem.scripts))
    whole = lem.model.ops.to_numpy(lem.model.predict([doc])[0])
    assert np.array_equal(np.asarray(lazy), whole)
    assert np.array_equal(lazy.rows(BLOCK, len(doc)), whole[BLOCK:])
    want = lem.lemmatize_flagged(word_texts(doc), whole, lem.form_table())[0]
    lem.set_annotations([doc], [lazy])
    assert [t.lemma_ for t in doc] == want
    assert any(t.lemma_ != t.text for t in doc[BLOCK:])  # the second block is lemmatised too
