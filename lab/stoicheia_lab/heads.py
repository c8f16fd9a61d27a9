"""Trained morphosyntax head folders as a config fragment.

``train_heads.py`` (``projects/parse``) writes one folder per component
(``DIR/stoicheia_morphologizer/`` ...); :func:`morphosyntax_config` is the fragment that
:func:`stoicheia_spacy.assembly.extend` adds to a pipeline holding the encoder: each
component read from its folder (``[initialize.components.NAME] weights``), listening to the
shared encoder with ``grad_factor`` 0 (the heads were trained on a frozen backbone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stoicheia_spacy.assembly import MORPHOSYNTAX


def morphosyntax_config(directory: str | Path) -> dict[str, Any]:
    """The config fragment of the head folders found under ``directory``, in pipeline order."""
    directory = Path(directory)
    found = [name for name in MORPHOSYNTAX
             if any((directory / name / f).is_file() for f in ("data.json", "cfg"))]  # cfg: saved before data.json
    return {
        "components": {name: {"factory": name, "model": {"tok2vec": {"grad_factor": 0.0}}} for name in found},
        "initialize": {"components": {name: {"weights": str(directory / name)} for name in found}},
    }


__all__ = ["morphosyntax_config"]
