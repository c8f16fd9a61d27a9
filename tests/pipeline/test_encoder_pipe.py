"""The ``stoicheia_encoder`` pipe: registration, serialization, listeners and training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import spacy
import torch
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam

import stoicheia_spacy.pipeline  # noqa: F401  (registers factory and architectures)
from stoicheia_spacy.models import torch_backbone

# (words, UPOS) of real Greek sentences: Iliad 1.1, Odyssey 1.1, Anabasis 1.1.1
SENTENCES = [
    (["μῆνιν", "ἄειδε", "θεὰ", "Πηληϊάδεω", "Ἀχιλῆος"], ["NOUN", "VERB", "NOUN", "PROPN", "PROPN"]),
    (["ἄνδρα", "μοι", "ἔννεπε", ",", "μοῦσα", ",", "πολύτροπον"],
     ["NOUN", "PRON", "VERB", "PUNCT", "NOUN", "PUNCT", "ADJ"]),
    (["Δαρείου", "καὶ", "Παρυσάτιδος", "γίγνονται", "παῖδες", "δύο", "."],
     ["PROPN", "CCONJ", "PROPN", "VERB", "NOUN", "NUM", "PUNCT"]),
    (["πρεσβύτερος", "μὲν", "Ἀρταξέρξης", ",", "νεώτερος", "δὲ", "Κῦρος", "."],
     ["ADJ", "ADV", "PROPN", "PUNCT", "ADJ", "ADV", "PROPN", "PUNCT"]),
]


@pytest.mark.parametrize(
    "reg,name",
    [
        ("architectures", "stoicheia.CharEncoder.v1"),
        ("architectures", "stoicheia.WordPooler.v1"),
        ("architectures", "stoicheia.StoicheiaListener.v1"),
        ("misc", "stoicheia.BackboneLoader.v1"),
        ("factories", "stoicheia_encoder"),
    ],
)
def test_registered_names_resolve(reg: str, name: str) -> None:
    assert callable(registry.get(reg, name))


def _pipeline(model_config: dict, checkpoint: Path, grad_factor: float | None = None) -> spacy.Language:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"model": model_config, "store_logits": True})
    if grad_factor is not None:
        tok2vec = {
            "@architectures": "stoicheia.StoicheiaListener.v1",
            "grad_factor": grad_factor,
            "pooling": {"@architectures": "stoicheia.WordPooler.v1"},
        }
        nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": tok2vec}})
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
        "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(checkpoint)}
    }
    return nlp


def _examples(nlp: spacy.Language) -> list[Example]:
    return [Example.from_dict(Doc(nlp.vocab, words=w), {"tags": t}) for w, t in SENTENCES]


def test_initialize_loads_the_checkpoint_declaratively(tiny_model_config, tiny_checkpoint) -> None:
    nlp = _pipeline(tiny_model_config, tiny_checkpoint)
    from safetensors.torch import load_file

    expected = load_file(str(tiny_checkpoint / "model.safetensors"))["e_char.weight"]
    assert not torch.equal(torch_backbone(nlp.get_pipe("stoicheia_encoder").model).e_char.weight, expected)
    nlp.initialize()
    assert torch.equal(torch_backbone(nlp.get_pipe("stoicheia_encoder").model).e_char.weight, expected)
    doc = nlp("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον")
    data = doc._.stoicheia
    assert data.hidden.shape == (5, 29, 64)
    assert {k: v.shape for k, v in data.logits.items()} == {
        "char": (29, 27), "boundary": (29, 3), "dia": (29, 48), "cap": (29, 2), "punct": (29, 6)}


def test_to_disk_then_spacy_load_gives_identical_outputs(tmp_path, tiny_model_config, tiny_checkpoint) -> None:
    nlp = _pipeline(tiny_model_config, tiny_checkpoint, grad_factor=1.0)
    nlp.initialize(lambda: _examples(nlp))
    text = "Δαρείου καὶ Παρυσάτιδος γίγνονται παῖδες δύο, πρεσβύτερος μὲν Ἀρταξέρξης, νεώτερος δὲ Κῦρος."
    before = nlp(text)
    nlp.to_disk(tmp_path / "pipe")
    stored = sorted(p.name for p in (tmp_path / "pipe" / "stoicheia_encoder").iterdir())
    assert stored == ["cfg", "config.json", "model.safetensors"]
    loaded = spacy.load(tmp_path / "pipe")
    after = loaded(text)
    np.testing.assert_array_equal(before._.stoicheia.hidden, after._.stoicheia.hidden)
    assert [t.tag_ for t in before] == [t.tag_ for t in after]
    # bytes round trip too
    pipe = loaded.get_pipe("stoicheia_encoder")
    fresh = _pipeline(tiny_model_config, tiny_checkpoint).get_pipe("stoicheia_encoder")
    fresh.from_bytes(pipe.to_bytes())
    for a, b in zip(torch_backbone(fresh.model).parameters(), torch_backbone(pipe.model).parameters(), strict=True):
        assert torch.equal(a, b)


def _train(nlp: spacy.Language, steps: int) -> list[float]:
    examples = _examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(learn_rate=0.01)
    losses = []
    for _ in range(steps):
        step: dict[str, float] = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["tagger"])
    return losses


def _weights(nlp: spacy.Language) -> dict[str, torch.Tensor]:
    model = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("grad_factor", [0.0, 1.0])
def test_tagger_on_a_listener_learns(grad_factor, tiny_model_config, tiny_checkpoint) -> None:
    nlp = _pipeline(tiny_model_config, tiny_checkpoint, grad_factor=grad_factor)
    encoder = nlp.get_pipe("stoicheia_encoder")
    nlp.initialize(lambda: _examples(nlp))
    assert encoder.listening_components == ["tagger"]
    start = _weights(nlp)
    losses = _train(nlp, 30)
    assert losses[-1] < 0.5 * losses[0], losses
    end = _weights(nlp)
    changed = [k for k in start if not torch.equal(start[k], end[k])]
    if grad_factor == 0.0:
        assert changed == []
    else:
        assert "blocks.0.attn.qkv.weight" in changed and "e_char.weight" in changed
    tags = [t.tag_ for t in nlp(Doc(nlp.vocab, words=SENTENCES[2][0]))]
    assert sum(a == b for a, b in zip(tags, SENTENCES[2][1], strict=True)) >= 5


def test_listener_outputs_zeros_before_the_encoder_ran(tiny_model_config, tiny_checkpoint) -> None:
    nlp = _pipeline(tiny_model_config, tiny_checkpoint, grad_factor=1.0)
    nlp.initialize(lambda: _examples(nlp))
    tagger = nlp.get_pipe("tagger")
    doc = nlp.make_doc("μῆνιν ἄειδε θεὰ")
    vectors = tagger.model.get_ref("tok2vec").predict([doc])[0]
    assert vectors.shape == (3, 64) and not vectors.any()
