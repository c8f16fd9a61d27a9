"""Map the released Stoicheia task checkpoints (meter/macronizer, restoration,
tagger-parser) onto this package's spaCy components.

A released checkpoint's config (:func:`stoicheia_spacy.assembly.checkpoint_config`)
loads the backbone with ``prefix=backbone_prefix(directory)`` and names the checkpoint in
``[initialize.after_init]`` (``stoicheia.ReleasedHeads.v1``), which calls
:func:`add_released_heads` once the encoder holds its weights.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spacy.language import Language
from spacy.util import registry

from .backbone.loading import resolve_source
from .backbone.released import (
    BACKBONE_PREFIX,
    ReleasedCheckpoint,
    backbone_prefix,
    detect_kind,
    read_checkpoint,
)

#: Released kinds whose encoder feeds every plane as the text writes it (``hide_unmarked =
#: false``), as the research processors do: the meter model reads unaccented text's planes
#: as "no diacritic", not unknown.
AS_WRITTEN_KINDS: frozenset[str] = frozenset({"meter"})


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
    added: list[str] = []
    if ckpt.kind == "meter":
        from .scan.released import add_meter

        added = add_meter(nlp, ckpt)
    elif ckpt.kind == "tagger_parser":
        from .morph.released import add_tagger_parser

        added = add_tagger_parser(nlp, ckpt)
    elif ckpt.kind == "restoration":
        from .restore.released import add_restoration

        added = add_restoration(nlp, ckpt)
    return added


@registry.callbacks("stoicheia.ReleasedHeads.v1")
def released_heads_callback(source: str, revision: str | None = None) -> Callable[[Language], Language]:
    """``[initialize.after_init]`` of a released task checkpoint: add its heads (the
    components that map its task tensors) once ``nlp.initialize`` has loaded the encoder."""

    def after_init(nlp: Language) -> Language:
        add_released_heads(nlp, resolve_source(source, revision))
        return nlp

    return after_init


__all__ = ["AS_WRITTEN_KINDS", "BACKBONE_PREFIX", "ReleasedCheckpoint", "add_released_heads", "backbone_prefix",
           "detect_kind", "read_checkpoint", "released_heads_callback"]
