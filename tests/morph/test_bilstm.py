"""``stoicheia.BiLSTMEncoder.v1``: spaCy's BiLSTM encoder over packed sentences."""

from __future__ import annotations

import numpy as np
import pytest
import spacy
from spacy.ml.models.tok2vec import BiLSTMEncoder
from thinc.api import Model

from stoicheia_spacy.morph.bilstm import PackedLSTM


def _encoders(width: int = 16) -> tuple[Model, Model]:
    ours = spacy.util.registry.architectures.get("stoicheia.BiLSTMEncoder.v1")(width=width, depth=2, dropout=0.0)
    spacys = BiLSTMEncoder(width=width, depth=2, dropout=0.0)  # spacy.TorchBiLSTMEncoder.v1
    X = [np.random.default_rng(0).standard_normal((n, width)).astype("f") for n in (3, 9)]
    spacys.initialize(X=X)
    ours.initialize(X=X)
    ours.from_bytes(spacys.to_bytes())  # spaCy's weights load unchanged
    return ours, spacys


def test_the_packed_encoder_loads_spacys_weights_and_reads_each_sentence_alone() -> None:
    ours, spacys = _encoders()
    rng = np.random.default_rng(1)
    short, long_ = rng.standard_normal((4, 16)).astype("f"), rng.standard_normal((30, 16)).astype("f")
    alone = spacys.predict([short])[0]
    # one sentence: nothing to pad, the same vectors as spaCy's encoder
    np.testing.assert_allclose(ours.predict([short])[0], alone, rtol=1e-5, atol=1e-6)
    # beside a longer one, spaCy's backward direction reads the padding; ours does not
    batched = ours.predict([short, long_])
    np.testing.assert_allclose(batched[0], alone, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(batched[1], spacys.predict([long_])[0], rtol=1e-5, atol=1e-6)
    assert not np.allclose(spacys.predict([short, long_])[0], alone, atol=1e-6)


def test_the_packed_encoder_trains() -> None:
    ours, _ = _encoders()
    X = [np.ones((n, 16), dtype="f") for n in (2, 5)]
    Y, backprop = ours.begin_update(X)
    dX = backprop([np.ones_like(y) for y in Y])
    assert [d.shape for d in dX] == [(2, 16), (5, 16)]
    assert np.abs(dX[0]).sum() > 0


def test_the_packed_lstm_is_torchs_lstm() -> None:
    torch = pytest.importorskip("torch")
    lstm = PackedLSTM(8, 4, 1, bidirectional=True)
    assert set(lstm.state_dict()) == set(torch.nn.LSTM(8, 4, 1, bidirectional=True).state_dict())
