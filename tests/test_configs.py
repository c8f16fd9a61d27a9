"""The shipped base configs resolve into pipelines (tiny sizes, weights from the golden checkpoint)."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy
from spacy.util import load_config

CONFIGS = Path(__file__).resolve().parents[1] / "assets" / "configs"


@pytest.mark.parametrize("name,pipes", [("encoder.cfg", ["stoicheia_encoder"]),
                                        ("tagger.cfg", ["stoicheia_encoder", "tagger"])])
def test_config_builds_and_initializes(name: str, pipes: list[str], tiny_checkpoint: Path) -> None:
    overrides = {"paths.backbone": str(tiny_checkpoint)}
    for key, value in {"d_model": 64, "n_heads": 4, "depth": 4, "char_window": 8}.items():
        overrides[f"components.stoicheia_encoder.model.{key}"] = value
    config = load_config(CONFIGS / name, overrides=overrides)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    assert nlp.pipe_names == pipes
    if "tagger" in pipes:
        nlp.get_pipe("tagger").add_label("NOUN")
    nlp.initialize()
    doc = nlp("μῆνιν ἄειδε θεὰ")
    data = doc._.stoicheia
    if "tagger" in pipes:  # its pooler reads one mix: the Doc keeps the pooled token vectors (states = "used")
        assert data.hidden is None and [v.shape for v in data.states.values()] == [(3, 64)]
        assert nlp.get_pipe("tagger").labels == ("NOUN",) and doc[0].tag_ == "NOUN"
    else:  # the encoder alone: the whole stack
        assert data.hidden.shape == (5, 13, 64)
