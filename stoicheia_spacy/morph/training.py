"""Shared pieces of the morphosyntax pipes: grouped softmax losses, sentence cuts, and
:class:`HeadPipe` (a ``TrainablePipe`` whose torch head is sized at ``initialize`` and
rebuilt from ``cfg`` before its weights are read back)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import srsly
import torch
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model

from ..errors import ConfigError
from .heads import ensure_torch_head

#: Tokens made only of these characters end a sentence when a Doc has no sentence starts.
SENTENCE_FINAL = frozenset(".;;·· !?")


def grouped_softmax_loss(logits: np.ndarray, gold: np.ndarray, sizes: Sequence[int]) -> tuple[float, np.ndarray]:
    """Summed cross-entropy of several softmax groups; ``gold (N, G)`` holds class ids, -1 = no gold.

    Returns (mean loss per token with gold, gradient w.r.t. ``logits`` of that mean).
    """
    logits = np.asarray(logits, dtype=np.float32)
    gold = np.asarray(gold, dtype=np.int64).reshape(len(logits), len(sizes))
    d = np.zeros_like(logits)
    n = max(int((gold >= 0).any(axis=1).sum()), 1)
    loss = 0.0
    start = 0
    rows = np.arange(len(logits))
    for g, size in enumerate(sizes):
        block = logits[:, start:start + size]
        shifted = block - block.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        target = gold[:, g]
        known = target >= 0
        tgt = np.where(known, target, 0)
        loss -= float(np.log(probs[rows, tgt] + 1e-12)[known].sum())
        grad = probs.copy()
        grad[rows, tgt] -= 1.0
        d[:, start:start + size] = grad * known[:, None] / n
        start += size
    return loss / n, d


def softmax_xent_rows(scores: np.ndarray, gold: np.ndarray) -> tuple[float, np.ndarray, int]:
    """Cross-entropy over the last axis of ``scores (..., C)`` with ``gold (...)`` (-1 = none).

    Returns (summed loss, gradient of the summed loss, number of rows with gold).
    """
    shifted = scores - scores.max(axis=-1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=-1, keepdims=True)
    known = gold >= 0
    tgt = np.where(known, gold, 0)
    picked = np.take_along_axis(probs, tgt[..., None], axis=-1)[..., 0]
    loss = float(-np.log(picked + 1e-12)[known].sum())
    grad = probs
    np.put_along_axis(grad, tgt[..., None], np.take_along_axis(grad, tgt[..., None], -1) - 1.0, -1)
    grad *= known[..., None]
    return loss, grad.astype(np.float32), int(known.sum())


def sentence_lengths(doc: Doc) -> list[int]:
    """Token counts of a Doc's sentences: its sentence starts when set (a senter, gold
    sentences), else cut after tokens made only of sentence-final punctuation
    (``. ; ; · ·  ! ?``), the last sentence running to the end of the Doc."""
    n = len(doc)
    if n == 0:
        return []
    if doc.has_annotation("SENT_START"):
        starts = [i for i, tok in enumerate(doc) if i == 0 or tok.is_sent_start]
    else:
        starts = [0] + [i + 1 for i, tok in enumerate(doc[:-1]) if set(tok.text) <= SENTENCE_FINAL and tok.text]
    bounds = [*starts, n]
    return [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def gold_sentence_lengths(example: Example) -> list[int]:
    """Sentence lengths of ``example.predicted`` from the reference's sentence starts."""
    starts = example.get_aligned_sent_starts()
    n = len(example.predicted)
    cuts = [0] + [i for i in range(1, n) if starts[i] == 1]
    bounds = [*cuts, n]
    return [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


class HeadPipe(TrainablePipe):
    """A trainable pipe with a lazily sized torch head (subclasses define the sizes)."""

    def __init__(self, vocab: Vocab, model: Model, name: str, **cfg: Any) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: dict[str, Any] = dict(cfg)

    # -- to be defined by subclasses
    def make_module(self, n_in: int) -> torch.nn.Module:  # pragma: no cover - abstract
        raise NotImplementedError

    def init_labels(self, examples: list[Example]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared
    def _head_node(self) -> Model:
        return self.model.get_ref("head")

    def _build(self) -> None:
        if "n_in" not in self.cfg:
            raise ConfigError(f"'{self.name}' has no stored input width: initialize it first")
        ensure_torch_head(self._head_node(), self.make_module(int(self.cfg["n_in"])))

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Language | None = None,
                   **kwargs: Any) -> None:
        """Collect labels from the training examples, size and build the head."""
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self.init_labels(list(get_examples()))
        sample = [eg.predicted for eg in islice(get_examples(), 8)]
        tok2vec = self.model.get_ref("tok2vec")
        tok2vec.initialize(X=sample)
        vectors = tok2vec.predict(sample)
        self.cfg["n_in"] = int(vectors[0].shape[1])
        self._build()

    def finish_update(self, sgd: Any) -> None:
        """Apply the optimizer to every node (torch shims included)."""
        self.model.finish_update(sgd)

    # -- serialization
    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """``cfg`` and the model's bytes (torch weights as safetensors)."""
        return srsly.msgpack_dumps({"cfg": self.cfg, "model": self.model.to_bytes()})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> HeadPipe:
        """Read :meth:`to_bytes` output: rebuild the head from ``cfg``, then load the weights."""
        data = srsly.msgpack_loads(bytes_data)
        self.cfg.update(data["cfg"])
        self._build()
        self.model.from_bytes(data["model"])
        return self

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> None:
        """Write ``cfg`` (JSON) and ``model`` (bytes) into ``path``."""
        util.to_disk(path, {"cfg": lambda p: srsly.write_json(p, self.cfg),
                            "model": lambda p: self._write_model(p)}, exclude)

    def _write_model(self, path: Path) -> None:
        path.write_bytes(self.model.to_bytes())

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> HeadPipe:
        """Read what :meth:`to_disk` wrote."""
        path = Path(path)
        self.cfg.update(srsly.read_json(path / "cfg"))
        self._build()
        self.model.from_bytes((path / "model").read_bytes())
        return self


#: Default ``[model]`` of the token-level heads (morphologizer, lemmatizer): TokenHeads on the
#: shared encoder through a listener and the word pooler.
DEFAULT_TOKEN_HEADS_MODEL = """
[model]
@architectures = "stoicheia.TokenHeads.v1"
hidden_width = 256
dropout = 0.33

[model.tok2vec]
@architectures = "stoicheia.StoicheiaListener.v1"
upstream = "*"
grad_factor = 1.0

[model.tok2vec.pooling]
@architectures = "stoicheia.WordPooler.v1"
"""
