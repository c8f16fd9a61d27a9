"""The ``stoicheia_dater`` pipe: ``doc._.date`` from the words of the Doc or the encoder's pooled states.

It runs no backbone. Its weights are one of two models trained on dated documentary papyri
(``projects/date``, command ``train``): a :class:`~stoicheia_spacy.dating_text.TextDateModel`
(the shipped one, the best of the measured arms: a weighted median of the most similar dated
papyri by word n-grams of ``doc.text``), or a :class:`~stoicheia_spacy.dating.DateModel`
over the encoder's pooled states (``doc._.stoicheia.hidden``,
:func:`stoicheia_spacy.dating.pool_states`; then place it after ``stoicheia_encoder`` with
``store_hidden = true``, the default). ``doc._.date`` is a
:class:`~stoicheia_spacy.dating.DateEstimate`: mean year, a 90 % interval and the
histogram over 25-year bins. The weights are read with ``from_disk`` (a folder written by
``to_disk``; the PaDoC fit ships with the default model, listed in its ``pipeline.json``,
:func:`add_dater`); a pipe without weights raises :class:`~stoicheia_spacy.errors.ConfigError`. A Doc without letters gets ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc

from ..dating import DEFAULT_LAYERS, DateModel, doc_vector
from ..dating_text import TextDateModel, load_date_model
from ..errors import ConfigError
from .base import SerializedPipe

if not Doc.has_extension("date"):
    Doc.set_extension("date", default=None)


@Language.factory(
    "stoicheia_dater",
    assigns=["doc._.date"],
    default_config={"layers": list(DEFAULT_LAYERS), "level": 0.9},
)
def make_stoicheia_dater(nlp: Language, name: str, layers: list[int], level: float) -> StoicheiaDater:
    """Create the dater pipe (weights: ``from_disk``)."""
    return StoicheiaDater(name, layers=layers, level=level)


class StoicheiaDater(SerializedPipe, Pipe):
    """Date Docs from their words or the encoder's pooled hidden states (see the module docstring)."""

    def __init__(self, name: str = "stoicheia_dater", *, layers: Iterable[int] = DEFAULT_LAYERS,
                 level: float = 0.9, model: DateModel | TextDateModel | None = None) -> None:
        self.name = name
        self.cfg: dict[str, Any] = {}
        self.set_cfg({"layers": list(layers), "level": level})
        self.date_model = model

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """Settings read back: pooled ``layers`` and the interval ``level``."""
        merged = {**self.cfg, **cfg}
        if not 0.0 < float(merged["level"]) < 1.0:
            raise ConfigError(f"stoicheia_dater level must lie in (0, 1), got {merged['level']}")
        self.cfg = {"layers": [int(x) for x in merged["layers"]], "level": float(merged["level"])}

    def model_to_bytes(self) -> bytes:
        return self.date_model.to_bytes() if self.date_model is not None else b""

    def model_from_bytes(self, data: bytes) -> None:
        if data:
            self.date_model = load_date_model(data)

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 64) -> Iterator[Doc]:
        """Set ``doc._.date`` on each Doc."""
        for doc in stream:
            doc._.date = self.estimate(doc)
            yield doc

    def estimate(self, doc: Doc) -> Any:
        """The :class:`~stoicheia_spacy.dating.DateEstimate` of ``doc`` (None: no letters)."""
        if self.date_model is None:
            raise ConfigError("stoicheia_dater has no weights: load them with from_disk "
                              "(projects/date, command 'train')")
        if isinstance(self.date_model, TextDateModel):
            return self.date_model.estimate(doc.text, self.cfg["level"])
        vector = doc_vector(doc, "stoicheia_dater", tuple(self.cfg["layers"]))
        if vector is None:
            return None
        return self.date_model.estimate(vector, self.cfg["level"])

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None) -> None:
        """Nothing to do: the weights come from ``projects/date`` (``from_disk``)."""


def packaged_weights() -> Path:
    """Folder of the shipped dater weights: ``dater/`` beside the default model (``projects/date``
    command ``train``; derived from PaDoC, CC BY 4.0, so they ship with the model, not the code)."""
    from ..assets import default_model_dir

    return default_model_dir() / "dater"


def add_dater(nlp: Language, weights: str | Path | None = None, name: str = "stoicheia_dater") -> StoicheiaDater:
    """Append a ``stoicheia_dater`` reading ``weights`` (default: :func:`packaged_weights`)."""
    dater = nlp.add_pipe("stoicheia_dater", name=name)
    folder = Path(weights) if weights is not None else packaged_weights()
    if not (folder / "model").is_file():
        raise ConfigError(f"no stoicheia_dater weights in {folder} (expected 'cfg' and 'model')")
    dater.from_disk(folder)  # type: ignore[attr-defined]
    return dater  # type: ignore[return-value]


__all__ = ["StoicheiaDater", "add_dater", "make_stoicheia_dater", "packaged_weights"]
