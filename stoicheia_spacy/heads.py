"""Torch heads and their thinc wrapper.

:class:`TokenHeads` is a per-token classifier (dropout, one hidden LeakyReLU layer,
one linear layer whose outputs are several softmax groups). A head's output sizes
are known only once the component has seen its training data (label sets, script
vocabulary, encoder width), so the thinc node built by :func:`build_torch_head` starts
empty and :func:`ensure_torch_head` puts the torch module in at ``initialize`` or
before ``from_disk`` (from the sizes stored in the component's ``cfg``). Weights are
serialised as safetensors, never pickled.

A head's architecture may set ``weight_dtype`` (:data:`WEIGHT_DTYPES`): with ``"bfloat16"`` its
matrices (:func:`keep_weights`) are kept in bfloat16 once read from disk, half the memory, and
computed in float32, so it answers exactly as the float32 head with those weights rounded to
bfloat16 would. Training builds float32 heads; a loaded head kept so is for inference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from thinc.api import Model, PyTorchWrapper_v3

from .errors import ConfigError

#: ``weight_dtype`` of a head's architecture -> the dtype its matrices are kept in after loading
WEIGHT_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


class UpcastLinear(torch.nn.Linear):
    """``torch.nn.Linear`` whose weight may be kept in a smaller float type (:func:`keep_weights`):
    it is used in the input's type, the bias as it is."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight.to(x.dtype), self.bias)


def kept_parameters(module: torch.nn.Module) -> list[torch.nn.Parameter]:
    """The matrices :func:`keep_weights` keeps: every :class:`UpcastLinear` weight and the
    parameters a submodule names in its ``kept_weights`` (which its forward casts to the input's type)."""
    return [getattr(sub, name) for sub in module.modules()
            for name in (("weight",) if isinstance(sub, UpcastLinear) else getattr(sub, "kept_weights", ()))]


def keep_weights(module: torch.nn.Module, dtype: torch.dtype) -> int:
    """Keep ``module``'s :func:`kept_parameters` as ``dtype`` in place; returns how many values were cast."""
    cast = 0
    for param in kept_parameters(module):
        if param.dtype != dtype:
            param.data = param.data.to(dtype)
            cast += param.numel()
    return cast


def weight_dtype(name: str) -> torch.dtype:
    """The torch dtype of a ``weight_dtype`` setting (``ConfigError`` naming the options)."""
    if name not in WEIGHT_DTYPES:
        raise ConfigError(f"weight_dtype must be one of {sorted(WEIGHT_DTYPES)}, not {name!r}")
    return WEIGHT_DTYPES[name]


class TokenHeads(torch.nn.Module):
    """Dropout -> Linear(n_in, hidden) -> LeakyReLU(0.1) -> Dropout -> Linear(hidden, sum(sizes)).

    ``hidden = 0`` gives a single linear layer. The output is the concatenation of
    every group's logits.
    """

    def __init__(self, n_in: int, sizes: Sequence[int], hidden: int = 256, dropout: float = 0.33) -> None:
        super().__init__()
        self.sizes = tuple(int(s) for s in sizes)
        layers: list[torch.nn.Module] = [torch.nn.Dropout(dropout)]
        width = n_in
        if hidden > 0:
            layers += [UpcastLinear(n_in, hidden), torch.nn.LeakyReLU(0.1), torch.nn.Dropout(dropout)]
            width = hidden
        self.mlp = torch.nn.Sequential(*layers)
        self.out = UpcastLinear(width, sum(self.sizes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.mlp(x))


def _serialize(module: torch.nn.Module) -> bytes:
    return st_save({k: v.detach().contiguous() for k, v in module.state_dict().items()})


def _deserializer(node: Model) -> Callable[[torch.nn.Module, bytes, Any], torch.nn.Module]:
    """Read saved weights into a module, then keep them as the node's ``weight_dtype``."""

    def deserialize(module: torch.nn.Module, data: bytes, device: Any) -> torch.nn.Module:
        module.load_state_dict(st_load(data))
        module = module.to(device) if device is not None else module
        keep_weights(module, weight_dtype(node.attrs.get("weight_dtype", "float32")))
        return module

    return deserialize


def _forward(model: Model, X: Any, is_train: bool) -> tuple[Any, Callable[[Any], Any]]:
    if not model.layers:
        raise ConfigError(f"the '{model.name}' head has no weights yet: initialize the component first")
    return model.layers[0](X, is_train)


def build_torch_head(
    name: str,
    convert_inputs: Callable[..., Any] | None = None,
    convert_outputs: Callable[..., Any] | None = None,
) -> Model:
    """An empty thinc node that will hold a torch head (see :func:`ensure_torch_head`)."""
    return Model(name, _forward, layers=[],
                 attrs={"convert_inputs": convert_inputs, "convert_outputs": convert_outputs})


def ensure_torch_head(node: Model, module: torch.nn.Module) -> Model:
    """Put ``module`` into ``node`` (replacing any earlier one); returns the wrapper."""
    wrapper = PyTorchWrapper_v3(
        module,
        convert_inputs=node.attrs.get("convert_inputs"),
        convert_outputs=node.attrs.get("convert_outputs"),
        serialize_model=_serialize,
        deserialize_model=_deserializer(node),
    )
    node._layers[:] = [wrapper]
    return wrapper


def torch_module(node: Model) -> torch.nn.Module:
    """The torch module inside a node built by :func:`build_torch_head`."""
    if not node.layers:
        raise ConfigError(f"the '{node.name}' head has no weights yet: initialize the component first")
    module: torch.nn.Module = node.layers[0].shims[0]._model
    return module
