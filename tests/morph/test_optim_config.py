"""SplitAdam steps backbone weights at the encoder rate; parse.cfg resolves with the three heads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import spacy

from stoicheia_spacy.morph.optim import split_adam

CONFIG = Path(__file__).resolve().parents[2] / "assets" / "configs" / "parse.cfg"


def test_split_adam_uses_the_encoder_rate_for_backbone_keys() -> None:
    opt = split_adam(learn_rate=8e-4, encoder_learn_rate=1e-4)
    g = np.ones(3, dtype="f")
    enc, _ = opt((1, "encoder.blocks.0.attn.weight"), np.ones(3, dtype="f"), g.copy())
    head, _ = opt((2, "out.weight"), np.ones(3, dtype="f"), g.copy())
    assert np.allclose(1 - enc, 1e-4, rtol=1e-3) and np.allclose(1 - head, 8e-4, rtol=1e-3)


def test_parse_config_builds_the_pipeline() -> None:
    config = spacy.util.load_config(CONFIG)
    config["components"]["stoicheia_encoder"]["model"].update({"d_model": 64, "n_heads": 4, "depth": 2})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["stoicheia_encoder", "stoicheia_morphologizer", "stoicheia_lemmatizer",
                              "stoicheia_parser"]
    resolved = spacy.util.registry.resolve({"o": config["training"]["optimizer"]})["o"]
    assert resolved.encoder_scale == 0.125


def test_transformer_config_steps_every_hugging_face_weight_at_the_encoder_rate() -> None:
    config = spacy.util.load_config(CONFIG.with_name("parse_transformer.cfg"))
    opt = spacy.util.registry.resolve({"o": config["training"]["optimizer"]})["o"]
    g = np.ones(3, dtype="f")
    for name, rate in (("embeddings.word_embeddings.weight", 1e-4), ("encoder.layer.0.output.dense.weight", 1e-4),
                       ("pooler.dense.bias", 1e-4), ("out.weight", 8e-4), ("arc_dep.linear.weight", 8e-4)):
        w, _ = opt((3, name), np.ones(3, dtype="f"), g.copy())
        assert np.allclose(1 - w, rate, rtol=1e-3), name
