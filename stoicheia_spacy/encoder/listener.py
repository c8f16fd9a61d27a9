"""``stoicheia.StoicheiaListener.v1``: read the shared ``stoicheia_encoder`` output.

The encoder pipe runs the backbone once per batch and hands its output to every
listener (``receive``); during training each listener returns those outputs and routes
its gradient, scaled by ``grad_factor`` (0.0 freezes the backbone), back to the pipe.
At prediction time listeners read ``doc._.stoicheia``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from thinc.types import Floats2d

from ..errors import ConfigError, StoicheiaError
from .model import doc_inputs
from .states import LISTENER
from .types import StoicheiaDocData

Backprop = Callable[[Sequence[Any]], Any]


class StoicheiaListener(Model):
    """A layer that stands for the upstream ``stoicheia_encoder`` pipe inside another component."""

    name = LISTENER

    def __init__(self, upstream_name: str = "*", grad_factor: float = 1.0) -> None:
        Model.__init__(
            self, name=self.name, forward=_listener_forward,
            dims={"nO": None, "n_layers": None},
            attrs={"upstream_name": upstream_name, "grad_factor": float(grad_factor)},
        )
        self._batch_id: int | None = None
        self._outputs: list[StoicheiaDocData] | None = None
        self._backprop: Backprop | None = None
        #: the encoder pipe this listener is registered with (a weak reference), which gives a
        #: training forward the whole stack of a Doc that kept only the components' needs
        self._upstream: weakref.ReferenceType[Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the weak reference to the encoder pipe (re-set when it is linked)."""
        return {**self.__dict__, "_upstream": None}

    @property
    def upstream_name(self) -> str:
        return str(self.attrs["upstream_name"])

    @property
    def grad_factor(self) -> float:
        return float(self.attrs["grad_factor"])

    @classmethod
    def get_batch_id(cls, docs: Sequence[Doc]) -> int:
        """An id that identifies a batch of Docs (the sum of their token orth ids)."""
        return sum(sum(token.orth for token in doc) for doc in docs)

    def receive(self, batch_id: int, outputs: list[StoicheiaDocData], backprop: Backprop) -> None:
        """Store the encoder output of a batch, to be returned by the next training forward."""
        self._batch_id = batch_id
        self._outputs = outputs
        self._backprop = backprop

    def verify_inputs(self, docs: Sequence[Doc]) -> bool:
        """Check that ``docs`` are the batch last received from the encoder pipe."""
        if self._batch_id is None and self._outputs is None:
            raise StoicheiaError(
                "the stoicheia listener received no encoder output: put a 'stoicheia_encoder' "
                "before this component and update both (or annotate with a frozen one)"
            )
        if self._batch_id != self.get_batch_id(docs):
            raise StoicheiaError("the stoicheia listener got a different batch than its encoder")
        return True


def _stored(docs: Sequence[Doc]) -> list[StoicheiaDocData] | None:
    data = [doc._.stoicheia for doc in docs]
    if all(d is not None and (d.hidden is not None or d.states) for d in data):
        return data  # the whole stack, or what the pipeline's components read of it (.states)
    return None


def _listener_forward(
    model: StoicheiaListener, docs: list[Doc], is_train: bool
) -> tuple[list[StoicheiaDocData], Callable[[Sequence[Any]], list[Any]]]:
    if is_train and (model._outputs is not None or _stored(docs) is None):
        model.verify_inputs(docs)
        outputs = model._outputs
        assert outputs is not None
        factor = model.grad_factor
        upstream = model._backprop

        def backprop(d_hidden: Sequence[Any]) -> list[Any]:
            if upstream is not None:
                upstream([d * factor if factor != 0.0 and d is not None else None for d in d_hidden])
            return []

        return outputs, backprop
    stored = _stored(docs)
    if stored is not None:
        if is_train:
            _whole_stacks(model, docs, stored)
        return stored, lambda d: []
    if any(doc._.stoicheia is not None for doc in docs):
        raise ConfigError("doc._.stoicheia holds no hidden states: set store_hidden = true in [components.stoicheia_encoder.settings]")
    return _zeros(model, docs), lambda d: []


def _whole_stacks(model: StoicheiaListener, docs: Sequence[Doc], stored: list[StoicheiaDocData]) -> None:
    """Training reads the whole stack (the heads' mixes are trained): a Doc whose encoder kept
    only the components' needs (``states = "used"``, :mod:`.states`) gets it from one more
    forward of the encoder this listener is registered with, kept on the Doc for later updates."""
    lacking = [i for i, d in enumerate(stored) if d.hidden is None]
    if not lacking:
        return
    pipe = model._upstream() if model._upstream is not None else None
    if pipe is None:
        raise ConfigError("doc._.stoicheia holds only what the components read at inference, not the whole stack "
                          "that training reads: set states = \"all\" in [components.stoicheia_encoder.settings]")
    fresh = pipe.model.predict([docs[i] for i in lacking])  # no needs set: the whole stack
    for i, data in zip(lacking, fresh, strict=True):
        stored[i].hidden = data.hidden


def _zeros(model: StoicheiaListener, docs: Sequence[Doc]) -> list[StoicheiaDocData]:
    """Zero outputs of the right shape, for Docs the encoder has not seen (initialization)."""
    if not (model.has_dim("nO") and model.has_dim("n_layers")):
        raise ConfigError("stoicheia listener is not connected to a 'stoicheia_encoder' pipe")
    n_layers, width = model.get_dim("n_layers"), model.get_dim("nO")
    out = []
    for doc in docs:
        data = doc_inputs(doc)
        data.hidden = model.ops.alloc3f(n_layers, data.n_letters, width)
        out.append(data)
    return out


@registry.architectures("stoicheia.StoicheiaListener.v1")
def build_stoicheia_listener(
    pooling: Model[list[StoicheiaDocData], list[Floats2d]],
    upstream: str = "*",
    grad_factor: float = 1.0,
) -> Model[list[Doc], list[Floats2d]]:
    """Listener + pooling: token vectors from the shared ``stoicheia_encoder`` pipe.

    ``upstream`` names the encoder pipe ("*" = any); ``grad_factor`` scales the gradient
    sent back into the backbone (0.0 leaves its weights unchanged).
    """
    return chain(StoicheiaListener(upstream, grad_factor), pooling)
