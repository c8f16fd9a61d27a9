"""A restoration-only pipeline (``stoicheia_encoder`` + ``stoicheia_restorer``) for batch work:
no tagger, parser, accentuator or scanner run on each document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["restoration_pipeline"]


def restoration_pipeline(source: str | Path | None = None, **restorer_cfg: Any) -> Any:
    """``spacy.blank("grc")`` + the encoder holding ``source``'s weights (default: the
    embedded model) + ``stoicheia_restorer`` with the restorer settings and overlay that
    ship beside the checkpoint (``restorer/``), updated with ``restorer_cfg``."""
    from ..assembly import build_pipeline
    from ..assets import default_model_dir

    directory = Path(source) if source is not None else default_model_dir()
    nlp = build_pipeline(str(directory), components=False)
    pipe: Any = nlp.add_pipe("stoicheia_restorer")
    if (directory / "restorer").is_dir():
        pipe.from_disk(directory / "restorer")
    if restorer_cfg:
        pipe.cfg.update(restorer_cfg)
        pipe._check()
    return nlp
