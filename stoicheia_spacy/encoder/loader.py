"""``stoicheia.BackboneLoader.v1``: load released backbone weights at initialize time
(or, for control arms, a seeded random initialisation of the same shape)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from spacy.util import registry
from thinc.api import Model

from ..backbone import load_backbone, load_backbone_config
from ..backbone.model import StoicheiaEncoder
from .model import set_backbone_weights


def random_backbone(source: str, *, seed: int = 0, revision: str | None = None) -> StoicheiaEncoder:
    """A randomly initialised backbone with the shape of ``source``'s ``config.json``.

    Its weights come from the encoder's own initialisation (the one pretraining starts
    from, as ``pretrain export-random``), drawn under ``torch.manual_seed(seed)`` in a
    forked RNG, so the global torch stream, and hence every later component's
    initialisation, is the same as in the pretrained arm.
    """
    config = load_backbone_config(source, revision)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return StoicheiaEncoder(config).eval()


@registry.misc("stoicheia.BackboneLoader.v1")
def create_backbone_loader(
    source: str,
    prefix: str | None = None,
    revision: str | None = None,
    random_init: bool = False,
    seed: int = 0,
) -> Callable[[Model], Model]:
    """A loader for ``[initialize.components.stoicheia_encoder.loader]``.

    ``source`` is a local checkpoint directory or a Hugging Face repo id in the released
    format (``config.json`` + ``model.safetensors``). ``prefix`` selects the backbone in
    a task checkpoint (``"tagger.encoder."``, ``"encoder."``); ``revision`` pins a hub
    revision. Reading is done by :func:`stoicheia_spacy.backbone.load_backbone`.

    ``random_init = true`` is the random-init control: the weights are NOT loaded; only
    ``source``'s ``config.json`` is read and a backbone of that shape is initialised
    under ``seed`` (:func:`random_backbone`). The pipeline's encoder shape must match it,
    as for loaded weights.
    """

    def load(model: Model) -> Model:
        if random_init:
            backbone = random_backbone(source, seed=seed, revision=revision)
        else:
            backbone = load_backbone(source, prefix=prefix, revision=revision)
        set_backbone_weights(model, backbone)
        return model

    return load
