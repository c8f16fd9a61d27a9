"""Thinc architectures of the morphosyntax components.

- ``stoicheia.TokenHeads.v1``: token vectors (e.g. ``stoicheia.StoicheiaListener.v1`` +
  ``stoicheia.WordPooler.v1``, or ``spacy.Tok2Vec.v2``) -> per-token logits of a
  :class:`~.heads.TokenHeads` (morphologizer, lemmatizer).
- ``stoicheia.BiaffineParser.v1``: ``(docs, sentence lengths per doc, gold heads or
  None)`` -> ``(arc scores (S, n+1, n+1), label scores (S, n+1, L))`` over the padded
  sentences of the batch (all sentences of all Docs in one forward).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, chain, torch2xp, with_array, xp2torch
from thinc.types import Floats2d

from ..heads import build_torch_head
from ..heads import weight_dtype as weight_dtype_of


@registry.architectures("stoicheia.TokenHeads.v1")
def build_token_heads(
    tok2vec: Model[list[Doc], list[Floats2d]], hidden_width: int = 256, dropout: float = 0.33,
    weight_dtype: str = "float32",
) -> Model[list[Doc], list[Floats2d]]:
    """Token vectors -> per-token logits; the torch head is sized at ``initialize``.
    ``weight_dtype``: what its matrices are kept in once loaded (:mod:`stoicheia_spacy.heads`)."""
    weight_dtype_of(weight_dtype)
    head = build_torch_head("stoicheia_token_heads")
    head.attrs.update({"hidden_width": int(hidden_width), "dropout": float(dropout), "weight_dtype": weight_dtype})
    model: Model = chain(tok2vec, with_array(head))
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("head", head)
    return model


def _parser_inputs(model: Model, X: Any, is_train: bool) -> tuple[ArgsKwargs, Callable[[Any], Any]]:
    x, mask, heads = X
    args = ArgsKwargs(args=(xp2torch(x, requires_grad=is_train), torch.as_tensor(mask),
                            torch.as_tensor(heads)), kwargs={})

    def reverse(d_inputs: ArgsKwargs) -> Any:
        return torch2xp(d_inputs.args[0])

    return args, reverse


def _parser_outputs(model: Model, inputs_outputs: Any, is_train: bool) -> tuple[Any, Callable[[Any], Any]]:
    _, (arcs, labels) = inputs_outputs

    def reverse(d_outputs: Any) -> ArgsKwargs:
        d_arcs, d_labels = d_outputs
        return ArgsKwargs(args=((arcs, labels),), kwargs={"grad_tensors": (xp2torch(d_arcs), xp2torch(d_labels))})

    return (torch2xp(arcs), torch2xp(labels)), reverse


def sentence_index(sent_lengths: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
    """``(doc index, start, length)`` of every sentence of every Doc, in order."""
    index = []
    for i, lengths in enumerate(sent_lengths):
        start = 0
        for n in lengths:
            index.append((i, start, int(n)))
            start += int(n)
    return index


def pad_index(vectors: Sequence[np.ndarray], index: Sequence[tuple[int, int, int]],
              n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """The sentences ``index`` (:func:`sentence_index`) of per-Doc token vectors, padded to
    ``n_max``: ``(S, n_max, d)`` and the mask ``(S, n_max)``."""
    width = vectors[0].shape[1] if len(vectors) else 0
    padded = np.zeros((len(index), n_max, width), dtype=np.float32)
    mask = np.zeros((len(index), n_max), dtype=bool)
    for s, (i, start, n) in enumerate(index):
        padded[s, :n] = vectors[i][start:start + n]
        mask[s, :n] = True
    return padded, mask


def pad_sentences(
    vectors: Sequence[np.ndarray], sent_lengths: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """Cut per-Doc token vectors into sentences and pad them: ``(S, n_max, d)``, mask
    ``(S, n_max)`` and ``(doc index, start, length)`` per sentence."""
    index = sentence_index(sent_lengths)
    padded, mask = pad_index(vectors, index, max((n for _, _, n in index), default=0))
    return padded, mask, index


def _parser_forward(model: Model, X: Any, is_train: bool) -> tuple[Any, Callable[[Any], Any]]:
    docs, sent_lengths, gold_heads = X
    tok2vec, head = model.get_ref("tok2vec"), model.get_ref("head")
    vectors, bp_vectors = tok2vec(docs, is_train)
    vectors = [model.ops.to_numpy(v) for v in vectors]
    padded, mask, index = pad_sentences(vectors, sent_lengths)
    heads = np.zeros((len(index), mask.shape[1] + 1), dtype=np.int64)
    if gold_heads is not None:
        for s, h in enumerate(gold_heads):
            heads[s, : len(h)] = np.maximum(h, 0)
    (arcs, labels), bp_head = head((padded, mask, heads), is_train)

    def backprop(d_outputs: Any) -> Any:
        d_padded = np.asarray(bp_head(d_outputs))
        d_vectors = [np.zeros_like(v) for v in vectors]
        for s, (i, start, n) in enumerate(index):
            d_vectors[i][start:start + n] = d_padded[s, :n]
        return bp_vectors([model.ops.asarray2f(d) for d in d_vectors])

    return (arcs, labels), backprop


@registry.architectures("stoicheia.BiaffineParser.v1")
def build_biaffine_parser(
    tok2vec: Model[list[Doc], list[Floats2d]],
    arc_hidden: int = 500,
    label_hidden: int = 150,
    dropout: float = 0.33,
    weight_dtype: str = "float32",
) -> Model:
    """Token vectors -> Dozat-Manning biaffine arc and label scores (see the module doc);
    ``weight_dtype`` as for ``stoicheia.TokenHeads.v1``."""
    weight_dtype_of(weight_dtype)
    head = build_torch_head("stoicheia_biaffine", _parser_inputs, _parser_outputs)
    head.attrs.update({"arc_hidden": int(arc_hidden), "label_hidden": int(label_hidden),
                       "dropout": float(dropout), "weight_dtype": weight_dtype})
    model: Model = Model("stoicheia_biaffine_parser", _parser_forward, layers=[tok2vec, head],
                         refs={"tok2vec": tok2vec, "head": head})
    return model
