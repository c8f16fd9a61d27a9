"""``stoicheia.WordPooler.v1``: scalar mix, mean over letters, learned vector for empty tokens."""

from __future__ import annotations

import numpy as np
import spacy
from spacy.tokens import Doc

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.encoder.align import align_letters
from stoicheia_spacy.encoder.pooler import build_word_pooler
from stoicheia_spacy.encoder.types import StoicheiaDocData


def _data(seed: int = 0) -> list[StoicheiaDocData]:
    nlp = spacy.blank("grc")
    doc = Doc(nlp.vocab, words=["πρεσβύτερος", "μὲν", "Ἀρταξέρξης", ",", "νεώτερος", "δὲ", "Κῦρος", "."])
    planes = encode_planes(doc.text)
    letter_token, lengths = align_letters(doc, planes.offsets)
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=(3, len(planes), 4)).astype("float32")
    return [StoicheiaDocData(planes, letter_token, lengths, hidden=hidden)]


def test_zero_init_mix_is_the_layer_average_of_letter_means() -> None:
    data = _data()
    pooler = build_word_pooler()
    pooler.initialize(X=data)
    out = pooler.predict(data)[0]
    doc = data[0]
    assert out.shape == (doc.n_tokens, 4)
    expected0 = doc.hidden[:, doc.token_slice(0)].mean(axis=(0, 1))
    np.testing.assert_allclose(out[0], expected0, rtol=1e-5)
    # tokens without a Greek letter ("," and ".") take the learned vector (zero at init)
    pooler.set_param("empty", np.full(4, 7.0, dtype="float32"))
    out = pooler.predict(data)[0]
    np.testing.assert_allclose(out[[3, 7]], 7.0)
    assert not np.allclose(out[2], 7.0)


def test_gradients_match_finite_differences() -> None:
    data = _data(1)
    pooler = build_word_pooler()
    pooler.initialize(X=data)
    pooler.set_param("mix", np.array([0.3, -0.2, 0.5], dtype="float32"))
    pooler.set_param("empty", np.array([0.1, 0.2, 0.3, 0.4], dtype="float32"))
    rng = np.random.default_rng(2)
    target = rng.normal(size=(data[0].n_tokens, 4)).astype("float32")

    def loss() -> float:
        return float((pooler.predict(data)[0] * target).sum())

    out, backprop = pooler.begin_update(data)
    d_hidden = backprop([target])[0]
    analytic = {"mix": pooler.get_grad("mix").copy(), "empty": pooler.get_grad("empty").copy()}
    eps = 1e-2
    for name in ("mix", "empty"):
        param = pooler.get_param(name).astype("float64")
        for i in range(param.shape[0]):
            up, down = param.copy(), param.copy()
            up[i] += eps
            down[i] -= eps
            pooler.set_param(name, up.astype("float32"))
            lu = loss()
            pooler.set_param(name, down.astype("float32"))
            ld = loss()
            pooler.set_param(name, param.astype("float32"))
            assert abs((lu - ld) / (2 * eps) - analytic[name][i]) < 1e-3
    hidden = data[0].hidden
    for index in [(0, 0, 0), (2, 5, 3), (1, 20, 1)]:
        saved = hidden[index]
        hidden[index] = saved + eps
        lu = loss()
        hidden[index] = saved - eps
        ld = loss()
        hidden[index] = saved
        assert abs((lu - ld) / (2 * eps) - d_hidden[index]) < 1e-3


def test_docs_without_greek_letters_get_the_learned_vector() -> None:
    nlp = spacy.blank("grc")
    docs = [Doc(nlp.vocab, words=["123", ","]), Doc(nlp.vocab, words=[])]
    data = []
    for doc in docs:
        planes = encode_planes(doc.text)
        letter_token, lengths = align_letters(doc, planes.offsets)
        data.append(StoicheiaDocData(planes, letter_token, lengths, hidden=np.zeros((3, 0, 4), "float32")))
    pooler = build_word_pooler()
    pooler.initialize(X=data)
    pooler.set_param("empty", np.arange(4, dtype="float32"))
    out, backprop = pooler.begin_update(data)
    assert out[0].shape == (2, 4) and out[1].shape == (0, 4)
    np.testing.assert_array_equal(out[0], [[0, 1, 2, 3]] * 2)
    d_hidden = backprop([np.ones((2, 4), "float32"), np.zeros((0, 4), "float32")])
    assert [d.shape for d in d_hidden] == [(3, 0, 4), (3, 0, 4)]
    np.testing.assert_array_equal(pooler.get_grad("empty"), [2, 2, 2, 2])
