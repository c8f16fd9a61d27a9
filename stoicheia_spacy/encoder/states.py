"""What the components read of the encoder's per-letter states, computed once per batch.

The backbone produces a ``(depth + 1, n_letters, d_model)`` stack of states per Doc (13 x 384
float32, 20 KB a letter, for the default backbone). The components after the encoder read
much less of it: each word pooler and the scanner one scalar mix of the layers (one vector a
letter), the dater two layers of the first letters. Each of them declares what it reads as a
:class:`StateNeed`; with ``states = "used"`` (the encoder's default setting) the encoder pipe
collects the needs of the components after it (:func:`component_needs`), the inference
forward applies them to each forward chunk's letters as soon as all their layers exist (a
chunk's layers are its only per-letter working memory) and the Doc keeps only the results,
in ``doc._.stoicheia.states[need.key]``; ``hidden`` stays None.

A need is computed by the very function its consumer applies to the full stack (the per-letter
reductions are exact letter by letter, whatever the chunk), so the components' outputs are the
same. ``key`` is a content address (the kind and the consumer's parameters): a consumer finds
its result under the key of its current parameters, or falls back to ``hidden`` (a pipeline
with ``states = "all"``, a Doc from elsewhere, training).

A component declares its needs with a ``state_needs()`` method (the dater), or by holding, after
a :class:`~stoicheia_spacy.encoder.listener.StoicheiaListener` of this encoder, a Thinc node
whose name is registered with :func:`register_node_need` (word poolers, scanner heads). A
component that listens to the encoder through a node nobody registered needs the whole stack;
so does a pipeline where no component declares a need (the encoder alone is read for its
states).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from thinc.api import Model

from ..errors import ConfigError

#: ``letters(stack)`` maps a ``(depth + 1, m, d)`` float32 stack of ``m`` letters to a float32
#: array whose axis -2 is those ``m`` letters, letter by letter (no reduction over letters).
LetterFn = Callable[[np.ndarray], np.ndarray]
#: ``finish(per_letter, data)``: a Doc's per-letter result to what is stored (e.g. per token).
FinishFn = Callable[[np.ndarray, Any], Any]

#: The encoder setting ``states``: keep the whole stack, or only what the components read.
STATE_MODES = ("all", "used")


@dataclass(frozen=True, eq=False)
class StateNeed:
    """One consumer's reading of the stack: ``letters`` (see :data:`LetterFn`) over the Doc's
    letters (only those before the first at or past character ``max_chars`` of ``doc.text``
    when it is set), then ``finish`` per Doc when given. ``key`` names the result in
    ``StoicheiaDocData.states`` (:func:`state_key`)."""

    key: str
    letters: LetterFn
    finish: FinishFn | None = None
    max_chars: int | None = None


def state_key(kind: str, *arrays: Any) -> str:
    """A content address: ``kind`` and a digest of the consumer's parameters."""
    digest = hashlib.sha1(kind.encode())
    for array in arrays:
        a = np.ascontiguousarray(np.asarray(array))
        digest.update(str((a.dtype, a.shape)).encode())
        digest.update(a.tobytes())
    return f"{kind}:{digest.hexdigest()[:20]}"


def prefix_letters(offsets: np.ndarray, max_chars: int | None) -> int:
    """How many letters lie before the first letter at or past character ``max_chars``
    (all of them when ``max_chars`` is None)."""
    offsets = np.asarray(offsets)
    if max_chars is None:
        return int(offsets.shape[0])
    beyond = np.flatnonzero(offsets >= max_chars)
    return int(beyond[0]) if len(beyond) else int(offsets.shape[0])


#: The name of a :class:`~stoicheia_spacy.encoder.listener.StoicheiaListener` node.
LISTENER = "stoicheia_listener"

_NODE_NEEDS: dict[str, Callable[[Model], StateNeed | None]] = {}


def register_node_need(name: str, func: Callable[[Model], StateNeed | None]) -> None:
    """Declare that a Thinc node named ``name`` reads the states listened to before it through
    ``func(node)`` (None: it reads nothing now, e.g. not initialized)."""
    _NODE_NEEDS[name] = func


def component_needs(component: Any, upstream: str) -> list[StateNeed] | None:
    """The needs of one pipeline component on the encoder named ``upstream``; None when it
    needs the whole stack (it listens through a node that declares nothing)."""
    declare = getattr(component, "state_needs", None)
    if callable(declare):
        return list(declare())
    model = getattr(component, "model", None)
    if not isinstance(model, Model):
        return []
    nodes = list(model.walk())
    if not any(n.name == LISTENER and n.attrs.get("upstream_name") in ("*", upstream) for n in nodes):
        return []
    found = [n for n in nodes if n.name in _NODE_NEEDS]
    if not found:
        return None
    needs = [_NODE_NEEDS[n.name](n) for n in found]
    return None if any(need is None for need in needs) else [n for n in needs if n is not None]


def pipeline_needs(components: Iterable[Any], upstream: str) -> tuple[StateNeed, ...] | None:
    """The needs of ``components`` (those after the encoder), one per key; None: keep the whole
    stack (a component needs it, or none declares a need)."""
    needs: dict[str, StateNeed] = {}
    for component in components:
        declared = component_needs(component, upstream)
        if declared is None:
            return None
        needs.update((need.key, need) for need in declared)
    return tuple(needs.values()) or None


@dataclass
class StatePlan:
    """The needs of one batch and, per need, which output letters it reads (``rows[p]``: the
    row of flat output letter ``p`` in the need's array, -1 if none; None: every letter, in
    order)."""

    needs: Sequence[StateNeed]
    rows: list[np.ndarray | None]
    sizes: list[int]

    @classmethod
    def build(cls, needs: Sequence[StateNeed], doc_offsets: Sequence[np.ndarray]) -> StatePlan:
        """``doc_offsets``: each Doc's letter offsets (``planes.offsets``), Docs in output order."""
        total = sum(int(o.shape[0]) for o in doc_offsets)
        rows: list[np.ndarray | None] = []
        sizes: list[int] = []
        for need in needs:
            if need.max_chars is None:
                rows.append(None)
                sizes.append(total)
                continue
            row = np.full(total, -1, dtype=np.int64)
            start = kept = 0
            for offsets in doc_offsets:
                k = prefix_letters(offsets, need.max_chars)
                row[start:start + k] = np.arange(kept, kept + k)
                start += int(offsets.shape[0])
                kept += k
            rows.append(row)
            sizes.append(kept)
        return cls(list(needs), rows, sizes)


def apply_chunk(plan: StatePlan, outputs: list[np.ndarray | None], stack: np.ndarray, dest: np.ndarray) -> None:
    """Apply every need of ``plan`` to one chunk: ``stack`` (layers, m, d) holds the states of
    the flat output letters ``dest`` (m,); results go to ``outputs`` (allocated at the first
    chunk, letters on axis -2)."""
    for i, need in enumerate(plan.needs):
        row = plan.rows[i]
        if row is None:
            part, at = stack, dest
        else:
            at = row[dest]
            keep = at >= 0
            if not keep.any():
                continue
            part, at = (stack, at) if keep.all() else (stack[:, keep], at[keep])
        result = np.asarray(need.letters(part), dtype=np.float32)
        if outputs[i] is None:
            shape = (*result.shape[:-2], plan.sizes[i], result.shape[-1])
            outputs[i] = np.empty(shape, dtype=np.float32)
        out = outputs[i]
        assert out is not None
        out[..., at, :] = result


def split_states(plan: StatePlan, outputs: list[np.ndarray | None], doc_data: Sequence[Any],
                 n_layers: int, width: int) -> None:
    """Give each Doc (``StoicheiaDocData``, in output order) its part of every need's result,
    finished per Doc (``need.finish``); ``n_layers``, ``width``: the stack's shape."""
    for i, need in enumerate(plan.needs):
        out = outputs[i]
        if out is None:  # no letter of the batch is read: the need's result over no letters
            out = np.asarray(need.letters(np.zeros((n_layers, 0, width), dtype=np.float32)), dtype=np.float32)
        start = 0
        row = plan.rows[i]
        for data in doc_data:
            n = data.n_letters if row is None else prefix_letters(data.planes.offsets, need.max_chars)
            part = out[..., start:start + n, :]
            start += n
            data.states[need.key] = need.finish(part, data) if need.finish is not None else part
        outputs[i] = None


def missing(docs: Sequence[Any], key: str) -> None:
    """Raise when a Doc holds neither the whole stack nor the result ``key`` a component reads."""
    if any(doc.hidden is None for doc in docs):
        raise ConfigError(
            f"doc._.stoicheia holds neither the encoder's whole stack of states nor what this component "
            f"reads ({key}): run the pipeline's own stoicheia_encoder before it, or set states = \"all\" "
            "in [components.stoicheia_encoder.settings]")


__all__ = ["STATE_MODES", "StateNeed", "StatePlan", "apply_chunk", "component_needs", "missing", "pipeline_needs",
           "prefix_letters", "register_node_need", "split_states", "state_key"]
