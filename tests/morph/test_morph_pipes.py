"""stoicheia_morphologizer and stoicheia_lemmatizer on the golden tiny encoder with real AGDT sentences."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
from spacy.language import Language

from stoicheia_spacy.morph.agdt_tags import is_valid_tag
from stoicheia_spacy.morph.agdt_to_ud import agdt_to_feats
from stoicheia_spacy.morph.lemma_scripts import derive_script

_spec = importlib.util.spec_from_file_location("morph_helpers", Path(__file__).parents[1] / "morph" / "helpers.py")
assert _spec and _spec.loader
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

TEXT = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην."


def _train(nlp: Language, egs: list, steps: int, name: str) -> list[float]:
    torch.manual_seed(0)
    opt = nlp.create_optimizer()
    return [nlp.update(egs, sgd=opt, exclude=["stoicheia_encoder"])[name] for _ in range(steps)]


def test_morphologizer_learns_predicts_attested_tags_and_round_trips() -> None:
    nlp = H.tiny_nlp("stoicheia_morphologizer")
    egs = H.initialized(nlp)
    pipe = nlp.get_pipe("stoicheia_morphologizer")
    gold_tags = {t for s in H.load_sentences() for t in s["tags"]}
    assert set(pipe.labels) == gold_tags and pipe.data["n_in"] == 64
    losses = _train(nlp, egs, 25, "stoicheia_morphologizer")
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:3])
    doc = nlp(TEXT)
    for tok in doc:
        assert tok.tag_ in gold_tags and is_valid_tag(tok.tag_)
        assert str(tok.morph) == ("" if agdt_to_feats(tok.tag_) == "_" else agdt_to_feats(tok.tag_))
        assert tok.pos_
    # after a few steps the training sentences are tagged better than chance
    scores = nlp.evaluate(egs)
    assert scores["tag_acc"] > 0.2 and scores["pos_acc"] > 0.2
    restored = H.tiny_nlp("stoicheia_morphologizer").from_bytes(nlp.to_bytes())
    assert [t.tag_ for t in restored(TEXT)] == [t.tag_ for t in doc]


def test_lemmatizer_scripts_round_trip_through_the_factory(tmp_path: Path) -> None:
    nlp = H.tiny_nlp("stoicheia_lemmatizer")
    egs = H.initialized(nlp)
    pipe = nlp.get_pipe("stoicheia_lemmatizer")
    sents = H.load_sentences()
    pairs = [(w, lem) for s in sents for w, lem in zip(s["words"], s["lemmas"], strict=True)]
    # every gold lemma is reachable: its script is in the vocabulary and applies back exactly
    index = {s: i for i, s in enumerate(pipe.scripts)}
    logits = np.full((len(pairs), len(index)), -10.0, dtype=np.float32)
    for row, (form, lemma) in enumerate(pairs):
        logits[row, index[derive_script(form, lemma)]] = 10.0
    assert pipe.lemmatize([f for f, _ in pairs], logits) == [lem for _, lem in pairs]
    # case handling: a capitalised proper name keeps its title-case lemma, sentence-initial capitals drop
    title = derive_script("Ἥρας", "Ἥρα")
    assert title.cap == 1
    # lexicon rescoring: the 2nd-best script wins when only its lemma is attested
    first, second = index[derive_script("λόγοισιν", "λόγος")], index[derive_script("ἀνδρῶν", "ἀνήρ")]
    scores = np.full((1, len(index)), -10.0, dtype=np.float32)
    scores[0, second], scores[0, first] = 5.0, 4.0
    assert pipe.lemmatize(["λόγοισιν"], scores) == ["λόγος"]
    pipe.configure(use_lexicon=False)
    assert pipe.lemmatize(["λόγοισιν"], scores) != ["λόγος"]
    pipe.configure(use_lexicon=True)
    losses = _train(nlp, egs, 25, "stoicheia_lemmatizer")
    assert np.mean(losses[-5:]) < 0.9 * np.mean(losses[:3])
    doc = nlp(TEXT)
    assert all(tok.lemma_ for tok in doc)
    nlp.to_disk(tmp_path / "nlp")
    restored = H.tiny_nlp("stoicheia_lemmatizer")
    restored.get_pipe("stoicheia_encoder").from_disk(tmp_path / "nlp" / "stoicheia_encoder")
    restored.get_pipe("stoicheia_lemmatizer").from_disk(tmp_path / "nlp" / "stoicheia_lemmatizer")
    assert [t.lemma_ for t in restored(TEXT)] == [t.lemma_ for t in doc]


def test_uninitialized_head_fails_clearly() -> None:
    from stoicheia_spacy.errors import ConfigError

    nlp = H.tiny_nlp("stoicheia_morphologizer")
    with pytest.raises(ConfigError):
        nlp.get_pipe("stoicheia_morphologizer").from_bytes(
            __import__("srsly").msgpack_dumps({"cfg": {}, "model": b""}))
