"""Map the released Stoicheia task checkpoints (meter/macronizer, restoration,
tagger-parser) onto this package's spaCy components.

A released checkpoint's config (:func:`stoicheia_spacy.assembly.checkpoint_config`)
loads the backbone with ``prefix=backbone_prefix(directory)`` and names the checkpoint in
``[initialize.after_init]`` (``stoicheia.ReleasedHeads.v1``), which calls
:func:`add_released_heads` once the encoder holds its weights. Each room's adapter
(:data:`ADAPTERS`) describes its components as config blocks plus the tensors that fill
them; :func:`stoicheia_spacy.assembly.extend` builds them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spacy.language import Language
from spacy.util import registry

from .assembly import extend
from .backbone.loading import resolve_source
from .backbone.released import (
    AS_WRITTEN_KINDS,
    BACKBONE_PREFIX,
    ReleasedCheckpoint,
    ReleasedComponents,
    backbone_prefix,
    detect_kind,
    read_checkpoint,
)
from .morph.released import tagger_parser_components
from .restore.released import restoration_components
from .scan.released import meter_components

#: Each released task kind's adapter: the components it adds, as config (a plain backbone adds none).
ADAPTERS: dict[str, Callable[[ReleasedCheckpoint], ReleasedComponents]] = {
    "meter": meter_components, "tagger_parser": tagger_parser_components, "restoration": restoration_components,
}


def add_released_heads(nlp: Language, directory: str | Path) -> list[str]:
    """Add the components of a released task checkpoint in ``directory`` to ``nlp`` (which
    already holds the ``stoicheia_encoder`` with its backbone); returns the names added.

    A plain backbone adds nothing. Raises :class:`~stoicheia_spacy.errors.CheckpointError`
    for a missing file, a wrong shape, or any task tensor nothing maps.
    """
    ckpt = read_checkpoint(directory)
    before = list(nlp.pipe_names)
    try:
        added = _add(nlp, ckpt)
        ckpt.check_consumed()
    except Exception:
        for name in [n for n in nlp.pipe_names if n not in before]:
            nlp.remove_pipe(name)
        raise
    return added


def _add(nlp: Language, ckpt: ReleasedCheckpoint) -> list[str]:
    adapter = ADAPTERS.get(ckpt.kind)
    if adapter is None:
        return []
    released = adapter(ckpt)
    present = {nlp.get_pipe_meta(name).factory for name in nlp.pipe_names}
    # a pipeline that already has a restorer keeps its own
    blocks = {name: block for name, block in released.blocks.items()
              if not (ckpt.kind == "restoration" and block["factory"] in present)}
    return extend(nlp, {"components": blocks}, fill=released.fill)


@registry.callbacks("stoicheia.ReleasedHeads.v1")
def released_heads_callback(source: str, revision: str | None = None) -> Callable[[Language], Language]:
    """``[initialize.after_init]`` of a released task checkpoint: add its heads (the
    components that map its task tensors) once ``nlp.initialize`` has loaded the encoder."""

    def after_init(nlp: Language) -> Language:
        add_released_heads(nlp, resolve_source(source, revision))
        return nlp

    return after_init


__all__ = ["ADAPTERS", "AS_WRITTEN_KINDS", "BACKBONE_PREFIX", "ReleasedCheckpoint", "add_released_heads", "backbone_prefix",
           "detect_kind", "read_checkpoint", "released_heads_callback"]
