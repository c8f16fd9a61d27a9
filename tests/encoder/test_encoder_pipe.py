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
from thinc.api import Adam, Model

from stoicheia_spacy.encoder.model import torch_backbone

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
    nlp.add_pipe("stoicheia_encoder", config={"model": model_config, "settings": {"store_logits": True}})
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
    # before initialize the weights are uninitialised memory (built without random init), so only
    # what initialize loads is asserted
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
    assert stored == ["config.json", "model.safetensors"]  # the settings: config.cfg
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


def test_a_lacuna_is_masked_letters_not_a_full_stop(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    """The issue's example: `[...]` used to decode as `βουλῇ. τῷ δήμῳ` (a sentence end)."""
    from stoicheia_spacy.alphabet import BND_SENT_END, DIA_UNKNOWN, MASK_ID, PUNCT_PERIOD
    from stoicheia_spacy.codec import decode_planes

    nlp = tiny_nlp()
    text = "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ"
    doc = nlp(text)
    data = doc._.stoicheia
    [gap] = data.gaps
    assert text[gap.source_start:gap.source_end] == "[...]" and data.markup_error is None
    masked = data.planes.letters == MASK_ID
    assert masked.sum() == gap.width and masked[gap.letters].all()
    assert (data.planes.diacritics[gap.letters] == DIA_UNKNOWN).all()
    assert (data.planes.offsets[gap.letters] == -1).all()
    assert not (data.planes.punctuation == PUNCT_PERIOD).any()
    assert np.flatnonzero(data.planes.boundary == BND_SENT_END).tolist() == [data.n_letters - 1]
    assert "." not in decode_planes(data.planes) and "◌" * gap.width in decode_planes(data.planes)
    # every text letter maps back to its character, every letter to a token
    text_letters = ~data.gap_letters
    assert all(text[o].isalpha() for o in data.planes.offsets[text_letters])
    assert doc[int(data.letter_token[gap.start])].idx == gap.source_start
    assert data.hidden.shape[1] == data.n_letters and data.logits["char"].shape == (data.n_letters, 27)


def test_gap_widths_are_capped_and_bad_markup_is_plain_text(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    from stoicheia_spacy.encoder.gaps import MAX_GAP_WIDTH, UNKNOWN_GAP_WIDTH

    nlp = tiny_nlp()
    huge = nlp("ἔδοξε τῇ βουλῇ [ca. 100000] τῷ δήμῳ")._.stoicheia
    assert [(g.width, g.too_wide) for g in huge.gaps] == [(MAX_GAP_WIDTH, True)]
    unknown = nlp("ἔδοξε τῇ βουλῇ [---] τῷ δήμῳ")._.stoicheia
    assert [(g.width, g.too_wide) for g in unknown.gaps] == [(UNKNOWN_GAP_WIDTH, False)]
    prose = nlp("λόγος (καὶ ἔργον")._.stoicheia
    assert prose.gaps == [] and "never closed" in prose.markup_error
    assert prose.n_letters == len("λογοςκαιεργον")


def test_a_blank_encoder_refuses_to_run_without_weights() -> None:
    from stoicheia_spacy.errors import ConfigError

    nlp = spacy.blank("grc")
    pipe = nlp.add_pipe("stoicheia_encoder")
    assert torch_backbone(pipe.model).config.d_model == 384  # the embedded backbone's shape, not paper size
    with pytest.raises(ConfigError, match="BackboneLoader"):
        nlp("λόγος")


def test_each_forward_first_hands_the_freed_heap_back(tiny_nlp, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The encoder trims the C heap once per batch, before the forward (so the workers of
    spaCy's ``nlp.pipe(n_process=...)`` do not keep every batch's freed heap); the states
    are the same as without the trim."""
    import stoicheia_spacy.encoder.pipe as encoder_module
    from stoicheia_spacy.heap import trim_heap

    texts = [" ".join(words) for words, _ in SENTENCES]
    nlp = tiny_nlp()
    pipe = nlp.get_pipe("stoicheia_encoder")
    events: list[str] = []
    forward = Model.predict

    def predict(model: Model, docs: list[Doc]) -> object:
        if model is pipe.model:
            events.append(f"forward {len(docs)}")
        return forward(model, docs)

    monkeypatch.setattr(Model, "predict", predict)
    monkeypatch.setattr(encoder_module, "trim_heap", lambda: events.append("trim") or trim_heap())
    trimmed = list(nlp.pipe(texts, batch_size=3))
    assert events == ["trim", "forward 3", "trim", "forward 1"]
    monkeypatch.setattr(encoder_module, "trim_heap", lambda: False)
    plain = list(nlp.pipe(texts, batch_size=3))
    for a, b in zip(trimmed, plain, strict=True):
        assert a.text == b.text and a._.stoicheia.n_letters > 10
        np.testing.assert_array_equal(a._.stoicheia.hidden, b._.stoicheia.hidden)
        np.testing.assert_array_equal(a._.stoicheia.logits["char"], b._.stoicheia.logits["char"])
