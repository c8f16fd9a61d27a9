"""Inference precision of a backbone: ``float32`` (the stored weights), ``bfloat16`` or ``int8``.

:func:`precision_view` returns a module that computes the same forward as the backbone in
another precision, while the backbone itself keeps its float32 weights (saving, overlays and
training read those). The view is a shallow copy of the module tree in which only the
converted leaves are new: under ``int8`` the linear layers of the transformer blocks become
dynamically quantised ones (int8 weights, per-row activation scales computed at run time,
:func:`torch.ao.quantization.quantize_dynamic`'s kernels; embeddings, norms and the output
heads stay float32); under ``bfloat16`` every weight is a bf16 copy. Leaves are cached by
the identity of the float module in a :class:`PrecisionCache`, so two views of backbones
that share blocks (the encoder's and the restorer's overlaid one) share their converted
blocks too.

What each precision keeps (measured by ``stoicheia bench released-shape`` and the golden
released-task fixtures, see ``docs/benchmarks.md``): ``float32`` is the reference and the
only faithful one (every golden decision kept); ``int8`` is 1.2-1.4x faster at the released
shape on an AVX2 CPU and changes letter logits by ~0.2, enough to change 20 of the 46 golden
tests (decisions or scores beyond 1e-3); ``bfloat16`` is faster only on CPUs with native bf16
(AVX512-BF16, AMX) and several times slower elsewhere.
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

#: The precisions a backbone can run in.
PRECISIONS: tuple[str, ...] = ("float32", "bfloat16", "int8")


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
            hit = (module, _convert_leaf(module, precision))
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
    return precision


def precision_view(module: nn.Module, precision: str, cache: PrecisionCache | None = None) -> nn.Module:
    """``module`` computing in ``precision`` (module doc); ``float32``: ``module`` itself."""
    check_precision(precision)
    if precision == "float32":
        return module
    return (cache or PrecisionCache()).view(module, precision)


def _view(module: nn.Module, precision: str, cache: PrecisionCache, path: str = "") -> nn.Module:
    if _converts(module, precision, path):
        return cache.leaf(module, precision)
    if not any(_converts(m, precision, f"{path}.{n}" if path else n) for n, m in module.named_modules()):
        return module
    out = copy.copy(module)
    out._modules = {name: (None if child is None else _view(child, precision, cache, f"{path}.{name}" if path else name))
                    for name, child in module._modules.items()}
    if precision == "bfloat16":
        out._parameters = {name: (None if p is None else nn.Parameter(p.detach().to(torch.bfloat16), requires_grad=False))
                           for name, p in module._parameters.items()}
    out.eval()
    return out


def _converts(module: nn.Module, precision: str, path: str) -> bool:
    """True for the leaves a view replaces: under int8 the linear layers of the blocks, under
    bfloat16 every module that holds parameters of its own."""
    if precision == "int8":
        return isinstance(module, nn.Linear) and path.startswith("blocks.")
    return precision == "bfloat16" and bool(module._parameters) and not module._modules


def _convert_leaf(module: nn.Module, precision: str) -> nn.Module:
    if precision == "int8":
        engines = torch.backends.quantized.supported_engines
        if torch.backends.quantized.engine not in ("fbgemm", "x86"):
            torch.backends.quantized.engine = "x86" if "x86" in engines else "fbgemm"
        float_linear: Any = copy.copy(module)
        float_linear.qconfig = default_dynamic_qconfig
        with warnings.catch_warnings():  # torch.ao.quantization's deprecation notice (torchao)
            warnings.simplefilter("ignore")
            return DynamicLinear.from_float(float_linear)
    out = copy.copy(module)
    out._parameters = {name: (None if p is None else nn.Parameter(p.detach().to(torch.bfloat16), requires_grad=False))
                       for name, p in module._parameters.items()}
    return out


__all__ = ["PRECISIONS", "PrecisionCache", "check_precision", "precision_view"]
