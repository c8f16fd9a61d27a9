"""``stoicheia_diffusion``: the auxiliary masked-diffusion loss on the shared backbone.

On real Greek (UD Perseus sentences) and the golden tiny backbone: its loss at fixed masks
falls over a few ``nlp.update`` steps, the steps change the backbone, and at inference the
pipe changes nothing (same states and logits with or without it, no forward of its own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from spacy.training import Example
from thinc.api import Adam

from stoicheia_spacy.alphabet import DIA_UNKNOWN, MASK_ID
from stoicheia_spacy.encoder.gaps import encode_text
from stoicheia_spacy.encoder.masking import IGNORE, corrupt_planes
from stoicheia_spacy.encoder.model import torch_backbone
from stoicheia_spacy.errors import ConfigError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ud_sentences_200.txt"


def sentences(n: int) -> list[str]:
    return [line.strip() for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()][:n]


def test_corruption_masks_known_letters_and_scores_only_what_the_text_knew() -> None:
    planes, gaps, _ = encode_text("καὶ [.3] λέγει τὸν λόγον")
    rng = np.random.default_rng(0)
    for _ in range(20):
        c = corrupt_planes(planes, rng, plane_rate=1.0)
        gap = np.zeros(len(planes.letters), bool)
        gap[gaps[0].letters] = True
        masked = (c.inputs.letters == MASK_ID) & ~gap
        assert masked.any() and (c.targets["char"][masked] == planes.letters[masked]).all()
        assert (c.targets["char"][~masked] == IGNORE).all() and (c.targets["dia"][gap] == IGNORE).all()
        scored = c.targets["dia"] != IGNORE
        assert (c.inputs.diacritics[scored] == DIA_UNKNOWN).all()
    with pytest.raises(ConfigError):
        corrupt_planes(planes, rng, min_rate=0.6, max_rate=0.5)


def test_loss_falls_backbone_changes_and_inference_is_untouched(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    plain = tiny_nlp()
    nlp = tiny_nlp("stoicheia_diffusion", configs={"stoicheia_diffusion": {"weight": 1.0}})
    assert nlp.get_pipe_meta("stoicheia_diffusion").assigns == []
    texts = sentences(24)
    for pipeline in (plain, nlp):
        pipeline.get_pipe("stoicheia_encoder").model.attrs["with_logits"] = True

    # inference: the pipe adds nothing and the encoder's output is the same with or without it
    for a, b in zip(plain.pipe(texts[:6]), nlp.pipe(texts[:6]), strict=True):
        np.testing.assert_array_equal(a._.stoicheia.hidden, b._.stoicheia.hidden)
        for head, logits in a._.stoicheia.logits.items():
            np.testing.assert_array_equal(logits, b._.stoicheia.logits[head])
        assert a.to_json() == b.to_json()
    calls: list[int] = []
    hook = torch_backbone(nlp.get_pipe("stoicheia_encoder").model).register_forward_hook(
        lambda *_: calls.append(1))
    list(nlp.pipe(texts[:6], batch_size=6))
    hook.remove()
    assert len(calls) == 1  # the encoder's forward only: the pipe runs none at inference

    pipe = nlp.get_pipe("stoicheia_diffusion")
    examples = [Example(nlp.make_doc(t), nlp.make_doc(t)) for t in texts]
    backbone = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    before_weights = {k: v.detach().clone() for k, v in backbone.state_dict().items()}

    def fixed_loss() -> float:
        with torch.no_grad():
            return float(pipe.loss([eg.predicted for eg in examples], np.random.default_rng(7)))

    before = fixed_loss()
    optimizer = Adam(1e-3)
    losses = [nlp.update(examples, sgd=optimizer)["stoicheia_diffusion"] for _ in range(6)]
    after = fixed_loss()
    assert np.isfinite(before) and after < before - 0.5, (before, after, losses)
    changed = [k for k, v in backbone.state_dict().items() if not torch.equal(v, before_weights[k])]
    assert any(k.startswith("blocks.") for k in changed) and any("char" in k for k in changed), changed

    # the trained backbone is what a pipeline without the pipe reads: identical output again
    plain.get_pipe("stoicheia_encoder").model.from_bytes(nlp.get_pipe("stoicheia_encoder").model.to_bytes())
    a, b = plain(texts[0]), nlp(texts[0])
    np.testing.assert_array_equal(a._.stoicheia.logits["dia"], b._.stoicheia.logits["dia"])

    # it holds no weights and round-trips as a config-only pipe
    assert nlp.from_bytes(nlp.to_bytes()).pipe_names[-1] == "stoicheia_diffusion"


def test_weight_zero_leaves_the_backbone_and_an_unconnected_pipe_says_how(tiny_nlp) -> None:  # type: ignore[no-untyped-def]
    nlp = tiny_nlp("stoicheia_diffusion", configs={"stoicheia_diffusion": {"weight": 0.0}})
    backbone = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    weights = {k: v.detach().clone() for k, v in backbone.state_dict().items()}
    examples = [Example(nlp.make_doc(t), nlp.make_doc(t)) for t in sentences(4)]
    nlp.update(examples, sgd=Adam(1e-3))
    assert all(torch.equal(v, weights[k]) for k, v in backbone.state_dict().items())

    import spacy

    lone = spacy.blank("grc")
    lone.add_pipe("stoicheia_diffusion", config={"weight": 1.0})
    with pytest.raises(ConfigError, match="not connected"):
        lone.get_pipe("stoicheia_diffusion").update(examples)
