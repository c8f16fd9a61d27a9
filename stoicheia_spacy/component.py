"""The one way a stoicheia component hosts a model and serializes.

* :class:`SerializedPipe`: ``to_disk``/``from_disk``/``to_bytes``/``from_bytes`` through
  spaCy's ``util`` helpers over named parts, so ``exclude`` is honoured everywhere
  (``exclude=["model"]`` keeps the settings and skips the weights). Parts are ``cfg``
  (JSON settings) and ``model`` (weights), read in that order.
* :class:`StoicheiaPipe`: a ``TrainablePipe`` on that serialization whose torch
  modules sit in Thinc ``PyTorchWrapper_v3`` nodes, so the optimizer of the training
  config (``[training.optimizer]``) steps them through ``finish_update``.
* :class:`HeadPipe`: a :class:`StoicheiaPipe` whose torch head is sized at
  ``initialize`` and rebuilt from its data before its weights are read back; its settings
  are one frozen object (a config block), its data ``data.json``.
* :func:`link_listeners`: connect every listener / backbone reference to its encoder
  with the components' public ``find_listeners`` (what ``nlp.initialize`` does), for
  components added after initialization.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from types import MappingProxyType
from typing import Any

import srsly
import torch
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model

from .errors import ConfigError
from .heads import ensure_torch_head

#: Serialized parts, in reading order.
PARTS: tuple[str, ...] = ("cfg", "model")
#: A :class:`HeadPipe`'s data file (labels, tables, the head's input width) beside its weights.
DATA_FILE = "data.json"


def read_json(path: Path) -> Any:
    """A JSON file read exactly (the standard library: srsly's reader rounds some floats)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> None:
    """A JSON file written exactly (srsly's writer keeps 10 significant digits)."""
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def _plain(value: Any) -> Any:
    """``value`` as config values: tuples as lists, mappings as dicts."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def settings_values(settings: Any) -> dict[str, Any]:
    """The fields of a frozen settings object as plain config values (its block's arguments)."""
    return {f.name: _plain(getattr(settings, f.name)) for f in dataclasses.fields(settings) if f.init}


class SerializedPipe:
    """Serialization over the parts ``cfg`` and ``model`` (see the module doc).

    Subclasses hold ``self.cfg`` and override the ``model_*`` hooks; the disk hooks get
    the component folder (layouts stay those of the released files)."""

    cfg: Any  # a dict, or a read-only mapping of a settings object
    settings: Any  # the frozen settings object, in a component that has one

    #: True for a component whose settings are a config block (``config.cfg`` holds them):
    #: it writes no ``cfg`` part (its data go through the ``model`` part), and reads one only
    #: from a pipeline saved before (:meth:`set_cfg`).
    settings_in_config: bool = False

    #: the pipeline this pipe belongs to (:meth:`bind`), whose config records its settings
    _pipeline: weakref.ReferenceType[Language] | None = None

    def bind(self, nlp: Language) -> Any:
        """Remember the pipeline that created this pipe (its factory calls this), so that
        :meth:`record_settings` can keep ``[components.NAME.settings]`` of ``nlp.config`` equal
        to the pipe's settings."""
        self._pipeline = weakref.ref(nlp)
        return self

    def record_settings(self) -> None:
        """Write the current settings into ``[components.NAME.settings]`` of the pipeline's
        config, so ``nlp.config``, ``nlp.to_disk`` and ``nlp.to_bytes`` carry what
        :meth:`configure` changed (config.cfg is the one carrier of settings). A pipe without
        a settings block, or not (or no longer) in its pipeline, records nothing."""
        nlp = self._pipeline() if self._pipeline is not None else None
        name = getattr(self, "name", None)
        if nlp is None or name not in nlp.component_names or nlp.get_pipe(name) is not self:
            return
        block = nlp.get_pipe_config(name).get("settings")
        settings = getattr(self, "settings", None)
        if not isinstance(block, dict) or "@misc" not in block or not dataclasses.is_dataclass(settings):
            return
        nlp.get_pipe_config(name)["settings"] = {"@misc": block["@misc"], **settings_values(settings)}

    @contextlib.contextmanager
    def settings_for_call(self, changes: Mapping[str, Any]) -> Iterator[Any]:
        """The settings with ``changes`` for one ``nlp(text, component_cfg=...)`` or
        ``nlp.pipe(texts, component_cfg=...)`` call: validated as :meth:`configure` validates
        them, not recorded in the pipeline's config, the pipeline's own settings back after."""
        saved = self.settings
        if changes:
            self.settings = saved.replace(**changes)
        try:
            yield self.settings
        finally:
            self.settings = saved

    # -- hooks
    def load_weights(self, weights: str | Path | None) -> bool:
        """The ``weights`` setting of ``[initialize.components.NAME]``: read the saved
        component folder ``weights`` (what :meth:`to_disk` wrote, or the folder shipped
        beside a model) with :meth:`from_disk`; False when no folder is named."""
        if weights is None:
            return False
        folder = Path(weights)
        if not folder.is_dir():
            raise ConfigError(f"[initialize.components.{getattr(self, 'name', '?')}] weights: no folder {folder}")
        self.from_disk(folder)
        return True

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """Apply settings read back (validate here)."""
        self.cfg.update(cfg)

    def model_to_disk(self, folder: Path) -> None:
        """Write the weights into ``folder`` (default: the ``model`` bytes file)."""
        data = self.model_to_bytes()
        if data:
            (folder / "model").write_bytes(data)

    def model_from_disk(self, folder: Path) -> None:
        """Read what :meth:`model_to_disk` wrote."""
        if (folder / "model").is_file():
            self.model_from_bytes((folder / "model").read_bytes())

    def model_to_bytes(self) -> bytes:
        """The weights as bytes (empty: nothing to save)."""
        return b""

    def model_from_bytes(self, data: bytes) -> None:
        """Read what :meth:`model_to_bytes` wrote."""

    # -- spaCy API
    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> None:
        """Write ``cfg`` and the weights into the folder ``path``."""
        path = Path(path)
        if self.settings_in_config:
            exclude = [*exclude, "cfg"]
        util.to_disk(path, {"cfg": lambda p: srsly.write_json(p, dict(self.cfg)),
                            "model": lambda p: self.model_to_disk(p.parent)}, exclude)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> Any:
        """Read what :meth:`to_disk` wrote (a missing ``cfg`` keeps the current settings)."""
        path = Path(path)
        util.from_disk(path, {"cfg": lambda p: self.set_cfg(read_json(p)) if p.is_file() else None,
                              "model": lambda p: self.model_from_disk(p.parent)}, exclude)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """``cfg`` and the weights as one msgpack message."""
        getters: dict[str, Callable[[], Any]] = {"cfg": lambda: dict(self.cfg), "model": self.model_to_bytes}
        if self.settings_in_config:
            del getters["cfg"]
        return bytes(util.to_bytes(getters, exclude))

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> Any:
        """Read what :meth:`to_bytes` wrote."""
        setters: dict[str, Callable[[Any], Any]] = {"cfg": lambda c: self.set_cfg(dict(c)),
                                                     "model": self.model_from_bytes}
        util.from_bytes(bytes_data, setters, exclude)
        return self


class StoicheiaPipe(SerializedPipe, TrainablePipe):
    """A trainable component: ``cfg`` + a Thinc model whose torch parts are
    ``PyTorchWrapper_v3`` nodes (stepped by the training config's optimizer)."""

    def __init__(self, vocab: Vocab, model: Model, name: str, **cfg: Any) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = dict(cfg)

    def model_to_bytes(self) -> bytes:
        return bytes(self.model.to_bytes())

    def model_from_bytes(self, data: bytes) -> None:
        if data:
            self.model.from_bytes(data)

    def finish_update(self, sgd: Any) -> None:
        """Apply the optimizer to every node (torch shims included)."""
        self.model.finish_update(sgd)


class HeadPipe(StoicheiaPipe):
    """A trainable pipe with a lazily sized torch head (subclasses define the sizes).

    Its settings are one frozen object (``settings``, the ``[components.NAME.settings]``
    block; ``cfg`` is a read-only view, :meth:`configure` changes it); its data (head input
    width, labels, tables) are the dict ``data``, saved as ``data.json`` beside the weights.
    A ``cfg`` file of a component saved before gives its data (and, read by ``from_disk``,
    its settings; a ``weights`` folder gives data only)."""

    settings_in_config = True
    settings: Any  # a frozen settings object (stoicheia_spacy.morph.settings)
    _data_only = False  # True while initialize reads a weights folder

    def __init__(self, vocab: Vocab, model: Model, name: str, *, settings: Any, **data: Any) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.settings = settings
        #: the component's data (``data.json``): labels, tables, the head's input width
        self.data: dict[str, Any] = dict(data)

    @property
    def cfg(self) -> Mapping[str, Any]:
        """The settings as a read-only mapping (change them with :meth:`configure`)."""
        return MappingProxyType(self.settings.to_dict())

    def configure(self, **changes: Any) -> Any:
        """Replace the settings with a validated copy holding ``changes`` (unknown names raise
        ``ConfigError`` naming the options)."""
        self.settings = self.settings.replace(**changes)
        self.record_settings()
        return self.settings

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """The ``cfg`` file of a component saved before the settings block (read, never
        written): its data, and, unless read from a ``weights`` folder, its settings."""
        names = self.settings.names()
        self.data.update({k: v for k, v in cfg.items() if k not in names})
        settings = {k: v for k, v in cfg.items() if k in names}
        if settings and not self._data_only:
            self.configure(**settings)

    def load_weights(self, weights: str | Path | None) -> bool:
        """Read a saved component folder's data and weights; the settings stay the config's."""
        self._data_only = True
        try:
            return super().load_weights(weights)
        finally:
            self._data_only = False

    # -- to be defined by subclasses
    def make_module(self, n_in: int) -> torch.nn.Module:  # pragma: no cover - abstract
        raise NotImplementedError

    def init_labels(self, examples: list[Example]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared
    def _head_node(self) -> Model:
        return self.model.get_ref("head")

    def _build(self) -> None:
        if "n_in" not in self.data:
            raise ConfigError(f"'{self.name}' has no stored input width: initialize it first")
        ensure_torch_head(self._head_node(), self.make_module(int(self.data["n_in"])))

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Language | None = None,
                   weights: str | None = None, **kwargs: Any) -> None:
        """Collect labels from the training examples, size and build the head; with
        ``weights`` (a saved component folder) read labels, head and weights from it instead."""
        if self.load_weights(weights):
            return
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self.init_labels(list(get_examples()))
        sample = [eg.predicted for eg in islice(get_examples(), 8)]
        tok2vec = self.model.get_ref("tok2vec")
        tok2vec.initialize(X=sample)
        vectors = tok2vec.predict(sample)
        self.data["n_in"] = int(vectors[0].shape[1])
        self._build()

    def set_data(self, data: dict[str, Any]) -> None:
        """Data read back (``data.json``); subclasses drop their caches here."""
        self.data = dict(data)

    def model_to_disk(self, folder: Path) -> None:
        """``data.json`` (the data) and ``model`` (the weights)."""
        write_json(folder / DATA_FILE, self.data)
        (folder / "model").write_bytes(bytes(self.model.to_bytes()))

    def model_from_disk(self, folder: Path) -> None:
        """Read what :meth:`model_to_disk` wrote (an older folder has its data in ``cfg``)."""
        if (folder / DATA_FILE).is_file():
            self.set_data(read_json(folder / DATA_FILE))
        if (folder / "model").is_file():
            self._load_model((folder / "model").read_bytes())

    def model_to_bytes(self) -> bytes:
        return bytes(srsly.msgpack_dumps(self.parts_to_bytes()))

    def model_from_bytes(self, data: bytes) -> None:
        self.parts_from_bytes(srsly.msgpack_loads(data) if data else {})

    def parts_to_bytes(self) -> dict[str, Any]:
        """What :meth:`model_to_bytes` packs: the data and the weights (a subclass adds its files)."""
        return {"data": self.data, "model": bytes(self.model.to_bytes())}

    def parts_from_bytes(self, msg: Mapping[str, Any]) -> None:
        """Read what :meth:`parts_to_bytes` gave."""
        if "data" in msg:
            self.set_data(dict(msg["data"]))
        self._load_model(msg.get("model", b""))

    def _load_model(self, data: bytes) -> None:
        """Rebuild the head from ``data``, then load the weights."""
        self._build()
        self.model.from_bytes(data)


def link_listeners(nlp: Language) -> None:
    """Connect listeners and backbone references to their upstream pipes (public API:
    each pipe's ``find_listeners``, as ``nlp.initialize`` does)."""
    for _, upstream in nlp.pipeline:
        find = getattr(upstream, "find_listeners", None)
        if not callable(find):
            continue
        for _, component in nlp.pipeline:
            if component is not upstream:
                find(component)


__all__ = ["DATA_FILE", "PARTS", "read_json", "write_json", "HeadPipe", "SerializedPipe", "StoicheiaPipe", "link_listeners"]
