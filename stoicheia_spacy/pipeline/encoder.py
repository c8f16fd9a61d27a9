"""The ``stoicheia_encoder`` pipe: one backbone forward per batch, shared through listeners.

Downstream components embed a ``stoicheia.StoicheiaListener.v1``; during training the
pipe hands each batch's output to its listeners and backpropagates the gradients they
return (scaled by their ``grad_factor``), as spaCy's ``tok2vec`` and spacy-transformers
do. ``doc._.stoicheia`` holds a :class:`~stoicheia_spacy.models.StoicheiaDocData`.
Weights are saved as ``config.json`` + ``model.safetensors`` in the released format.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer

from ..errors import CheckpointError
from ..models.encoder import set_backbone_weights, torch_backbone
from ..models.listener import StoicheiaListener
from ..models.types import StoicheiaDocData

if not Doc.has_extension("stoicheia"):
    Doc.set_extension("stoicheia", default=None)

DEFAULT_ENCODER_MODEL = """
[model]
@architectures = "stoicheia.CharEncoder.v1"
d_model = 1024
n_heads = 16
depth = 32
char_window = 256
qk_norm = true
attn_impl = "sdpa"
n_region = null
n_century = null
use_cap_input = false
max_length = 4096
overlap = 512
"""


@Language.factory(
    "stoicheia_encoder",
    assigns=["doc._.stoicheia"],
    default_config={"model": DEFAULT_ENCODER_MODEL, "store_hidden": True, "store_logits": False},
)
def make_stoicheia_encoder(
    nlp: Language, name: str, model: Model, store_hidden: bool, store_logits: bool
) -> StoicheiaEncoderPipe:
    """Create the ``stoicheia_encoder`` pipe (weights come from a loader at initialize)."""
    return StoicheiaEncoderPipe(nlp.vocab, model, name, store_hidden=store_hidden,
                                store_logits=store_logits)


class StoicheiaEncoderPipe(TrainablePipe):
    """Run the Stoicheia backbone and share its per-letter hidden states."""

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_encoder", *,
                 store_hidden: bool = True, store_logits: bool = False) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg: dict[str, Any] = {"store_hidden": store_hidden, "store_logits": store_logits}
        self.listener_map: dict[str, list[Model]] = {}

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

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> list[StoicheiaDocData]:
        """Encode a batch of Docs in one forward (no gradients)."""
        docs = list(docs)
        self.model.attrs["with_logits"] = bool(self.cfg["store_logits"])
        try:
            return self.model.predict(docs)
        finally:
            self.model.attrs["with_logits"] = False

    def set_annotations(self, docs: Iterable[Doc], outputs: Sequence[StoicheiaDocData]) -> None:
        """Store each Doc's output as ``doc._.stoicheia``."""
        for doc, data in zip(docs, outputs, strict=True):
            if not self.cfg["store_hidden"]:
                data.hidden = None
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
    ) -> None:
        """Load the backbone weights through ``loader`` (e.g. ``stoicheia.BackboneLoader.v1``)."""
        validate_get_examples(get_examples, "StoicheiaEncoderPipe.initialize")
        if loader is not None:
            loader(self.model)

    # -------------------------------------------------------- serialization
    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> None:
        """Write ``cfg`` and the backbone as ``config.json`` + ``model.safetensors``.

        ``cfg["save_dtype"]`` (``"bfloat16"`` / ``"float16"``; default float32) sets the
        stored precision; weights are always loaded back as float32 on CPU.
        """
        import torch

        from ..backbone import save_backbone

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        dtypes = {"bfloat16": torch.bfloat16, "float16": torch.float16}
        save_backbone(torch_backbone(self.model), path, dtype=dtypes.get(str(self.cfg.get("save_dtype"))))

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> StoicheiaEncoderPipe:
        """Read what :meth:`to_disk` wrote."""
        from ..backbone import load_backbone

        path = Path(path)
        if (path / "cfg").exists():
            self.cfg.update(srsly.read_json(path / "cfg"))
        if not (path / "model.safetensors").is_file():
            raise CheckpointError(f"{path} has no model.safetensors")
        set_backbone_weights(self.model, load_backbone(path))
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize ``cfg`` and the safetensors checkpoint to bytes."""
        with tempfile.TemporaryDirectory() as tmp:
            self.to_disk(tmp)
            files = {name: (Path(tmp) / name).read_bytes() for name in ("config.json", "model.safetensors")}
        return srsly.msgpack_dumps({"cfg": self.cfg, **files})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> StoicheiaEncoderPipe:
        """Read what :meth:`to_bytes` wrote."""
        data = srsly.msgpack_loads(bytes_data)
        with tempfile.TemporaryDirectory() as tmp:
            srsly.write_json(Path(tmp) / "cfg", data["cfg"])
            for name in ("config.json", "model.safetensors"):
                (Path(tmp) / name).write_bytes(data[name])
            return self.from_disk(tmp)
