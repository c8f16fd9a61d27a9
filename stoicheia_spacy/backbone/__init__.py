"""The Stoicheia backbone in torch: config, encoder, attention, windows and packing, loading.

Names load lazily, so ``stoicheia_spacy.backbone.config`` stays importable without torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "PRESETS": "config",
    "StoicheiaConfig": "config",
    "mlp_hidden": "config",
    "planes_to_tensors": "inputs",
    "load_backbone": "loading",
    "load_backbone_config": "loading",
    "save_backbone": "loading",
    "EncoderOutput": "model",
    "StoicheiaEncoder": "model",
    "PackedBatch": "windows",
    "document_windows": "windows",
    "encode_long": "windows",
    "pack_planes": "windows",
}

__all__ = [
    "PRESETS",
    "EncoderOutput",
    "PackedBatch",
    "StoicheiaConfig",
    "StoicheiaEncoder",
    "document_windows",
    "encode_long",
    "load_backbone",
    "load_backbone_config",
    "mlp_hidden",
    "pack_planes",
    "planes_to_tensors",
    "save_backbone",
]

if TYPE_CHECKING:  # pragma: no cover
    from .config import PRESETS, StoicheiaConfig, mlp_hidden
    from .inputs import planes_to_tensors
    from .loading import load_backbone, load_backbone_config, save_backbone
    from .model import EncoderOutput, StoicheiaEncoder
    from .windows import PackedBatch, document_windows, encode_long, pack_planes


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stoicheia_spacy.backbone' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
