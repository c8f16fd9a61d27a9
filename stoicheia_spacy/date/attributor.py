"""The ``stoicheia_attributor`` pipe: ``doc._.genre`` and ``doc._.dialect`` of literary text.

It applies one calibrated model per task, trained on GLAUx passages split by author
(``projects/date``, command ``attribute``): the shipped fit is a
:class:`~stoicheia_spacy.date.attribution.TextLabelModel` (character n-gram TF-IDF of
``doc.text``, the method that beats the pooled backbone states there); a
:class:`~stoicheia_spacy.date.attribution.LabelModel` fit instead pools the encoder's
``doc._.stoicheia.hidden`` (:func:`stoicheia_spacy.date.dating.pool_states`; place the pipe after
``stoicheia_encoder``). Each task's extension holds a
:class:`~stoicheia_spacy.date.attribution.LabelEstimate` (label, probability, all probabilities);
a Doc without letters gets ``None``. The weights are read with ``from_disk``; a pipe without
weights raises :class:`~stoicheia_spacy.errors.ConfigError`.

It is not part of the default pipeline: GLAUx files the Homeric hymns (hexameter, Ionic/Epic)
under "Lyric poetry", so any classifier fitted on its genres calls the *Odyssey* lyric
(``projects/date/metrics/attribute_eval.json``, ``probe``). The GLAUx fit ships beside the
default model (not named by its ``config.cfg``); :func:`~stoicheia_spacy.assembly.extend` adds it to a pipeline from ``attributor.cfg``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc

from ..assets import default_model_dir
from ..component import SerializedPipe
from ..errors import ConfigError
from .attribution import LabelModel, TextLabelModel, label_model_from_bytes
from .dating import DEFAULT_LAYERS, doc_vector

#: The tasks, each the name of the Doc extension it sets.
TASKS: tuple[str, ...] = ("genre", "dialect")

for _task in TASKS:
    if not Doc.has_extension(_task):
        Doc.set_extension(_task, default=None)


@Language.factory(
    "stoicheia_attributor",
    assigns=[f"doc._.{task}" for task in TASKS],
    requires=["doc._.stoicheia"],
    default_config={"layers": list(DEFAULT_LAYERS)},
)
def make_stoicheia_attributor(nlp: Language, name: str, layers: list[int]) -> StoicheiaAttributor:
    """Create the attributor pipe (weights: ``from_disk``)."""
    return StoicheiaAttributor(name, layers=layers)


class StoicheiaAttributor(SerializedPipe, Pipe):
    """Genre and dialect of Docs from the encoder's pooled hidden states (see the module docstring)."""

    def __init__(self, name: str = "stoicheia_attributor", *, layers: Iterable[int] = DEFAULT_LAYERS,
                 models: dict[str, LabelModel | TextLabelModel] | None = None) -> None:
        self.name = name
        self.cfg: dict[str, Any] = {}
        self.set_cfg({"layers": list(layers)})
        self.models: dict[str, LabelModel | TextLabelModel] = dict(models or {})
        unknown = set(self.models) - set(TASKS)
        if unknown:
            raise ConfigError(f"stoicheia_attributor tasks are {TASKS}, got {sorted(unknown)}")

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """Settings read back: the pooled ``layers``."""
        merged = {**self.cfg, **cfg}
        self.cfg = {"layers": [int(x) for x in merged["layers"]]}

    def model_to_bytes(self) -> bytes:
        return srsly.msgpack_dumps({task: model.to_bytes() for task, model in self.models.items()}) if self.models else b""

    def model_from_bytes(self, data: bytes) -> None:
        if data:
            self.models = {task: label_model_from_bytes(blob) for task, blob in srsly.msgpack_loads(data).items()}

    def __call__(self, doc: Doc) -> Doc:
        for task, estimate in self.attribute(doc).items():
            setattr(doc._, task, estimate)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 64) -> Iterator[Doc]:
        """Set ``doc._.genre`` and ``doc._.dialect`` on each Doc; a Doc that fails goes to the
        pipe's error handler (``nlp.set_error_handler``; the default raises)."""
        handler = self.get_error_handler()
        for doc in stream:
            try:
                self(doc)
            except Exception as error:
                handler(self.name, self, [doc], error)
                continue
            yield doc

    def attribute(self, doc: Doc) -> dict[str, Any]:
        """Task -> :class:`~stoicheia_spacy.date.attribution.LabelEstimate` (None: no letters)."""
        if not self.models:
            raise ConfigError("stoicheia_attributor has no weights: load them with from_disk "
                              "(projects/date, command 'attribute')")
        if not any(ch.isalpha() for ch in doc.text):
            return dict.fromkeys(self.models)
        out: dict[str, Any] = {}
        vector = None
        for task, model in self.models.items():
            if isinstance(model, TextLabelModel):
                out[task] = model.estimate(doc.text)
                continue
            if vector is None:
                vector = doc_vector(doc, "stoicheia_attributor", tuple(self.cfg["layers"]))
            out[task] = None if vector is None else model.estimate(vector)
        return out

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None,
                   weights: str | None = None) -> None:
        """``weights`` (``[initialize.components.NAME]``): the folder fitted by ``projects/date``
        (``cfg`` + ``model``), read with ``from_disk``."""
        if weights is not None and not (Path(weights) / "model").is_file():
            raise ConfigError(f"no {self.name} weights in {weights} (expected 'cfg' and 'model')")
        self.load_weights(weights)


def packaged_weights() -> Path:
    """Folder of the shipped attributor weights: ``attributor/`` beside the default model
    (``projects/date`` command ``attribute``; derived from GLAUx, CC BY-SA 4.0, so they ship
    with the model, not the code)."""
    return default_model_dir() / "attributor"


__all__ = ["TASKS", "StoicheiaAttributor", "make_stoicheia_attributor", "packaged_weights"]
