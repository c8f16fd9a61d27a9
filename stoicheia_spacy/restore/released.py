"""Released restoration fine-tunes (``…-restoration-test0`` … ``test9``).

They are backbones with two metadata embeddings, ``e_region.weight`` and
``e_century.weight`` (the last row of each = unknown). ``config.json`` may give
``n_region``/``n_century`` or leave them out (the release's converter does): the sizes
then come from the tables' shapes, read from the safetensors header
(:func:`~stoicheia_spacy.backbone.loading.metadata_sizes`), on every route that builds
the backbone (``load_backbone``, ``load_backbone_config``, so also the spaCy config's
loader). Accepted tables: 15 region rows (14 regions + unknown, :data:`REGIONS`) and
15 or 16 century rows (the spec's 14 bins + unknown, or the research code's 15 bins +
unknown; :func:`century_id`). Anything else raises
:class:`~stoicheia_spacy.errors.CheckpointError`.

Known metadata per Doc: ``doc._.region`` (a name of :data:`REGIONS` or its id) and
``doc._.century`` (a year, negative = BC), set before the encoder runs; both reach
``e_region``/``e_century`` in the encoder's forward and in the restorer's. Unset, both are
"unknown" (the published evaluation setting). :func:`restoration_components` configures a
``stoicheia_restorer`` that scores as the paper's strict protocol
(``scoring = "protocol"``, :mod:`stoicheia_spacy.restore.protocol`).
"""

from __future__ import annotations

from ..backbone.loading import WEIGHTS_NAME, header_shapes
from ..backbone.released import ReleasedCheckpoint, ReleasedComponents
from ..encoder.metadata import CENTURY_ROWS, REGION_ROWS, REGIONS, century_id, region_id
from ..errors import CheckpointError

__all__ = ["REGIONS", "restoration_components", "check_metadata", "century_id", "region_id"]

def check_metadata(ckpt: ReleasedCheckpoint) -> tuple[int, int]:
    """``(n_region, n_century)`` from the tables' shapes, checked against ``config.json``
    (when it gives them) and against the accepted table sizes."""
    shapes = {k[len(ckpt.export):]: v for k, v in header_shapes(ckpt.directory / WEIGHTS_NAME).items()}
    sizes = []
    for table, key, accepted in (("e_region.weight", "n_region", REGION_ROWS),
                                 ("e_century.weight", "n_century", CENTURY_ROWS)):
        if table not in shapes:
            raise CheckpointError(f"{ckpt.directory}: restoration checkpoint without {table}")
        rows = int(shapes[table][0])
        given = ckpt.config.get(key)
        if given is not None and given != rows:
            raise CheckpointError(f"{ckpt.directory}/config.json says {key} = {given!r} but {table} has {rows} rows")
        if rows not in accepted:
            raise CheckpointError(f"{ckpt.directory}: {table} has {rows} rows; a released restoration checkpoint "
                                  f"has {' or '.join(map(str, accepted))} (the last = unknown)")
        sizes.append(rows)
    return sizes[0], sizes[1]


def restoration_components(ckpt: ReleasedCheckpoint, name: str = "stoicheia_restorer") -> ReleasedComponents:
    """A ``stoicheia_restorer`` scoring as the strict protocol (kept out when the pipeline
    already has a restorer: :func:`stoicheia_spacy.released_heads.add_released_heads`)."""

    check_metadata(ckpt)
    return ReleasedComponents({name: {"factory": "stoicheia_restorer", "settings": {"scoring": "protocol"}}})
