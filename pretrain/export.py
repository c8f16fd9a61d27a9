"""Export a run's best (or last) step, or a random-init control, in the released format.

The output directory holds ``config.json`` + ``model.safetensors`` written by
``stoicheia_spacy.backbone.save_backbone``, which ``load_backbone`` reads back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from stoicheia_spacy.errors import CheckpointError

from .checkpoint import load_checkpoint, seed_everything
from .model import build_model, clean_name


def _config_from_dict(raw: dict[str, Any]) -> Any:
    from stoicheia_spacy.backbone import StoicheiaConfig

    return StoicheiaConfig.from_dict(raw)


def export_run(run_dir: str | Path, out: str | Path, *, which: str = "best", dtype: torch.dtype | None = None) -> Path:
    """Write the ``best`` (lowest dev bpc; falls back to ``last``) or ``last`` step of a run."""
    from stoicheia_spacy.backbone import save_backbone

    run_dir = Path(run_dir)
    if which not in {"best", "last"}:
        raise ValueError(f"which must be 'best' or 'last', not {which!r}")
    path = run_dir / f"{which}.pt"
    if which == "best" and not path.is_file():
        path = run_dir / "last.pt"
    state = load_checkpoint(path)
    if "model" not in state or "model_config" not in state:
        raise CheckpointError(f"{path} lacks model weights or model_config")
    model = build_model(_config_from_dict(state["model_config"]))
    weights = {clean_name(k): v for k, v in state["model"].items()}
    try:
        model.load_state_dict(weights)
    except RuntimeError as exc:
        raise CheckpointError(f"{path}: weights do not fit the recorded config: {exc}") from exc
    out = Path(out)
    save_backbone(model, out, dtype=dtype)
    return out


def export_random(model_config: Any, out: str | Path, *, seed: int = 0, dtype: torch.dtype | None = None) -> Path:
    """A randomly initialised backbone of the given config (control arms), seeded."""
    from stoicheia_spacy.backbone import save_backbone

    seed_everything(seed)
    model = build_model(model_config)
    out = Path(out)
    save_backbone(model, out, dtype=dtype)
    return out
