"""The ``stoicheia_encoder`` pipe: the one place where text becomes planes and states.

It reads each Doc's Leiden / Ithaca markup once (gaps become MASK letters, see
:mod:`stoicheia_spacy.encoder.gaps`), runs ONE backbone forward per batch, and stores a
:class:`~stoicheia_spacy.encoder.types.StoicheiaDocData` as ``doc._.stoicheia``: planes, gaps,
token alignment, per-letter hidden states of every layer and the logits of every output
head (``store_logits``, default true: the accentuator decodes them). Downstream
components read it: through a ``stoicheia.StoicheiaListener.v1`` (morphosyntax, scanner;
during training the pipe hands each batch's output to its listeners and backpropagates the
gradients they return, scaled by their ``grad_factor``, as spaCy's ``tok2vec`` does), from
``doc._.stoicheia`` (accentuator), or, to run the backbone themselves, through a
``stoicheia.BackboneReference.v1`` (restorer).

Weights: the default ``[model]`` is the shape of the embedded backbone
(``embedded:grc_stoicheia_doc_clean``, 21 M parameters); ``nlp.initialize()`` loads the
weights through ``[initialize.components.stoicheia_encoder.loader]``
(``@misc = "stoicheia.BackboneLoader.v1"``), which defaults to that embedded backbone
(:data:`DEFAULT_SOURCE`) when the shape fits. Running the pipe before any weights were
loaded raises :class:`~stoicheia_spacy.errors.ConfigError` (never random outputs). Weights
are saved as ``config.json`` + ``model.safetensors`` in the released format.

Settings: how text becomes planes and windows (``notation``, ``unknown_gap_width``,
``max_gap_width``, ``hide_unmarked``, ``planes``, ``max_length``, ``overlap``) are options
of the ``[model]`` architecture (``stoicheia.CharEncoder.v1``, validated when it is built);
what the pipe keeps on each Doc is one frozen :class:`EncoderSettings`, the
``[components.stoicheia_encoder.settings]`` block (``stoicheia.EncoderSettings.v1``):
``store_hidden`` [true], ``store_logits`` [true], ``states`` [used | all] and ``precision``
[float32 | float32-fused | bfloat16 | int8]. ``states = "used"`` keeps on each Doc only what the components
after the encoder declare they read of the per-letter stack (each pooler's token vectors, the
scanner's scalar mix, the dater's layers: :mod:`stoicheia_spacy.encoder.states`), computed
chunk by chunk in the forward, instead of ``(depth + 1) x d_model`` float32 per letter;
``"all"`` keeps the whole stack as ``hidden`` (so does a pipeline without such components,
e.g. the encoder alone). ``precision`` is
the precision of inference forwards (:mod:`stoicheia_spacy.backbone.precision`; the stored
weights and training stay float32, the restorer's beam follows it; ``float32`` and
``float32-fused`` are the faithful ones, ``int8``/``bfloat16`` faster approximations, see
``docs/benchmarks.md``). Adding an option touches that class and
the code that uses it, nothing else. The stored precision (``save_dtype`` of
``[initialize.components.stoicheia_encoder]``) is read back from the saved weights; no
``cfg`` file is written.

Memory: :meth:`StoicheiaEncoderPipe.predict` trims the C heap before each forward
(Linux/glibc; outputs unchanged), so a long stream of batches does not keep the freed heap
of every earlier batch resident.
"""

from __future__ import annotations

import dataclasses
import tempfile
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import srsly
import torch
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer

from ..backbone import load_backbone, load_backbone_config, save_backbone
from ..backbone.loading import stored_dtype
from ..backbone.precision import check_precision
from ..component import StoicheiaPipe
from ..errors import CheckpointError, ConfigError
from ..heap import trim_heap
from .listener import StoicheiaListener
from .loader import create_backbone_loader
from .model import SHAPE_KEYS, set_backbone_weights, set_precision, torch_backbone
from .reference import BackboneReference
from .states import STATE_MODES, StateNeed, pipeline_needs
from .types import StoicheiaDocData

if not Doc.has_extension("stoicheia"):
    Doc.set_extension("stoicheia", default=None)

#: The backbone the default config loads at initialize (the shipped embedded model).
DEFAULT_SOURCE = "embedded:grc_stoicheia_doc_clean"

#: ``[model]`` of the default config: the embedded backbone's shape (not a paper-size model).
DEFAULT_ENCODER_MODEL = """
[model]
@architectures = "stoicheia.CharEncoder.v1"
d_model = 384
n_heads = 6
depth = 12
char_window = 256
qk_norm = true
attn_impl = "sdpa"
n_region = null
n_century = null
use_cap_input = false
max_length = 4096
overlap = 512
notation = "leiden"
unknown_gap_width = 5
max_gap_width = 128
hide_unmarked = true
"""


@dataclasses.dataclass(frozen=True)
class EncoderSettings:
    """What the encoder keeps on each Doc (see the module doc), validated once."""

    store_hidden: bool = True
    store_logits: bool = True
    precision: str = "float32"
    states: str = "used"

    def __post_init__(self) -> None:
        for name in ("store_hidden", "store_logits"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"stoicheia_encoder {name} must be true or false, got {getattr(self, name)!r}")
        check_precision(self.precision)
        if self.states not in STATE_MODES:
            raise ConfigError(f"stoicheia_encoder states must be one of {list(STATE_MODES)}, got {self.states!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, **changes: Any) -> EncoderSettings:
        """A new validated object with ``changes`` (unknown names raise ``ConfigError``)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ConfigError(f"unknown stoicheia_encoder options {unknown}; choose from {list(self.names())}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: The ``[components.stoicheia_encoder.settings]`` block.
encoder_settings = registry.misc.register("stoicheia.EncoderSettings.v1", func=EncoderSettings)


@Language.factory(
    "stoicheia_encoder",
    assigns=["doc._.stoicheia"],
    requires=[],
    default_config={"model": Config().from_str(DEFAULT_ENCODER_MODEL)["model"],
                    "settings": {"@misc": "stoicheia.EncoderSettings.v1"}},
)
def make_stoicheia_encoder(nlp: Language, name: str, model: Model, settings: EncoderSettings) -> StoicheiaEncoderPipe:
    """Create the ``stoicheia_encoder`` pipe (weights come from a loader at initialize);
    ``settings``: the ``[components.stoicheia_encoder.settings]`` block."""
    return StoicheiaEncoderPipe(nlp.vocab, model, name, settings=settings).bind(nlp)


class StoicheiaEncoderPipe(StoicheiaPipe):
    """Run the Stoicheia backbone once per batch and share its output (see the module doc)."""

    settings_in_config = True

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_encoder", *,
                 settings: EncoderSettings | None = None, **options: Any) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        base = settings if settings is not None else EncoderSettings()
        self.settings: EncoderSettings = base.replace(**options) if options else base
        set_precision(self.model, self.settings.precision)
        #: the stored precision of saved weights (``save_dtype`` at initialize, or read back)
        self.save_dtype: str | None = None
        self.listener_map: dict[str, list[Model]] = {}
        self.references: dict[str, list[BackboneReference]] = {}

    @property
    def cfg(self) -> Mapping[str, Any]:
        """The settings as a read-only mapping (change them with :meth:`configure`)."""
        return MappingProxyType(self.settings.to_dict())

    def configure(self, **changes: Any) -> EncoderSettings:
        """Replace the settings with a validated copy holding ``changes``."""
        self.settings = self.settings.replace(**changes)
        set_precision(self.model, self.settings.precision)
        self.record_settings()
        return self.settings

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """The ``cfg`` file of a pipeline saved before the settings block (read, never written)."""
        self.configure(**{k: v for k, v in cfg.items() if k in EncoderSettings.names()})
        if cfg.get("save_dtype") is not None:
            self.save_dtype = str(cfg["save_dtype"])

    # ------------------------------------------------------------ listeners
    @property
    def listeners(self) -> list[StoicheiaListener]:
        """Every listener layer registered with this pipe."""
        return [m for c in self.listening_components for m in self.listener_map[c]
                if isinstance(m, StoicheiaListener)]

    @property
    def listening_components(self) -> list[str]:
        """Names of the components that listen to this pipe."""
        return list(self.listener_map)

    def add_listener(self, listener: Model, component_name: str) -> None:
        """Register a listener and give it the encoder's width and layer count."""
        self.listener_map.setdefault(component_name, [])
        if listener not in self.listener_map[component_name]:
            self.listener_map[component_name].append(listener)
        if isinstance(listener, StoicheiaListener):
            listener._upstream = weakref.ref(self)
        for dim in ("nO", "n_layers"):
            if self.model.has_dim(dim) and not listener.has_dim(dim):
                listener.set_dim(dim, self.model.get_dim(dim))

    def remove_listener(self, listener: Model, component_name: str) -> bool:
        """Unregister a listener; True when it was registered."""
        if listener in self.listener_map.get(component_name, []):
            self.listener_map[component_name].remove(listener)
            if not self.listener_map[component_name]:
                del self.listener_map[component_name]
            return True
        return False

    def find_listeners(self, component: Any) -> None:
        """Register the listeners inside ``component`` that point at this pipe (or at "*")."""
        model = getattr(component, "model", None)
        if not isinstance(model, Model):
            return
        for node in model.walk():
            if isinstance(node, StoicheiaListener) and node.upstream_name in ("*", self.name):
                self.add_listener(node, component.name)
            elif isinstance(node, BackboneReference) and node.upstream_name in ("*", self.name):
                node.connect(self.model)
                refs = self.references.setdefault(component.name, [])
                if node not in refs:
                    refs.append(node)

    # ------------------------------------------------------------ weights
    @property
    def has_weights(self) -> bool:
        """True once weights were loaded (loader, ``from_disk``/``from_bytes``, or
        :func:`~stoicheia_spacy.encoder.model.set_backbone_weights`)."""
        return bool(self.model.attrs.get("weights_loaded"))

    def _require_weights(self) -> None:
        if not self.has_weights:
            raise ConfigError(
                f"'{self.name}' has no weights: call nlp.initialize() (the default loader reads "
                f"{DEFAULT_SOURCE!r}; set [initialize.components.{self.name}.loader] with "
                '@misc = "stoicheia.BackboneLoader.v1" and source = a checkpoint directory or hub id '
                "for another backbone) or load a saved pipeline")

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> list[StoicheiaDocData]:
        """Encode a batch of Docs in one forward (no gradients). The C heap that the previous
        batch freed is handed back first (:mod:`stoicheia_spacy.heap`): otherwise glibc keeps
        it and a long stream's RSS climbs, e.g. in spaCy's ``nlp.pipe(n_process=...)`` workers."""
        docs = list(docs)
        self._require_weights()
        trim_heap()
        self.model.attrs["with_logits"] = self.settings.store_logits
        self.model.attrs["state_needs"] = self.state_needs()
        try:
            return self.model.predict(docs)
        finally:
            self.model.attrs["with_logits"] = False
            self.model.attrs.pop("state_needs", None)

    def state_needs(self) -> tuple[StateNeed, ...] | None:
        """What the Docs keep of the per-letter stack (:mod:`stoicheia_spacy.encoder.states`):
        None, the whole stack (``states = "all"``, a pipeline whose components declare no need
        or one that needs the whole stack, a pipe not bound to a pipeline); else the needs of
        the components after this pipe, disabled ones included (empty with ``store_hidden =
        false``: nothing)."""
        if not self.settings.store_hidden:
            return ()
        nlp = self._pipeline() if self._pipeline is not None else None
        if self.settings.states == "all" or nlp is None or self.name not in nlp.component_names:
            return None
        # disabled components too (nlp.select_pipes): they may read these Docs afterwards
        after = nlp.components[nlp.component_names.index(self.name) + 1:]
        return pipeline_needs((proc for _, proc in after), self.name)

    def set_annotations(self, docs: Iterable[Doc], outputs: Sequence[StoicheiaDocData]) -> None:
        """Store each Doc's output as ``doc._.stoicheia``."""
        for doc, data in zip(docs, outputs, strict=True):
            if not self.settings.store_hidden:
                data.hidden = None
                data.states = {}
            doc._.stoicheia = data

    # ------------------------------------------------------------- training
    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optimizer | None = None,
        losses: dict[str, float] | None = None,
    ) -> dict[str, float]:
        """Run the backbone once and hand its output to the listeners.

        When every listener has ``grad_factor`` 0 the forward runs without gradients
        and the backbone is never updated.
        """
        if losses is None:
            losses = {}
        examples = list(examples)
        validate_examples(examples, "StoicheiaEncoderPipe.update")
        losses.setdefault(self.name, 0.0)
        docs = [eg.predicted for eg in examples]
        self._require_weights()
        trainable = any(getattr(m, "grad_factor", 1.0) != 0.0 for m in self.listeners)
        if trainable:
            outputs, bp_outputs = self.model.begin_update(docs)
        else:
            outputs, bp_outputs = self.model.predict(docs), None
        d_hidden: list[Any] = [None] * len(docs)

        def accumulate(d_docs: Sequence[Any]) -> list[Any]:
            for i, d in enumerate(d_docs):
                if d is None:
                    continue
                losses[self.name] += float((d**2).sum())
                d_hidden[i] = d if d_hidden[i] is None else d_hidden[i] + d
            return []

        def backprop(d_docs: Sequence[Any]) -> list[Any]:
            accumulate(d_docs)
            if bp_outputs is not None and any(d is not None for d in d_hidden):
                bp_outputs(d_hidden)
                if sgd is not None:
                    self.finish_update(sgd)
            d_hidden[:] = [None] * len(docs)
            return []

        batch_id = StoicheiaListener.get_batch_id(docs)
        for listener in self.listeners[:-1]:
            listener.receive(batch_id, outputs, accumulate)
        if self.listeners:
            self.listeners[-1].receive(batch_id, outputs, backprop)
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any) -> tuple[float, Any]:
        """The encoder has no loss of its own: its gradient comes from the listeners."""
        return 0.0, None

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Language | None = None,
        loader: Callable[[Model], Model] | None = None,
        save_dtype: str | None = None,
    ) -> None:
        """Load the backbone weights through ``loader`` (e.g. ``stoicheia.BackboneLoader.v1``).

        ``save_dtype`` (``"bfloat16"``/``"float16"``) keeps a half-precision release
        half-precision when the pipeline is saved (the stored weights keep it).

        Without a loader, weights already set are kept; else the embedded backbone
        (:data:`DEFAULT_SOURCE`) is loaded when the pipe has its shape; another shape needs
        a loader (:class:`ConfigError` names it)."""
        validate_get_examples(get_examples, "StoicheiaEncoderPipe.initialize")
        if save_dtype is not None:
            if save_dtype not in ("bfloat16", "float16", "float32"):
                raise ConfigError(f"save_dtype must be bfloat16, float16 or float32, got {save_dtype!r}")
            self.save_dtype = save_dtype
        if loader is None and self.has_weights:
            return  # weights were set before initialize (e.g. stoicheia package): keep them
        if loader is None:
            want = torch_backbone(self.model).config.to_dict()
            have = load_backbone_config(DEFAULT_SOURCE).to_dict()
            diff = [k for k in SHAPE_KEYS if want.get(k) != have.get(k)]
            if diff:
                raise ConfigError(
                    f"'{self.name}' has no loader and its backbone shape differs from the default "
                    f"{DEFAULT_SOURCE!r} ({', '.join(diff)}): set [initialize.components.{self.name}.loader] "
                    '(@misc = "stoicheia.BackboneLoader.v1", source = a checkpoint directory or hub id)')
            loader = create_backbone_loader(DEFAULT_SOURCE)
        loader(self.model)

    # -------------------------------------------------------- serialization
    def model_to_disk(self, folder: Path) -> None:
        """The backbone as ``config.json`` + ``model.safetensors`` (released format).

        :attr:`save_dtype` (``"bfloat16"`` / ``"float16"``; default float32) sets the
        stored precision; weights are always loaded back as float32 on CPU (and
        :attr:`save_dtype` from the stored file).
        """
        dtypes = {"bfloat16": torch.bfloat16, "float16": torch.float16}
        save_backbone(torch_backbone(self.model), folder, dtype=dtypes.get(str(self.save_dtype)))

    def model_from_disk(self, folder: Path) -> None:
        """Read what :meth:`model_to_disk` wrote."""
        if not (folder / "model.safetensors").is_file():
            raise CheckpointError(f"{folder} has no model.safetensors")
        set_backbone_weights(self.model, load_backbone(folder))

        stored = stored_dtype(folder)
        self.save_dtype = {"BF16": "bfloat16", "F16": "float16"}.get(str(stored), self.save_dtype)

    def model_to_bytes(self) -> bytes:
        """``config.json`` and ``model.safetensors`` in one msgpack message."""
        with tempfile.TemporaryDirectory() as tmp:
            self.model_to_disk(Path(tmp))
            files = {name: (Path(tmp) / name).read_bytes() for name in ("config.json", "model.safetensors")}
        return bytes(srsly.msgpack_dumps(files))

    def model_from_bytes(self, data: bytes) -> None:
        """Read what :meth:`model_to_bytes` wrote."""
        files = srsly.msgpack_loads(data)
        with tempfile.TemporaryDirectory() as tmp:
            for name, blob in files.items():
                (Path(tmp) / name).write_bytes(blob)
            self.model_from_disk(Path(tmp))
