"""``stoicheia.WordPooler.v1``: per-letter hidden states of every layer -> one vector per token.

A scalar mix (softmax over depth + 1 zero-initialised logits) combines the layers, each
token takes the mean of its letters, and tokens without a Greek letter (punctuation,
numbers, Latin) take a learned vector.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, cast

from spacy.util import registry
from thinc.api import Model, NumpyOps, get_array_module
from thinc.types import Floats2d

from .states import StateNeed, missing, register_node_need, state_key
from .types import StoicheiaDocData

numpy_ops = NumpyOps()


@registry.architectures("stoicheia.WordPooler.v1")
def build_word_pooler() -> Model[list[StoicheiaDocData], list[Floats2d]]:
    """Scalar mix over layers, then mean over each token's letters (see module doc)."""
    return Model("stoicheia_word_pooler", _forward, init=_init, dims={"nO": None, "n_layers": None},
                 params={"mix": None, "empty": None})


def set_state_dims(model: Model, X: list[StoicheiaDocData] | None) -> None:
    """Infer ``n_layers`` and ``nO`` from a sample of encoder outputs, where not yet set."""
    if X and X[0].hidden is not None:
        first = X[0].hidden
        if not model.has_dim("n_layers"):
            model.set_dim("n_layers", int(first.shape[0]))
        if not model.has_dim("nO"):
            model.set_dim("nO", int(first.shape[2]))


def _init(model: Model, X: list[StoicheiaDocData] | None = None, Y: object = None) -> None:
    set_state_dims(model, X)
    model.set_param("mix", model.ops.alloc1f(model.get_dim("n_layers")))
    model.set_param("empty", model.ops.alloc1f(model.get_dim("nO")))


def mix_letters(weights: Any, hidden: Any) -> Any:
    """The scalar mix of a ``(layers, n, d)`` stack with softmax ``weights``: ``(n, d)``."""
    return get_array_module(hidden).tensordot(weights, hidden, axes=(0, 0))


def pool_tokens(ops: Any, mixed: Any, lengths: Any, empty: Any) -> tuple[Any, Any]:
    """(token vectors, is_empty): the mean of each token's mixed letters, the ``empty`` vector
    for tokens without a letter."""
    width = mixed.shape[1]
    if mixed.shape[0]:
        pooled: Any = ops.reduce_mean(ops.asarray2f(mixed), lengths)
    else:  # no Greek letter in the Doc (thinc's reduce_mean needs a non-empty input)
        pooled = ops.alloc2f(lengths.shape[0], width)
    is_empty: Any = ops.asarray1f(lengths == 0)
    return pooled + is_empty[:, None] * empty[None, :], is_empty


def _key(model: Model) -> str:
    return state_key("word_pooler", model.ops.to_numpy(model.get_param("mix")),
                     model.ops.to_numpy(model.get_param("empty")))


def pooler_need(model: Model) -> StateNeed | None:
    """What this pooler reads (:mod:`.states`): the mix of every letter, pooled per token."""
    if not (model.has_param("mix") and model.has_param("empty")):
        return None
    weights = numpy_ops.softmax(numpy_ops.asarray1f(model.ops.to_numpy(model.get_param("mix"))))
    empty = numpy_ops.asarray1f(model.ops.to_numpy(model.get_param("empty")))

    def finish(mixed: Any, data: StoicheiaDocData) -> Any:
        lengths = numpy_ops.asarray1i(cast(Any, data.token_lengths))
        return pool_tokens(numpy_ops, mixed, lengths, empty)[0]

    return StateNeed(_key(model), partial(mix_letters, weights), finish)


def _forward(
    model: Model, docs: list[StoicheiaDocData], is_train: bool
) -> tuple[list[Floats2d], Callable[[list[Floats2d]], list[Any]]]:
    ops = model.ops
    logits: Any = model.get_param("mix")
    empty: Any = model.get_param("empty")
    if not is_train:
        key = _key(model)
        if all(key in doc.states for doc in docs):  # pooled once in the encoder's forward
            return [ops.asarray2f(doc.states[key]) for doc in docs], lambda d: []
        missing(docs, key)
    weights: Any = ops.softmax(logits)
    outputs: list[Floats2d] = []
    cache: list[tuple[Any, Any, Any, Any]] = []
    for doc in docs:
        hidden = doc.hidden
        lengths: Any = ops.asarray1i(cast(Any, doc.token_lengths))
        width = hidden.shape[2]
        mixed = mix_letters(weights, hidden) if hidden.shape[1] else ops.alloc2f(0, width)
        pooled, is_empty = pool_tokens(ops, mixed, lengths, empty)
        outputs.append(pooled)
        cache.append((hidden, mixed, lengths, is_empty))

    def backprop(d_outputs: list[Floats2d]) -> list[Any]:
        d_hiddens: list[Any] = []
        d_weights: Any = ops.alloc1f(weights.shape[0])
        d_empty: Any = ops.alloc1f(empty.shape[0])
        for d_out, (hidden, _mixed, lengths, is_empty) in zip(d_outputs, cache, strict=True):
            d_empty += (d_out * is_empty[:, None]).sum(axis=0)
            if hidden.shape[1] == 0:
                d_hiddens.append(ops.alloc3f(*hidden.shape))
                continue
            d_mixed: Any = ops.backprop_reduce_mean(ops.asarray2f(d_out * (1.0 - is_empty)[:, None]), lengths)
            d_hiddens.append(weights[:, None, None] * d_mixed[None, :, :])
            d_weights += ops.xp.tensordot(hidden, d_mixed, axes=([1, 2], [0, 1]))
        # softmax backprop: dL/dlogit = w * (dL/dw - <w, dL/dw>)
        d_logits = weights * (d_weights - (weights * d_weights).sum())
        model.inc_grad("mix", d_logits)
        model.inc_grad("empty", d_empty)
        return d_hiddens

    return outputs, backprop


register_node_need("stoicheia_word_pooler", pooler_need)
