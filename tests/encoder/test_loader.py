"""``stoicheia.BackboneLoader.v1`` with ``random_init``: the random-init control arm gets a
seeded backbone of the checkpoint's shape, never its weights."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy
import torch
from safetensors.torch import load_file

from stoicheia_spacy.encoder.loader import create_backbone_loader, random_backbone
from stoicheia_spacy.encoder.model import torch_backbone
from stoicheia_spacy.errors import ConfigError


def _weights(model_config: dict, checkpoint: Path, **loader: object) -> dict[str, torch.Tensor]:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"model": model_config})
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
        "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(checkpoint), **loader}}
    nlp.initialize()
    return {k: v.clone() for k, v in torch_backbone(nlp.get_pipe("stoicheia_encoder").model).state_dict().items()}


def test_random_init_is_seeded_and_not_the_checkpoint(tiny_model_config, tiny_checkpoint) -> None:
    stored = load_file(str(tiny_checkpoint / "model.safetensors"))
    loaded = _weights(tiny_model_config, tiny_checkpoint)
    assert torch.equal(loaded["e_char.weight"], stored["e_char.weight"])
    state = torch.random.get_rng_state()
    a = _weights(tiny_model_config, tiny_checkpoint, random_init=True, seed=3)
    b = _weights(tiny_model_config, tiny_checkpoint, random_init=True, seed=3)
    c = _weights(tiny_model_config, tiny_checkpoint, random_init=True, seed=4)
    assert set(a) == set(stored)
    assert all(a[k].shape == stored[k].shape for k in stored)
    assert not torch.equal(a["e_char.weight"], stored["e_char.weight"])
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["e_char.weight"], c["e_char.weight"])
    assert abs(float(a["e_char.weight"].std()) - 0.02) < 0.005  # the encoder's own (pretraining) init
    fresh = random_backbone(str(tiny_checkpoint), seed=3).state_dict()
    assert all(torch.equal(a[k], fresh[k]) for k in a)
    # spacy.blank / add_pipe draw from the global stream; the loader itself does not
    torch.random.set_rng_state(state)
    random_backbone(str(tiny_checkpoint), seed=3)
    assert torch.equal(torch.random.get_rng_state(), state)


def test_random_init_still_checks_the_shape(tiny_model_config, tiny_checkpoint) -> None:
    nlp = spacy.blank("grc")
    pipe = nlp.add_pipe("stoicheia_encoder", config={"model": {**tiny_model_config, "depth": 2}})
    with pytest.raises(ConfigError, match="depth"):
        create_backbone_loader(str(tiny_checkpoint), random_init=True)(pipe.model)
