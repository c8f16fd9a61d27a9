"""``stoicheia.CharEncoder.v1``: one packed forward per batch, exact per-Doc outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import spacy
import torch
from spacy.tokens import Doc

from stoicheia_spacy.backbone import load_backbone
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.encoder.align import align_letters
from stoicheia_spacy.encoder.model import build_char_encoder, set_backbone_weights
from stoicheia_spacy.errors import ConfigError

ILIAD = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε"
ODYSSEY = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"
ANABASIS = "Δαρείου καὶ Παρυσάτιδος γίγνονται παῖδες δύο."


@pytest.fixture(scope="module")
def nlp() -> spacy.Language:
    return spacy.blank("grc")


def _encoder(tiny_checkpoint: Path, **overrides: int) -> tuple:
    kwargs = {"d_model": 64, "n_heads": 4, "depth": 4, "char_window": 8, **overrides}
    model = build_char_encoder(**kwargs)
    backbone = load_backbone(tiny_checkpoint)
    set_backbone_weights(model, backbone)
    return model, backbone


def _reference(backbone, text: str) -> np.ndarray:
    """Hidden states of one Doc run alone through the torch backbone."""
    p = encode_planes(text)
    t = {k: torch.from_numpy(getattr(p, a).astype(np.int64))[None] for k, a in
         [("input_ids", "letters"), ("boundary", "boundary"), ("dia", "diacritics"), ("punct", "punctuation")]}
    with torch.no_grad():
        out = backbone(t["input_ids"], t["boundary"], t["dia"], t["punct"], output_hidden_states=True)
    return torch.stack(out.hidden_states, 0)[:, 0].numpy()


def test_packed_batch_equals_docs_run_alone(nlp, tiny_checkpoint: Path) -> None:
    model, backbone = _encoder(tiny_checkpoint, max_length=256, overlap=16)
    texts = [ILIAD, ODYSSEY, ANABASIS]
    outputs = model.predict([nlp(t) for t in texts])
    for text, out in zip(texts, outputs, strict=True):
        assert out.hidden.shape == (5, len(encode_planes(text)), 64)
        np.testing.assert_allclose(out.hidden, _reference(backbone, text), atol=1e-4)


def test_long_doc_windows_keep_shape_and_context(nlp, tiny_checkpoint: Path) -> None:
    windowed, backbone = _encoder(tiny_checkpoint, max_length=24, overlap=8)
    whole, _ = _encoder(tiny_checkpoint, max_length=4096, overlap=512)
    doc = nlp(ILIAD)
    a, b = windowed.predict([doc])[0], whole.predict([doc])[0]
    assert a.hidden.shape == b.hidden.shape
    # the embedding layer does not see context: identical; deeper layers differ by the cut
    np.testing.assert_allclose(a.hidden[0], b.hidden[0], atol=1e-6)
    assert not np.allclose(a.hidden[-1], b.hidden[-1], atol=1e-3)
    np.testing.assert_allclose(b.hidden, _reference(backbone, ILIAD), atol=1e-4)


def test_doc_without_greek_letters_gets_empty_states(nlp, tiny_checkpoint: Path) -> None:
    model, _ = _encoder(tiny_checkpoint)
    out = model.predict([nlp("123 , abc")])[0]
    assert out.hidden.shape == (5, 0, 64)
    assert out.token_lengths.tolist() == [0, 0, 0]


def test_backprop_reaches_the_backbone(nlp, tiny_checkpoint: Path) -> None:
    model, _ = _encoder(tiny_checkpoint, max_length=24, overlap=8)
    outputs, backprop = model.begin_update([nlp(ODYSSEY), nlp(ILIAD)])
    backprop([np.ones_like(o.hidden) for o in outputs])
    torch_model = model.layers[0].shims[0]._model.encoder
    assert torch_model.e_char.weight.grad is not None
    assert float(torch_model.blocks[0].attn.qkv.weight.grad.abs().sum()) > 0


def test_letters_align_to_their_tokens(nlp) -> None:
    doc = Doc(nlp.vocab, words=["Δαρείου", "καὶ", "Παρυσάτιδος", ",", "δύο", "."])
    planes = encode_planes(doc.text)
    letter_token, lengths = align_letters(doc, planes.offsets)
    assert lengths.tolist() == [7, 3, 11, 0, 3, 0]
    assert letter_token.tolist() == [0] * 7 + [1] * 3 + [2] * 11 + [4] * 3


def test_checkpoint_of_another_size_is_refused(tiny_checkpoint: Path) -> None:
    model = build_char_encoder(d_model=64, n_heads=4, depth=2, char_window=8)
    with pytest.raises(ConfigError, match="depth"):
        set_backbone_weights(model, load_backbone(tiny_checkpoint))
