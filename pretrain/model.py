"""Model construction and optimiser parameter groups (the only backbone dependency)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:
    from stoicheia_spacy.backbone import StoicheiaEncoder

_WRAPPER_PREFIXES = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.", "_orig_mod.", "module.")


def build_model(model_config: Any) -> StoicheiaEncoder:
    """A freshly initialised ``StoicheiaEncoder`` for a ``StoicheiaConfig``."""
    from stoicheia_spacy.backbone import StoicheiaEncoder

    return StoicheiaEncoder(model_config)


def clean_name(name: str) -> str:
    """Parameter name without DDP/FSDP/compile wrapper prefixes."""
    for prefix in _WRAPPER_PREFIXES:
        name = name.replace(prefix, "")
    return name


def param_groups(model: nn.Module, matrix_names: set[str], weight_decay: float) -> list[dict[str, Any]]:
    """AdamW groups: weight decay on matrices (``matrix_names``), none on vectors."""
    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (decay if clean_name(name) in matrix_names else no_decay).append(p)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def matrix_parameter_names(model: nn.Module) -> set[str]:
    """Names of the parameters with two or more dimensions (before any wrapping)."""
    return {clean_name(n) for n, p in model.named_parameters() if p.ndim >= 2}


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
