"""``stoicheia.BackboneReference.v1``: a declared reference to the encoder pipe's backbone.

A component that runs the backbone itself (the restorer's beam search needs one forward
per decoding step) declares it in its config instead of looking the encoder up::

    [components.stoicheia_restorer.model]
    @architectures = "stoicheia.BackboneReference.v1"
    upstream = "stoicheia_encoder"

The encoder pipe connects the reference when listeners are linked (``nlp.initialize``,
``spacy.load``, or :func:`stoicheia_spacy.component.link_listeners`), exactly as it
connects its listeners. The reference holds no weights: :meth:`BackboneReference.backbone`
is the encoder's own torch module, or, with an overlay (fine-tuned top blocks and heads,
:mod:`stoicheia_spacy.backbone.overlay`), a view of it whose untouched blocks ARE the
encoder's modules and whose overlaid ones are copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spacy.util import registry
from thinc.api import Model

from ..backbone.overlay import apply_overlay
from ..errors import ConfigError
from .model import runtime_backbone, torch_backbone


class BackboneReference(Model):
    """Stands for the backbone of the ``upstream`` encoder pipe inside another component."""

    name = "stoicheia_backbone_ref"

    def __init__(self, upstream_name: str = "stoicheia_encoder") -> None:
        Model.__init__(self, name=self.name, forward=_forward, attrs={"upstream_name": upstream_name})
        self._upstream: Model | None = None
        self._overlaid: tuple[int, Any, Any] | None = None

    @property
    def upstream_name(self) -> str:
        return str(self.attrs["upstream_name"])

    @property
    def connected(self) -> bool:
        return self._upstream is not None

    @property
    def precision(self) -> str:
        """The inference precision of the connected encoder (``float32`` when not connected)."""
        return "float32" if self._upstream is None else str(self._upstream.attrs.get("precision", "float32"))

    def connect(self, encoder_model: Model) -> None:
        """Point at an encoder pipe's ``stoicheia.CharEncoder.v1`` model."""
        self._upstream = encoder_model
        self._overlaid = None

    def backbone(self, overlay: Any = None, *, runtime: bool = False) -> Any:
        """The encoder's torch backbone; with ``overlay`` ((tensors, metadata), or a
        :class:`~stoicheia_spacy.backbone.overlay.MappedOverlay`), the overlaid view, built once per overlay;
        ``runtime``: in the encoder's inference precision (``precision`` of its settings)."""
        if self._upstream is None:
            raise ConfigError(
                f"the backbone reference to {self.upstream_name!r} is not connected: put a "
                "'stoicheia_encoder' pipe before this component and initialize or load the pipeline "
                "(or call stoicheia_spacy.component.link_listeners(nlp))")
        base = torch_backbone(self._upstream)
        module = base
        if overlay is not None:
            if self._overlaid is None or self._overlaid[0] != id(base) or self._overlaid[1] is not overlay:
                self._overlaid = (id(base), overlay, apply_overlay(base, *overlay))
            module = self._overlaid[2]
        return runtime_backbone(self._upstream, module) if runtime else module


def _forward(model: BackboneReference, X: Any, is_train: bool) -> tuple[Any, Callable[[Any], Any]]:
    """The reference passes its input through (the component calls :meth:`~BackboneReference.backbone`)."""
    return X, lambda dY: dY


@registry.architectures("stoicheia.BackboneReference.v1")
def build_backbone_reference(upstream: str = "stoicheia_encoder") -> BackboneReference:
    """A reference to the backbone of the encoder pipe named ``upstream`` ("*": any)."""
    return BackboneReference(upstream)


__all__ = ["BackboneReference", "build_backbone_reference"]
