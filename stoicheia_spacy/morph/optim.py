"""``stoicheia.SplitAdam.v1``: Adam with a separate learning rate for the backbone.

The paper fine-tunes the encoder at 1e-4 and trains the heads at 8e-4. Adam is
invariant to gradient scale, so a listener ``grad_factor`` cannot set the encoder's
rate; this optimizer scales the step of every parameter whose thinc key names a
backbone weight (torch names under ``encoder.`` in the ``stoicheia.CharEncoder.v1``
shim) by ``encoder_learn_rate / learn_rate``. ``grad_factor = 0`` still freezes it.
``prefix`` may list several name prefixes: a Hugging Face encoder inside
spacy-transformers names its weights ``embeddings.``, ``encoder.``, ``pooler.``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spacy.util import registry
from thinc.api import Optimizer


class SplitAdam(Optimizer):
    """Adam whose backbone parameters step at ``encoder_learn_rate``."""

    def __init__(self, learn_rate: float, encoder_learn_rate: float, prefix: str | Sequence[str] = "encoder.",
                 **kwargs: Any) -> None:
        super().__init__(learn_rate, **kwargs)
        self.encoder_scale = float(encoder_learn_rate) / float(learn_rate)
        self.prefix: tuple[str, ...] = (prefix,) if isinstance(prefix, str) else tuple(prefix)

    def __call__(self, key: tuple[int, str], weights: Any, gradient: Any, *, lr_scale: float = 1.0) -> Any:
        if isinstance(key[1], str) and key[1].startswith(self.prefix):
            lr_scale *= self.encoder_scale
        return super().__call__(key, weights, gradient, lr_scale=lr_scale)


@registry.optimizers("stoicheia.SplitAdam.v1")
def split_adam(
    learn_rate: float = 8e-4,
    encoder_learn_rate: float = 1e-4,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    L2: float = 0.0,
    grad_clip: float = 5.0,
    use_averages: bool = False,
    prefix: str | list[str] = "encoder.",
) -> Optimizer:
    """Adam (heads at ``learn_rate``, backbone at ``encoder_learn_rate``; the backbone is every
    weight whose name starts with ``prefix``, or with one of several)."""
    return SplitAdam(learn_rate, encoder_learn_rate, prefix, beta1=beta1, beta2=beta2, eps=eps, L2=L2,
                     grad_clip=grad_clip, use_averages=use_averages, L2_is_weight_decay=True)
