"""The encoder's ``precision`` setting: inference forwards of the encoder and the restorer's
beam run int8 (or bf16) while the stored weights stay float32; the setting is recorded in the
config and survives a save."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from stoicheia_spacy.assembly import load_pipeline
from stoicheia_spacy.encoder.model import torch_backbone

TEXT = "μῆνιν ἄειδε θεὰ [...] Ἀχιλῆος οὐλομένην"


def test_int8_encoder_and_beam(tiny_nlp: Any, tmp_path: Path) -> None:
    nlp = tiny_nlp("stoicheia_restorer")
    encoder = nlp.get_pipe("stoicheia_encoder")
    ref = nlp(TEXT)
    encoder.configure(precision="int8")
    assert nlp.config["components"]["stoicheia_encoder"]["settings"]["precision"] == "int8"
    got = nlp(TEXT)
    assert got._.stoicheia.hidden.shape == ref._.stoicheia.hidden.shape
    assert float(np.abs(got._.stoicheia.hidden[0] - ref._.stoicheia.hidden[0]).max()) == 0.0  # embeddings: float32
    assert got._.restorations and got._.restorations[0].candidates
    beam = nlp.get_pipe("stoicheia_restorer").beam_backbone()
    assert isinstance(beam.blocks[0].attn.qkv, DynamicLinear)
    assert type(torch_backbone(encoder.model).blocks[0].attn.qkv).__name__ == "Linear"  # weights stay float32
    nlp.to_disk(tmp_path / "pipe")
    again = load_pipeline(tmp_path / "pipe")
    assert again.get_pipe("stoicheia_encoder").settings.precision == "int8"
    assert again.get_pipe("stoicheia_encoder").model.attrs["precision"] == "int8"
    encoder.configure(precision="float32")
    back = nlp(TEXT)
    assert np.array_equal(back._.stoicheia.hidden, ref._.stoicheia.hidden)


def test_default_beam_runs_the_encoders_own_weights(tiny_nlp: Any) -> None:
    """No second backbone: by default the restorer's beam is the encoder's float32 module."""
    nlp = tiny_nlp("stoicheia_restorer")
    nlp(TEXT)
    restorer = nlp.get_pipe("stoicheia_restorer")
    assert restorer.settings.dtype == "float32"
    beam = restorer.beam_backbone()
    base = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    assert {p.untyped_storage().data_ptr() for p in beam.parameters()} <= {
        p.untyped_storage().data_ptr() for p in base.parameters()}
