"""Atomic training checkpoints and RNG capture.

A checkpoint is written to a temporary file in the target directory, fsynced, renamed
over the old one, and the directory is fsynced: a crash at any moment leaves either
the previous or the new checkpoint, never a torn one.
"""

from __future__ import annotations

import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch

from stoicheia_spacy.errors import CheckpointError


def _atomic_write(path: str | Path, mode: str, write: Callable[[IO[Any]], object]) -> None:
    """Write ``path`` atomically: temp file in the same folder, fsync, rename, fsync dir."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """``torch.save`` to ``path`` atomically (temp file, fsync, rename, fsync dir)."""
    _atomic_write(path, "wb", lambda fh: torch.save(obj, fh))


def atomic_write_text(text: str, path: str | Path) -> None:
    """Write a text file atomically."""
    _atomic_write(path, "w", lambda fh: fh.write(text))


def fsync_dir(directory: str | Path) -> None:
    """Flush a directory entry (no-op where the OS does not allow it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint written by ``atomic_torch_save``; ``CheckpointError`` if unreadable."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch raises several types for truncated/corrupt files
        raise CheckpointError(f"cannot read checkpoint {path}: {exc}") from exc
    if not isinstance(obj, dict):
        raise CheckpointError(f"{path} is not a training checkpoint")
    return obj


def rng_state() -> dict[str, Any]:
    """Python, numpy (global) and torch RNG states (CUDA too when available)."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what ``rng_state`` captured."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
