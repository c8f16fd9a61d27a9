"""``stoicheia.BackboneLoader.v1``: load released backbone weights at initialize time."""

from __future__ import annotations

from collections.abc import Callable

from spacy.util import registry
from thinc.api import Model

from .encoder import set_backbone_weights


@registry.misc("stoicheia.BackboneLoader.v1")
def create_backbone_loader(
    source: str, prefix: str | None = None, revision: str | None = None
) -> Callable[[Model], Model]:
    """A loader for ``[initialize.components.stoicheia_encoder.loader]``.

    ``source`` is a local checkpoint directory or a Hugging Face repo id in the released
    format (``config.json`` + ``model.safetensors``). ``prefix`` selects the backbone in
    a task checkpoint (``"tagger.encoder."``, ``"encoder."``); ``revision`` pins a hub
    revision. Reading is done by :func:`stoicheia_spacy.backbone.load_backbone`.
    """

    def load(model: Model) -> Model:
        from ..backbone import load_backbone

        set_backbone_weights(model, load_backbone(source, prefix=prefix, revision=revision))
        return model

    return load
