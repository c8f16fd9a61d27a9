"""Torch heads and their thinc wrapper.

:class:`TokenHeads` is a per-token classifier (dropout, one hidden LeakyReLU layer,
one linear layer whose outputs are several softmax groups). A head's output sizes
are known only once the component has seen its training data (label sets, script
vocabulary, encoder width), so the thinc node built by :func:`build_torch_head` starts
empty and :func:`ensure_torch_head` puts the torch module in at ``initialize`` or
before ``from_disk`` (from the sizes stored in the component's ``cfg``). Weights are
serialised as safetensors, never pickled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from thinc.api import Model, PyTorchWrapper_v3

from .errors import ConfigError


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
            layers += [torch.nn.Linear(n_in, hidden), torch.nn.LeakyReLU(0.1), torch.nn.Dropout(dropout)]
            width = hidden
        self.mlp = torch.nn.Sequential(*layers)
        self.out = torch.nn.Linear(width, sum(self.sizes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.mlp(x))


def _serialize(module: torch.nn.Module) -> bytes:
    return st_save({k: v.detach().contiguous() for k, v in module.state_dict().items()})


def _deserialize(module: torch.nn.Module, data: bytes, device: Any) -> torch.nn.Module:
    module.load_state_dict(st_load(data))
    return module.to(device) if device is not None else module


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
        deserialize_model=_deserialize,
    )
    node._layers[:] = [wrapper]
    return wrapper


def torch_module(node: Model) -> torch.nn.Module:
    """The torch module inside a node built by :func:`build_torch_head`."""
    if not node.layers:
        raise ConfigError(f"the '{node.name}' head has no weights yet: initialize the component first")
    module: torch.nn.Module = node.layers[0].shims[0]._model
    return module
