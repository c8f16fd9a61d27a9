"""Restoration overlays: the fine-tuned top of a backbone, stored apart from the backbone.

Restoration fine-tuning (``projects/restore``) trains only the top blocks, the output norm
and the output heads of the shared backbone. An overlay file keeps just those tensors (in
the released tensor names, e.g. ``blocks.11.mlp.wo.weight``) plus a fingerprint of the
frozen part it was trained on, so a package ships one backbone and a small restoration
delta instead of two backbones. :func:`apply_overlay` returns a view of the backbone with
the overlay's tensors swapped in: the modules the overlay does not touch are the base's
own (shared, no second backbone in memory), the touched ones are copies; the base stays
untouched for the other components.
"""

from __future__ import annotations

import copy
import hashlib
import mmap
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load as st_load
from safetensors.torch import save_file

from ..errors import CheckpointError

OVERLAY_NAME = "overlay.safetensors"
KIND = "stoicheia-restoration-overlay"


def trainable_names(model: torch.nn.Module, top_layers: int) -> list[str]:
    """Names of the tensors a restoration fine-tune of the top ``top_layers`` blocks trains:
    those blocks, the output norm and every output head."""
    blocks = {name.split(".")[1] for name, _ in model.named_parameters() if name.startswith("blocks.")}
    n_blocks = len(blocks)
    if not 0 <= top_layers <= n_blocks:
        raise ValueError(f"top_layers must be in 0..{n_blocks}, got {top_layers}")
    keep = {str(i) for i in range(n_blocks - top_layers, n_blocks)}
    names = []
    for name, _ in model.named_parameters():
        parts = name.split(".")
        if (parts[0] == "blocks" and parts[1] in keep) or parts[0] == "norm_out" or parts[0].startswith("head_"):
            names.append(name)
    return names


def fingerprint(model: torch.nn.Module, exclude: Iterable[str]) -> str:
    """SHA-256 over the frozen tensors (names, shapes and float32 values, in name order)."""
    skip = set(exclude)
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        if name in skip:
            continue
        digest.update(name.encode())
        digest.update(str(tuple(tensor.shape)).encode())
        digest.update(tensor.detach().to(torch.float32).cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def save_overlay(model: torch.nn.Module, names: list[str], path: str | Path, *,
                 dtype: torch.dtype = torch.bfloat16, extra: dict[str, str] | None = None,
                 base_fingerprint: str | None = None) -> Path:
    """Write the tensors ``names`` of ``model`` as an overlay to ``path`` (a file, or a
    directory that gets ``overlay.safetensors``). The other tensors are the frozen base, so
    they are fingerprinted from ``model`` itself (pass ``base_fingerprint`` when saving
    repeatedly during training to hash the frozen part once)."""
    out = Path(path)
    if out.suffix != ".safetensors":
        out.mkdir(parents=True, exist_ok=True)
        out = out / OVERLAY_NAME
    state = dict(model.state_dict())
    tensors = {name: state[name].detach().to(dtype).contiguous().cpu() for name in names}
    meta = {"format": "pt", "kind": KIND, "base_fingerprint": base_fingerprint or fingerprint(model, names),
            **(extra or {})}
    save_file(tensors, str(out), metadata=meta)
    return out


def read_overlay(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors and metadata of an overlay file (or of ``DIR/overlay.safetensors``)."""
    file = Path(path)
    if file.is_dir():
        file = file / OVERLAY_NAME
    if not file.exists():
        raise CheckpointError(f"no restoration overlay at {file}")
    try:
        with safe_open(str(file), framework="pt") as handle:
            meta = dict(handle.metadata() or {})
            tensors = {name: handle.get_tensor(name) for name in handle.keys()}
    except Exception as exc:  # safetensors raises several types for damaged files
        raise CheckpointError(f"{file} is not a readable safetensors overlay: {exc}") from exc
    if meta.get("kind") != KIND:
        raise CheckpointError(f"{file} is not a restoration overlay (metadata kind {meta.get('kind')!r})")
    return tensors, meta


class MappedOverlay:
    """An overlay file held memory-mapped, its tensors read only when used.

    The file is read and checked in full once (:func:`read_overlay`), then only its mapping is
    kept: a pipeline whose restorer never builds the overlaid view (the default decodes
    papyri with the n-gram LM alone) holds no overlay tensors, and one that builds it keeps
    the view's float32 copies, not a second bf16 set. The mapping outlives the file (a
    temporary folder removed after loading). ``tensors, meta = overlay`` reads the tensors.
    """

    def __init__(self, path: str | Path) -> None:
        file = Path(path)
        if file.is_dir():
            file = file / OVERLAY_NAME
        tensors, self.meta = read_overlay(file)
        self.names: tuple[str, ...] = tuple(tensors)
        del tensors
        with open(file, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)

    def tensors(self) -> dict[str, torch.Tensor]:
        """The overlay's tensors, read from the mapping (fresh tensors at every call)."""
        return dict(st_load(self._map[:]))

    def __iter__(self) -> Iterator[Any]:
        return iter((self.tensors(), self.meta))


def _share_untouched(module: torch.nn.Module, names: set[str], prefix: str = "") -> torch.nn.Module:
    """A shallow copy of ``module`` whose parameters/buffers named in ``names`` are fresh
    copies and whose submodules without such names are ``module``'s own."""
    def full(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    out = copy.copy(module)
    out._parameters = {k: (torch.nn.Parameter(v.detach().clone(), requires_grad=v.requires_grad)
                           if v is not None and full(k) in names else v) for k, v in module._parameters.items()}
    out._buffers = {k: (v.clone() if v is not None and full(k) in names else v) for k, v in module._buffers.items()}
    out._modules = {k: (_share_untouched(m, names, full(k)) if m is not None and any(
        n.startswith(full(k) + ".") for n in names) else m) for k, m in module._modules.items()}
    return out


def apply_overlay(base: torch.nn.Module, tensors: dict[str, torch.Tensor], meta: dict[str, str],
                  *, check_base: bool = True) -> Any:
    """A view of ``base`` with the overlay's tensors loaded (``base`` is not modified;
    modules without overlay tensors are shared with it, see the module doc).

    Unknown names, wrong shapes, non-finite values and (with ``check_base``) a base whose
    frozen part differs from the one the overlay was trained on raise ``CheckpointError``."""
    state = base.state_dict()
    for name, tensor in tensors.items():
        if name not in state:
            raise CheckpointError(f"overlay tensor {name!r} is not a tensor of this backbone")
        if tuple(tensor.shape) != tuple(state[name].shape):
            raise CheckpointError(f"overlay tensor {name!r} has shape {tuple(tensor.shape)}, "
                                  f"the backbone's is {tuple(state[name].shape)}")
        if not torch.isfinite(tensor.float()).all():
            raise CheckpointError(f"overlay tensor {name!r} holds NaN or infinite values")
    if check_base and meta.get("base_fingerprint") not in (None, fingerprint(base, tensors)):
        raise CheckpointError("the restoration overlay was trained on another backbone: the frozen "
                              "tensors' fingerprint differs (load the backbone it was made for, or "
                              "drop the overlay to restore with the plain backbone)")
    model = _share_untouched(base, set(tensors))
    with torch.no_grad():
        params = dict(model.state_dict())
        for name, tensor in tensors.items():
            params[name].copy_(tensor.to(params[name].dtype))
    model.eval()
    return model
