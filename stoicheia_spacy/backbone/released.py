"""Recognise a released Stoicheia checkpoint's kind and read its task tensors.

Kinds (``/work``-independent restatement of the published layouts):

- ``"backbone"``: plain ``char_bert`` tensors (``e_char.weight`` …, optionally all under
  ``model.``);
- ``"restoration"``: a backbone with ``e_region.weight`` and ``e_century.weight``;
- ``"meter"``: backbone under ``encoder.`` plus ``head_mac.weight``/``head_scan.weight``
  (and ``mix_w`` when the scalar mix is on) — the meter and macronizer releases;
- ``"tagger_parser"``: ``model_type: "char_bert_joint"``, backbone under
  ``tagger.encoder.``, tagger heads under ``tagger.``, parser under ``biaffine.``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open

from ..errors import CheckpointError

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"

#: Backbone tensor prefix of each kind (what ``load_backbone(..., prefix=...)`` takes).
BACKBONE_PREFIX: dict[str, str | None] = {
    "backbone": None, "restoration": None, "meter": "encoder.", "tagger_parser": "tagger.encoder.",
}

#: Released kinds whose encoder feeds every plane as the text writes it (``hide_unmarked =
#: false``), as the research processors do: the meter model reads unaccented text's planes
#: as "no diacritic", not unknown.
AS_WRITTEN_KINDS: frozenset[str] = frozenset({"meter"})


@dataclass(frozen=True)
class ReleasedComponents:
    """What a released task checkpoint adds to a pipeline, as configuration: ``blocks`` are
    the ``[components.NAME]`` blocks (factory and config, in pipeline order) and ``fill``,
    per name, puts the checkpoint's tensors into the built component. A room's adapter
    writes it; :func:`stoicheia_spacy.assembly.extend` builds it."""

    blocks: dict[str, dict[str, Any]]
    fill: dict[str, Callable[[Any], None]] = field(default_factory=dict)


@dataclass
class ReleasedCheckpoint:
    """A task checkpoint: kind, config, and every tensor outside the backbone prefix."""

    directory: Path
    kind: str
    config: dict[str, Any]
    names: list[str]
    #: Task tensors (names without any ``model.`` export prefix), read lazily by :meth:`tensor`.
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    consumed: set[str] = field(default_factory=set)
    #: ``"model."`` when the export prefixes every name with it, else ``""``.
    export: str = ""

    def backbone_tensor(self, name: str) -> torch.Tensor:
        """A backbone tensor (e.g. ``norm_out.w``) read from under the backbone prefix."""
        full = self.export + (self.prefix or "") + name
        with safe_open(str(self.directory / WEIGHTS_NAME), framework="pt", device="cpu") as handle:
            if full not in handle.keys():
                raise CheckpointError(f"{self.directory / WEIGHTS_NAME} has no backbone tensor {full!r}")
            return handle.get_tensor(full).float()

    @property
    def prefix(self) -> str | None:
        """The backbone prefix for ``load_backbone`` / ``build_pipeline``."""
        return BACKBONE_PREFIX[self.kind]

    def tensor(self, name: str, shape: tuple[int, ...] | None = None) -> torch.Tensor:
        """Task tensor ``name`` as float32 (marked consumed); checks ``shape`` when given."""
        if name not in self.tensors:
            raise CheckpointError(f"{self.directory / WEIGHTS_NAME} has no tensor {name!r} "
                                  f"(a {self.kind} checkpoint needs it)")
        t = self.tensors[name]
        if shape is not None and tuple(t.shape) != tuple(shape):
            raise CheckpointError(f"tensor {name} has shape {tuple(t.shape)}, expected {tuple(shape)}")
        if not bool(torch.isfinite(t.float()).all()):
            raise CheckpointError(f"tensor {name} holds non-finite values (corrupt?)")
        self.consumed.add(name)
        return t.float()

    def ignore(self, names: Iterable[str]) -> None:
        """Mark tensors as knowingly unused (documented approximations)."""
        self.consumed.update(n for n in names if n in self.tensors)

    def check_consumed(self) -> None:
        """Raise :class:`CheckpointError` naming every task tensor nothing mapped."""
        left = sorted(set(self.tensors) - self.consumed)
        if left:
            raise CheckpointError(f"{self.directory / WEIGHTS_NAME}: unmapped {self.kind} tensor(s): "
                                  + ", ".join(left))


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise CheckpointError(f"{path.parent} has no {path.name}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"invalid {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} is not a JSON object")
    return data


def _tensor_names(weights: Path) -> list[str]:
    if not weights.is_file():
        raise CheckpointError(f"{weights.parent} has no {weights.name}")
    try:
        with safe_open(str(weights), framework="pt", device="cpu") as handle:
            return list(handle.keys())
    except Exception as exc:
        raise CheckpointError(f"{weights} is not a readable safetensors file: {exc}") from exc


def _strip_model(names: list[str]) -> tuple[list[str], str]:
    if names and all(n.startswith("model.") for n in names):
        return [n[len("model."):] for n in names], "model."
    return names, ""


def kind_of(config: dict[str, Any], names: Iterable[str]) -> str:
    """The kind (see module doc) from ``config['model_type']`` and the tensor names."""
    names = set(names)
    model_type = config.get("model_type", "char_bert")
    if model_type == "char_bert_joint" or any(n.startswith("tagger.encoder.") for n in names):
        if not any(n.startswith("tagger.encoder.") for n in names) or "biaffine.root" not in names:
            raise CheckpointError("a char_bert_joint checkpoint needs tagger.encoder.* and biaffine.root tensors")
        return "tagger_parser"
    if "head_mac.weight" in names or "head_scan.weight" in names:
        if not any(n.startswith("encoder.") for n in names):
            raise CheckpointError("a meter checkpoint needs its backbone under 'encoder.'")
        return "meter"
    if "e_region.weight" in names or "e_century.weight" in names:
        return "restoration"
    if "e_char.weight" in names:
        return "backbone"
    raise CheckpointError(f"unrecognised checkpoint (model_type {model_type!r}, tensors "
                          f"{', '.join(sorted(names)[:5])}...)")


def read_checkpoint(directory: str | Path) -> ReleasedCheckpoint:
    """Detect a local checkpoint's kind and load its task (non-backbone) tensors."""
    directory = Path(directory)
    config = _read_json(directory / CONFIG_NAME)
    weights = directory / WEIGHTS_NAME
    raw = _tensor_names(weights)
    names, export = _strip_model(raw)
    kind = kind_of(config, names)
    prefix = BACKBONE_PREFIX[kind]
    backbone_names = {"e_region.weight", "e_century.weight"} if kind == "restoration" else set()
    task = [n for n in names if (prefix is not None and not n.startswith(prefix)) and n not in backbone_names]
    tensors: dict[str, torch.Tensor] = {}
    if task:
        with safe_open(str(weights), framework="pt", device="cpu") as handle:
            for n in task:
                tensors[n] = handle.get_tensor(export + n)
    return ReleasedCheckpoint(directory, kind, config, names, tensors, export=export)


def detect_kind(directory: str | Path) -> str:
    """``"backbone"``, ``"restoration"``, ``"meter"`` or ``"tagger_parser"`` (see module doc)."""
    directory = Path(directory)
    config = _read_json(directory / CONFIG_NAME)
    names, _ = _strip_model(_tensor_names(directory / WEIGHTS_NAME))
    return kind_of(config, names)


def backbone_prefix(directory: str | Path) -> str | None:
    """The ``prefix`` to give ``load_backbone``/``build_pipeline`` for this checkpoint.

    A ``model.`` export prefix in front of a task layout is kept in the answer
    (``model.encoder.``)."""
    directory = Path(directory)
    config = _read_json(directory / CONFIG_NAME)
    names, export = _strip_model(_tensor_names(directory / WEIGHTS_NAME))
    prefix = BACKBONE_PREFIX[kind_of(config, names)]
    return None if prefix is None else export + prefix
