"""Inference precision of a backbone: ``float32`` (the stored weights, the reference forward),
``float32-fused``, ``bfloat16`` or ``int8``.

:func:`precision_view` returns a module that computes the same forward as the backbone in
another precision, while the backbone itself keeps its float32 weights (saving, overlays and
training read those). The view is a shallow copy of the module tree in which only the blocks
are new: every block becomes a :class:`~.fused.FusedBlock` (same children, fused inference
forward: oneDNN linears, residual adds fused into the projections, QK-norm folded into RoPE).
Its linear layers are, under ``float32-fused``, the float32 modules themselves (no copy);
under ``int8`` dynamically quantised ones (int8 weights packed for oneDNN, per-tensor
activation scales computed at run time); under ``bfloat16`` bf16 copies fed bf16 activations.
Embeddings, norms, attention and the output heads stay float32. Converted blocks and linears
are cached by the identity of the float module in a :class:`PrecisionCache`, so two views of
backbones that share blocks (the encoder's and the restorer's overlaid one) share their
converted blocks too.

What each precision keeps: ``float32`` and ``float32-fused`` are listed in :data:`FAITHFUL`
(``float32-fused`` differs from ``float32`` only in the order of float32 roundings, within 1e-5 on
the letter logits; ``tests/backbone/test_precision.py`` checks it against the golden backbone
fixture); ``int8`` and ``bfloat16`` are faster approximations whose golden decisions
``stoicheia bench golden-precision`` counts and lists (docs/benchmarks.md). Speed:
``stoicheia bench released-shape``. oneDNN runs float32 GEMMs at about twice the rate of
torch's MKL path on AMD CPUs (which MKL does not tune for); on Intel CPUs the gain of
``float32-fused`` is smaller.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import torch
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear
from torch.ao.quantization import default_dynamic_qconfig

from ..errors import ConfigError
from .fused import fuse, onednn_available
from .model import Block

#: The precisions a backbone can run in.
PRECISIONS: tuple[str, ...] = ("float32", "float32-fused", "bfloat16", "int8")
#: The precisions that keep every golden released-task decision and score (``stoicheia bench
#: golden-precision``); the others are faster approximations.
FAITHFUL: tuple[str, ...] = ("float32", "float32-fused")
#: The precisions whose views run the blocks as :class:`~.fused.FusedBlock` (all but ``float32``).
FUSED: tuple[str, ...] = ("float32-fused", "bfloat16", "int8")


class PrecisionCache:
    """Converted leaves by the identity of their float32 module (the float module is kept
    referenced, so an identity is never reused while its entry lives)."""

    def __init__(self) -> None:
        self._leaves: dict[tuple[int, str], tuple[nn.Module, nn.Module]] = {}
        self._views: dict[tuple[int, str], tuple[nn.Module, nn.Module]] = {}

    def leaf(self, module: nn.Module, precision: str) -> nn.Module:
        key = (id(module), precision)
        hit = self._leaves.get(key)
        if hit is None or hit[0] is not module:
            hit = (module, _convert_leaf(module, precision, self))
            self._leaves[key] = hit
        return hit[1]

    def view(self, module: nn.Module, precision: str) -> nn.Module:
        key = (id(module), precision)
        hit = self._views.get(key)
        if hit is None or hit[0] is not module:
            hit = (module, _view(module, precision, self))
            self._views[key] = hit
        return hit[1]

    def clear(self) -> None:
        self._leaves.clear()
        self._views.clear()


def check_precision(precision: str) -> str:
    """``precision`` when it is one of :data:`PRECISIONS`, else :class:`ConfigError`."""
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    if precision == "int8" and "fbgemm" not in torch.backends.quantized.supported_engines \
            and "x86" not in torch.backends.quantized.supported_engines:
        raise ConfigError("precision 'int8' needs torch's fbgemm/x86 quantized engine, absent from this build")
    if precision in FUSED and not onednn_available():
        raise ConfigError(f"precision {precision!r} needs torch's oneDNN (mkldnn) CPU kernels, absent from this "
                          "build: use 'float32'")
    return precision


def precision_view(module: nn.Module, precision: str, cache: PrecisionCache | None = None) -> nn.Module:
    """``module`` computing in ``precision`` (module doc); ``float32``: ``module`` itself."""
    check_precision(precision)
    if precision == "float32":
        return module
    return (cache or PrecisionCache()).view(module, precision)


def _view(module: nn.Module, precision: str, cache: PrecisionCache) -> nn.Module:
    if isinstance(module, Block):
        return cache.leaf(module, precision)
    if not any(isinstance(m, Block) for m in module.modules()):
        return module
    out = copy.copy(module)
    out._modules = {name: (None if child is None else _view(child, precision, cache))
                    for name, child in module._modules.items()}
    out.eval()
    return out


def _convert_leaf(module: nn.Module, precision: str, cache: PrecisionCache) -> nn.Module:
    """A block as a :class:`~.fused.FusedBlock` whose linears are those of ``precision``
    (cached one by one, so blocks that share a linear share its converted copy), or one
    linear layer in ``precision``."""
    if isinstance(module, Block):
        return fuse(module, lambda linear: cache.leaf(linear, precision))
    if precision == "float32-fused":
        return module  # the float32 weights themselves: no copy
    if precision == "int8":
        return _quantise(module)
    out = copy.copy(module)
    out._parameters = {name: (None if p is None else nn.Parameter(p.detach().to(torch.bfloat16), requires_grad=False))
                       for name, p in module._parameters.items()}
    return out


def _quantise(module: nn.Module) -> nn.Module:
    """``module`` as a dynamically quantised linear, its weights packed for oneDNN where torch
    has that engine (measured faster than fbgemm/x86 on AVX512-VNNI), else x86/fbgemm; the
    global engine setting is left as it was (packed weights carry their own kernels)."""
    engines = torch.backends.quantized.supported_engines
    engine = next(e for e in ("onednn", "x86", "fbgemm") if e in engines)
    before = torch.backends.quantized.engine
    float_linear: Any = copy.copy(module)
    float_linear.qconfig = default_dynamic_qconfig
    try:
        torch.backends.quantized.engine = engine
        with warnings.catch_warnings():  # torch.ao.quantization's deprecation notice (torchao)
            warnings.simplefilter("ignore")
            return DynamicLinear.from_float(float_linear)
    finally:
        torch.backends.quantized.engine = before


__all__ = ["FAITHFUL", "FUSED", "PRECISIONS", "PrecisionCache", "check_precision", "precision_view"]
