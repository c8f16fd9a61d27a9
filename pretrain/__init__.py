"""Pretraining of Stoicheia backbones: ``python -m pretrain train|export|export-random|bench``.

A standalone torch package: it imports ``stoicheia_spacy`` (codec, backbone) while the
toolkit never imports it.
"""

from __future__ import annotations

__all__ = ["build_config", "train"]


def __getattr__(name: str) -> object:
    if name == "build_config":
        from .config import build_config

        return build_config
    if name == "train":
        from .trainer import train

        return train
    raise AttributeError(f"module 'pretrain' has no attribute {name!r}")
