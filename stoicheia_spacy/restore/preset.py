"""A restoration-only pipeline (``stoicheia_encoder`` + ``stoicheia_restorer``) for batch work:
no tagger, parser, accentuator or scanner run on each document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["restoration_pipeline"]


def restoration_pipeline(source: str | Path | None = None, **settings: Any) -> Any:
    """The encoder + ``stoicheia_restorer`` of ``source``'s ``config.cfg`` (default: the
    embedded model), assembled by spaCy; ``settings`` replace restorer settings
    (:class:`~stoicheia_spacy.restore.settings.RestorerSettings`). A checkpoint without a
    config gets a plain restorer."""
    from ..assembly import ENCODER, assemble, build_pipeline, model_config_path

    path = model_config_path(str(source) if source is not None else "embedded:")
    if path is not None:
        nlp = assemble(path, only=(ENCODER, "stoicheia_restorer"))
    else:
        nlp = build_pipeline(str(source), components=False)
        nlp.add_pipe("stoicheia_restorer")
    if settings:
        restorer: Any = nlp.get_pipe("stoicheia_restorer")
        restorer.configure(**settings)
    return nlp
