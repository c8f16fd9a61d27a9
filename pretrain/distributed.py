"""Process-group setup and model wrapping (DDP or FSDP FULL_SHARD).

Launch with ``torchrun --nproc_per_node N -m pretrain train ...``: the group is
initialised from the environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``...), with
NCCL on CUDA and gloo on CPU. Every rank builds the same global batch of packed rows
and takes its own contiguous share, so N processes see exactly the rows one process
with the same global batch would.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn


@dataclass
class DistInfo:
    """Rank, world size and device of this process."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def pick_device(requested: str, local_rank: int = 0) -> torch.device:
    """``auto`` -> CUDA when available, else CPU."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda":
        if not torch.cuda.is_available():
            from stoicheia_spacy.errors import ConfigError

            raise ConfigError("train.device=cuda but no CUDA device is available")
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def init_distributed(requested_device: str) -> DistInfo:
    """Initialise the process group when launched by torchrun (WORLD_SIZE > 1)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = pick_device(requested_device, local_rank)
    if world > 1 and not dist.is_initialized():
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return DistInfo(rank=rank, world_size=world, local_rank=local_rank, device=device)


def shutdown_distributed(*, synchronise: bool = False) -> None:
    """Destroy the process group if one was created.

    With ``synchronise`` every rank first waits at a barrier, so that no rank tears gloo down
    while another (the main rank exporting the best step) still uses it: a rank that left
    early aborted with "terminate called without an active exception". Leave it off on the
    error path, where a barrier could wait for a rank that has died."""
    if dist.is_available() and dist.is_initialized():
        if synchronise:
            dist.barrier()
        dist.destroy_process_group()


def all_reduce_sum(tensor: torch.Tensor, info: DistInfo) -> torch.Tensor:
    """Sum ``tensor`` over ranks (identity in one process)."""
    if info.enabled:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor


def block_class(model: nn.Module) -> type[nn.Module]:
    """The transformer block class (the FSDP auto-wrap unit)."""
    blocks = getattr(model, "blocks", None)
    if blocks is None or len(blocks) == 0:
        raise TypeError("model has no .blocks to wrap")
    return type(blocks[0])


def wrap_model(model: nn.Module, info: DistInfo, strategy: str) -> nn.Module:
    """DDP, or FSDP with FULL_SHARD and one unit per block; unchanged in one process."""
    if not info.enabled:
        return model
    block_class(model)  # fail early without blocks
    device_ids = [info.device.index] if info.device.type == "cuda" else None
    if strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=device_ids)
    # FSDP2: one shard unit per block plus the root; parameters are resharded after
    # the forward (reshard_after_forward=True is FULL_SHARD). Works with gloo on CPU.
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(info.device.type, (info.world_size,))
    for block in getattr(model, "blocks"):  # noqa: B009 - checked by block_class
        fully_shard(block, mesh=mesh, reshard_after_forward=True)
    fully_shard(model, mesh=mesh, reshard_after_forward=True)
    return model


def is_fsdp(model: nn.Module) -> bool:
    """Whether ``model`` is sharded by ``fully_shard``."""
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def no_sync(model: nn.Module, last: bool) -> contextlib.AbstractContextManager[Any]:
    """Skip the gradient all-reduce on all but the ``last`` micro-batch."""
    if last:
        return contextlib.nullcontext()
    if is_fsdp(model):
        return _fsdp_no_sync(model)
    if hasattr(model, "no_sync"):
        return model.no_sync()  # type: ignore[operator]
    return contextlib.nullcontext()


@contextlib.contextmanager
def _fsdp_no_sync(model: nn.Module) -> Iterator[None]:
    model.set_requires_gradient_sync(False)  # type: ignore[operator]
    try:
        yield
    finally:
        model.set_requires_gradient_sync(True)  # type: ignore[operator]


def full_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict[str, Any], dict[str, Any]]:
    """Full (unsharded) model and optimiser state dicts on CPU, for any wrapping."""
    if is_fsdp(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict

        opts = StateDictOptions(full_state_dict=True, cpu_offload=True)
        msd, osd = get_state_dict(model, optimizer, options=opts)
        return dict(msd), dict(osd)
    inner: nn.Module = model.module if isinstance(getattr(model, "module", None), nn.Module) else model  # type: ignore[assignment]
    msd = {k: v.detach().cpu().clone() for k, v in inner.state_dict().items()}
    return msd, optimizer.state_dict()


def load_full_state(
    model: nn.Module, optimizer: torch.optim.Optimizer, msd: dict[str, Any], osd: dict[str, Any]
) -> None:
    """Inverse of ``full_state``."""
    if is_fsdp(model):
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_state_dict

        set_state_dict(model, optimizer, model_state_dict=msd, optim_state_dict=osd,
                       options=StateDictOptions(full_state_dict=True))
        return
    inner: nn.Module = model.module if isinstance(getattr(model, "module", None), nn.Module) else model  # type: ignore[assignment]
    inner.load_state_dict(msd)
    optimizer.load_state_dict(osd)
