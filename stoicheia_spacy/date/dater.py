"""The ``stoicheia_dater`` pipe: ``doc._.date`` from the words of the Doc or the encoder's pooled states.

It runs no backbone. Its weights are one of two models trained on dated documentary papyri
(``projects/date``, command ``train``): a :class:`~stoicheia_spacy.date.text.TextDateModel`
(the shipped one: a weighted median of the most similar dated papyri by word n-grams of
``doc.text``, its prior a ridge over the pooled states), or a :class:`~stoicheia_spacy.date.dating.DateModel`
over the encoder's pooled states (``doc._.stoicheia.hidden``,
:func:`stoicheia_spacy.date.dating.pool_states`; then place it after ``stoicheia_encoder`` with
``store_hidden = true``, the default). A text model fitted with pooled states as well
(:attr:`~stoicheia_spacy.date.text.TextDateModel.uses_states`) reads them from the shared
forward when the Doc carries them; in a pipeline without the encoder (or with
``store_hidden = false``) it falls back to its word-only prior and similarity. ``max_chars``
pools only the letters of the first so many characters of ``doc.text`` (the span its states
were fitted on; None: every letter). ``doc._.date`` is a
:class:`~stoicheia_spacy.date.dating.DateEstimate`: the point estimate (the weighted median year),
a 90 % interval and the histogram over 25-year bins; for a text outside what the fit applies to
(its :class:`~stoicheia_spacy.date.text.Register`: literary, or too short) ``applicable`` is False,
``reason`` says why and the interval spans the dated papyri; a short text's interval is widened. The weights are read with ``from_disk`` (a folder written by
``to_disk``; the PaDoC fit ships with the default model, named by its ``config.cfg``,
:func:`~stoicheia_spacy.assembly.extend`); a pipe without weights raises :class:`~stoicheia_spacy.errors.ConfigError`. A Doc without letters gets ``None``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.util import minibatch, registry

from ..assets import default_model_dir
from ..component import DATA_FILE, SerializedPipe, read_json, write_json
from ..encoder.states import StateNeed
from ..errors import ConfigError
from .dating import DEFAULT_LAYERS, DateModel, doc_vector, layers_need
from .text import TextDateModel, load_date_model

if not Doc.has_extension("date"):
    Doc.set_extension("date", default=None)


@dataclasses.dataclass(frozen=True)
class DaterSettings:
    """The dater's settings, validated once: the pooled encoder ``layers``, the interval
    ``level`` and ``max_chars`` (letters of the shared forward pooled; null: all). The
    ``[components.stoicheia_dater.settings]`` block (``stoicheia.DaterSettings.v1``)."""

    layers: Sequence[int] = DEFAULT_LAYERS
    level: float = 0.9
    max_chars: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(int(x) for x in self.layers))
        if not 0.0 < float(self.level) < 1.0:
            raise ConfigError(f"stoicheia_dater level must lie in (0, 1), got {self.level}")
        if self.max_chars is not None and int(self.max_chars) < 1:
            raise ConfigError(f"stoicheia_dater max_chars must be positive or null, got {self.max_chars}")

    def to_dict(self) -> dict[str, Any]:
        return {"layers": list(self.layers), "level": float(self.level), "max_chars": self.max_chars}


registry.misc.register("stoicheia.DaterSettings.v1", func=DaterSettings)

#: Settings that belong to the fitted weights (saved beside them in ``data.json``): the pooled
#: layers and the letter span the model was fitted on. ``level`` stays the config's own.
FIT_KEYS = ("layers", "max_chars")


@Language.factory(
    "stoicheia_dater",
    assigns=["doc._.date"],
    requires=["doc._.stoicheia"],  # the pooled states (a text model falls back to words without them)
    default_config={"settings": {"@misc": "stoicheia.DaterSettings.v1"}},
)
def make_stoicheia_dater(nlp: Language, name: str, settings: DaterSettings) -> StoicheiaDater:
    """Create the dater pipe (weights: ``[initialize.components.NAME] weights`` or ``from_disk``)."""
    return StoicheiaDater(name, settings=settings).bind(nlp)


class StoicheiaDater(SerializedPipe, Pipe):
    """Date Docs from their words or the encoder's pooled hidden states (see the module docstring)."""

    settings_in_config = True  # config.cfg holds the settings; to_disk writes no cfg

    def __init__(self, name: str = "stoicheia_dater", *, settings: DaterSettings | None = None,
                 model: DateModel | TextDateModel | None = None, **options: Any) -> None:
        self.name = name
        self.settings = dataclasses.replace(settings or DaterSettings(), **options)
        self.date_model = model

    @property
    def cfg(self) -> Mapping[str, Any]:
        """The settings as a read-only mapping (change them with :meth:`configure`)."""
        return MappingProxyType(self.settings.to_dict())

    def configure(self, **changes: Any) -> DaterSettings:
        """Replace the settings with a validated copy holding ``changes``, recorded in the
        pipeline's ``config.cfg`` (unknown names raise :class:`~stoicheia_spacy.errors.ConfigError`)."""
        names = {f.name for f in dataclasses.fields(DaterSettings)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ConfigError(f"unknown stoicheia_dater options {unknown}; choose from {sorted(names)}")
        self.settings = dataclasses.replace(self.settings, **changes)
        self.record_settings()
        return self.settings

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """The ``cfg`` file of a dater saved before ``data.json`` (read, never written): its
        settings, recorded in the config."""
        self.configure(**{k: cfg[k] for k in (*FIT_KEYS, "level") if k in cfg})

    def _set_fit(self, data: dict[str, Any]) -> None:
        """The pooled ``layers`` and letter span ``max_chars`` the weights were fitted on: data
        of the weights (a folder's ``data.json``), recorded in the config's settings block."""
        fit = {k: data[k] for k in FIT_KEYS if k in data}
        if fit:
            self.configure(**fit)

    def model_to_disk(self, folder: Path) -> None:
        """The weights (``model``) and the fit they need (``data.json``: layers, max_chars)."""
        super().model_to_disk(folder)
        if self.date_model is not None:
            write_json(folder / DATA_FILE, {k: self.settings.to_dict()[k] for k in FIT_KEYS})

    def model_from_disk(self, folder: Path) -> None:
        if (folder / DATA_FILE).is_file():
            self._set_fit(read_json(folder / DATA_FILE))
        super().model_from_disk(folder)

    def model_to_bytes(self) -> bytes:
        return self.date_model.to_bytes() if self.date_model is not None else b""

    def model_from_bytes(self, data: bytes) -> None:
        if data:
            self.date_model = load_date_model(data)

    def __call__(self, doc: Doc) -> Doc:
        doc._.date = self.estimate(doc)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 64) -> Iterator[Doc]:
        """Set ``doc._.date`` on each Doc; a Doc that fails goes to the pipe's error handler
        (``nlp.set_error_handler``; the default raises)."""
        handler = self.get_error_handler()
        for batch in minibatch(stream, size=batch_size):
            try:
                dates = self.estimate_many(batch)
            except Exception:  # find the Doc that fails, one at a time
                for doc in batch:
                    try:
                        doc._.date = self.estimate(doc)
                    except Exception as error:
                        handler(self.name, self, [doc], error)
                        continue
                    yield doc
                continue
            for doc, date in zip(batch, dates, strict=True):
                doc._.date = date
            yield from batch

    def estimate_many(self, docs: Sequence[Doc]) -> list[Any]:
        """:meth:`estimate` of each of ``docs``; a text model dates them in one pass
        (:meth:`~stoicheia_spacy.date.text.TextDateModel.estimate_many`, the same estimates)."""
        if self.date_model is None:
            raise ConfigError("stoicheia_dater has no weights: load them with from_disk "
                              "(projects/date, command 'train')")
        if isinstance(self.date_model, TextDateModel):
            states = [self.shared_states(doc) if self.date_model.uses_states else None for doc in docs]
            return self.date_model.estimate_many([doc.text for doc in docs], self.settings.level, states)
        return [self._vector_estimate(doc) for doc in docs]

    def estimate(self, doc: Doc) -> Any:
        """The :class:`~stoicheia_spacy.date.dating.DateEstimate` of ``doc`` (None: no letters)."""
        return self.estimate_many([doc])[0]

    def _vector_estimate(self, doc: Doc) -> Any:
        """The estimate of a pooled-state model (not a text model) for ``doc``."""
        assert self.date_model is not None and not isinstance(self.date_model, TextDateModel)
        vector = doc_vector(doc, "stoicheia_dater", tuple(self.settings.layers))
        if vector is None:
            return None
        return self.date_model.estimate(vector, self.settings.level)

    def state_needs(self) -> list[StateNeed]:
        """What the dater reads of the encoder's stack (:mod:`stoicheia_spacy.encoder.states`):
        its ``layers`` (of the letters before ``max_chars`` for a text model), nothing without
        weights or for a text model that reads no states."""
        layers = tuple(self.settings.layers)
        if self.date_model is None:
            return []
        if isinstance(self.date_model, TextDateModel):
            return [layers_need(layers, self.settings.max_chars)] if self.date_model.uses_states else []
        return [layers_need(layers)]

    def shared_states(self, doc: Doc) -> Any:
        """Pooled states of the shared forward (``doc._.stoicheia``), or None where the Doc has
        none (no encoder, ``store_hidden = false``, no letters): the word-only fallback."""
        return doc_vector(doc, self.name, tuple(self.settings.layers), max_chars=self.settings.max_chars,
                          required=False)

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None,
                   weights: str | None = None) -> None:
        """``weights`` (``[initialize.components.NAME]``): the folder fitted by ``projects/date``
        (its ``model``); the settings stay the config's (``[components.NAME.settings]``)."""
        if weights is None:
            return
        if not (Path(weights) / "model").is_file():
            raise ConfigError(f"no {self.name} weights in {weights} (expected a 'model' file)")
        self.from_disk(weights)


def packaged_weights() -> Path:
    """Folder of the shipped dater weights: ``dater/`` beside the default model (``projects/date``
    command ``train``; derived from PaDoC, CC BY 4.0, so they ship with the model, not the code)."""
    return default_model_dir() / "dater"


__all__ = ["DaterSettings", "StoicheiaDater", "make_stoicheia_dater", "packaged_weights"]
