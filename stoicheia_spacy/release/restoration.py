"""Released restoration fine-tunes (``…-restoration-test0`` … ``test9``).

They are backbones with two metadata embeddings, ``e_region.weight`` (``n_region`` rows,
the last = unknown) and ``e_century.weight`` (``n_century``); ``load_backbone`` loads
them (``StoicheiaConfig.n_region``/``n_century``) and the encoder adds the unknown rows
by default. :func:`add_restoration` checks the tensors against the config and adds a
``stoicheia_restorer``. Known region/century ids per Doc are not passed yet: the
encoder and the restorer's beam search call the backbone without ``region``/``century``,
so both are "unknown" (the published evaluation setting without metadata).
"""

from __future__ import annotations

from spacy.language import Language

from ..errors import CheckpointError
from .detect import ReleasedCheckpoint


def check_metadata(ckpt: ReleasedCheckpoint) -> tuple[int, int]:
    """``(n_region, n_century)`` from the config, checked against the tensor names."""
    cfg = ckpt.config
    missing = [k for k in ("n_region", "n_century") if not isinstance(cfg.get(k), int)]
    if missing:
        raise CheckpointError(f"{ckpt.directory}/config.json lacks {', '.join(missing)} "
                              "for its e_region/e_century tensors")
    for t in ("e_region.weight", "e_century.weight"):
        if t not in ckpt.names:
            raise CheckpointError(f"{ckpt.directory}: restoration checkpoint without {t}")
    return int(cfg["n_region"]), int(cfg["n_century"])


def add_restoration(nlp: Language, ckpt: ReleasedCheckpoint, name: str = "stoicheia_restorer") -> list[str]:
    """Add a ``stoicheia_restorer`` reading the encoder (unless the pipeline has one)."""

    check_metadata(ckpt)
    if any(nlp.get_pipe_meta(n).factory == "stoicheia_restorer" for n in nlp.pipe_names):
        return []
    nlp.add_pipe("stoicheia_restorer", name=name)
    return [name]
