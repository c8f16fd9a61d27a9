"""``stoicheia_diffusion``: the backbone's own masked-diffusion objective as an auxiliary loss.

When the backbone is fine-tuned end to end with task heads (listeners), its output heads
(letters, word division, diacritics, punctuation) are what restoration and accentuation
read; this pipe keeps them trained so they do not forget. In ``update`` it corrupts the
batch's planes (:func:`stoicheia_spacy.encoder.masking.corrupt_planes`: iid masked letters
+ masked whole planes, a minimal stand-in for the published sampler of the repository's
``pretrain`` tool), runs ITS OWN corrupted forward of the shared backbone (reached through
``stoicheia.BackboneReference.v1``) and backpropagates ``weight`` × the masked cross-entropy
into the backbone's torch parameters. That is one extra backbone forward + backward per
training batch; the encoder pipe's ``finish_update`` applies those gradients together with
the listeners' (``[training.optimizer]``, e.g. ``stoicheia.SplitAdam.v1`` at the encoder
rate). At inference the pipe does nothing: it assigns no annotation and runs no forward,
so the output of the other pipes is the same with or without it. It holds no weights.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer

from ..backbone.windows import pack_planes
from ..component import StoicheiaPipe
from ..errors import ConfigError
from .masking import IGNORE, corrupt_planes
from .model import doc_inputs
from .reference import BackboneReference

DEFAULT_MODEL = """
[model]
@architectures = "stoicheia.BackboneReference.v1"
upstream = "stoicheia_encoder"
"""
#: target -> backbone output head
HEADS = {"char": "char", "boundary": "boundary", "dia": "dia", "punct": "punct"}


@Language.factory(
    "stoicheia_diffusion",
    assigns=[],
    requires=[],  # training only: it reads the encoder's backbone through its reference
    default_config={"model": Config().from_str(DEFAULT_MODEL)["model"], "weight": 0.3, "min_rate": 0.15, "max_rate": 0.5,
                    "plane_rate": 0.3, "plane_weight": 0.5, "seed": 0},
)
def make_stoicheia_diffusion(nlp: Language, name: str, model: Model, weight: float, min_rate: float,
                             max_rate: float, plane_rate: float, plane_weight: float,
                             seed: int) -> StoicheiaDiffusion:
    """Auxiliary masked-diffusion loss on the shared backbone (training only)."""
    if weight < 0 or plane_weight < 0:
        raise ConfigError(f"weight and plane_weight must be >= 0, got {weight} and {plane_weight}")
    return StoicheiaDiffusion(nlp.vocab, model, name, weight=weight, min_rate=min_rate, max_rate=max_rate,
                              plane_rate=plane_rate, plane_weight=plane_weight, seed=seed)


class StoicheiaDiffusion(StoicheiaPipe):
    """Training-only pipe: ``weight`` × (letter CE + ``plane_weight`` × plane CEs) on masked letters."""

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_diffusion", **cfg: Any) -> None:
        if not isinstance(model, BackboneReference):
            raise ConfigError(f"'{name}' needs a stoicheia.BackboneReference.v1 model, got {model.name!r}")
        super().__init__(vocab, model, name, **cfg)
        self._rng = np.random.default_rng(int(cfg.get("seed", 0)))

    @property
    def reference(self) -> BackboneReference:
        return self.model  # type: ignore[return-value]

    # -- inference: nothing
    def __call__(self, doc: Doc) -> Doc:
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterable[Doc]:
        yield from stream

    def predict(self, docs: Iterable[Doc]) -> None:
        return None

    def set_annotations(self, docs: Iterable[Doc], scores: Any) -> None:
        return None

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Language | None = None,
                   **kwargs: Any) -> None:
        """Nothing to size (no weights); checks the examples."""
        validate_get_examples(get_examples, "StoicheiaDiffusion.initialize")

    # -- training
    def loss(self, docs: list[Doc], rng: np.random.Generator) -> torch.Tensor:
        """The unweighted masked loss of one corrupted forward (with autograd)."""
        upstream = self.reference._upstream
        if upstream is None:
            self.reference.backbone()  # raises the ConfigError that says how to connect it
        attrs = upstream.attrs  # type: ignore[union-attr]
        backbone = self.reference.backbone()
        device = next(backbone.parameters()).device
        cfg = self.cfg
        corrupted = [corrupt_planes(doc_inputs(doc, attrs).planes, rng, min_rate=cfg["min_rate"],
                                    max_rate=cfg["max_rate"], plane_rate=cfg["plane_rate"]) for doc in docs]
        corrupted = [c for c in corrupted if len(c.inputs.letters)]
        if not corrupted:
            return torch.zeros((), device=device)
        batch = pack_planes([c.inputs for c in corrupted], max_length=attrs["max_length"], overlap=attrs["overlap"])
        tensors = {k: torch.from_numpy(getattr(batch, k)).to(device)
                   for k in ("input_ids", "boundary", "dia", "punct", "seg_id", "positions")}
        cap = torch.from_numpy(batch.cap).to(device) if backbone.config.use_cap_input else None
        out = backbone(tensors["input_ids"], tensors["boundary"], tensors["dia"], tensors["punct"],
                       seg_id=tensors["seg_id"], positions=tensors["positions"], cap=cap)
        index = torch.from_numpy(np.concatenate(batch.doc_index)).to(device)
        total = torch.zeros((), device=device)
        for target, head in HEADS.items():
            gold = torch.from_numpy(np.concatenate([c.targets[target] for c in corrupted])).to(device)
            if not bool((gold != IGNORE).any()):
                continue
            logits = getattr(out, head).flatten(0, 1)[index].float()
            ce = torch.nn.functional.cross_entropy(logits, gold, ignore_index=IGNORE)
            total = total + (ce if target == "char" else float(cfg["plane_weight"]) * ce)
        return total

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optimizer | None = None,
               losses: dict[str, float] | None = None) -> dict[str, float]:
        """Corrupt, forward, backpropagate ``weight`` × loss into the backbone's gradients.

        The encoder pipe's ``finish_update`` steps them (in ``nlp.update`` / ``spacy train``);
        with ``sgd`` given here, the encoder model is stepped at once."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "StoicheiaDiffusion.update")
        weight = float(self.cfg["weight"])
        if weight == 0.0 or not examples:
            return losses
        backbone = self.reference.backbone()
        was_training = backbone.training
        backbone.train()
        with torch.enable_grad():
            loss = self.loss([eg.predicted for eg in examples], self._rng)
            if loss.requires_grad:
                (weight * loss).backward()
        backbone.train(was_training)
        losses[self.name] += float(loss.detach())
        if sgd is not None:
            self.reference._upstream.finish_update(sgd)  # type: ignore[union-attr]
        return losses

    def finish_update(self, sgd: Optimizer) -> None:
        """No own weights: the encoder pipe steps the backbone."""

    def model_to_bytes(self) -> bytes:
        return b""

    def model_from_bytes(self, data: bytes) -> None:
        return None


__all__ = ["StoicheiaDiffusion", "make_stoicheia_diffusion"]
