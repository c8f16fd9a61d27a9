"""``stoicheia.WordFeatures.v1``: backbone word vectors beside embeddings of the word form."""

from __future__ import annotations

import numpy as np
import spacy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Config, Model
from thinc.types import Floats2d

from stoicheia_spacy.morph.word_features import build_word_features

WORDS = ["ὁ", "λόγος", "τοῦ", "λόγου", "καὶ", "ὁ", "λόγος", "."]


def _context_stub(width: int) -> Model[list[Doc], list[Floats2d]]:
    """Stands in for the listener: one fixed vector per word, from its position."""

    def forward(model: Model, docs: list[Doc], is_train: bool):  # type: ignore[no-untyped-def]
        out = [model.ops.asarray2f(np.tile(np.arange(len(d), dtype="f")[:, None], (1, width))) for d in docs]
        return out, lambda d_out: []

    return Model("context_stub", forward, dims={"nO": width})


def _embed() -> Model[list[Doc], list[Floats2d]]:
    return registry.resolve(Config().from_str("""
[e]
@architectures = "spacy.MultiHashEmbed.v2"
width = 8
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [100, 50, 50, 10]
include_static_vectors = false
"""))["e"]


def test_one_vector_of_the_given_width_per_word_and_the_form_decides() -> None:
    doc = Doc(spacy.blank("grc").vocab, words=WORDS)
    model = build_word_features(_context_stub(4), _embed(), width=6)
    model.initialize(X=[doc])
    out = model.predict([doc])[0]
    assert out.shape == (len(WORDS), 6)
    # the same context vector and the same form give the same row; another form does not
    embed = model.get_ref("embed").predict([doc])[0]
    np.testing.assert_allclose(embed[1], embed[6])
    assert not np.allclose(embed[1], embed[3])  # λόγος vs λόγου: the suffix differs
    assert model.get_ref("tok2vec").name == "context_stub"


def test_gradients_reach_the_form_embeddings() -> None:
    doc = Doc(spacy.blank("grc").vocab, words=WORDS)
    model = build_word_features(_context_stub(4), _embed(), width=6)
    model.initialize(X=[doc])
    out, backprop = model.begin_update([doc])
    backprop([model.ops.alloc2f(*out[0].shape) + 1.0])
    grads = [g for node in model.get_ref("embed").walk() for name in node.param_names
             if node.has_grad(name) for g in [node.get_grad(name)]]
    assert any(np.abs(g).sum() > 0 for g in grads)


def test_resolves_from_a_config_block() -> None:
    cfg = Config().from_str("""
[m]
@architectures = "stoicheia.WordFeatures.v1"
width = 12

[m.tok2vec]
@architectures = "spacy.MultiHashEmbed.v2"
width = 4
attrs = ["NORM"]
rows = [100]
include_static_vectors = false

[m.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 8
attrs = ["SUFFIX"]
rows = [50]
include_static_vectors = false
""")
    model = registry.resolve(cfg)["m"]
    doc = Doc(spacy.blank("grc").vocab, words=WORDS)
    model.initialize(X=[doc])
    assert model.predict([doc])[0].shape == (len(WORDS), 12)
