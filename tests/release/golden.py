"""Where the golden released-task fixtures are: ``../shared/spec/golden/released_tasks``, and how
the tests load their packages: :func:`load` runs the encoder in ``STOICHEIA_GOLDEN_PRECISION``
(default float32), so ``stoicheia bench golden-precision`` can count the decisions that change
under each precision.

Looked up beside the checkout, then beside the data mirror (``STOICHEIA_ASSET_MIRROR``, whose
parent is ``shared/``); ``None`` where neither has them, so that the tests skip.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import spacy

REPO_ROOT = Path(__file__).resolve().parents[2]


def golden_dir(required: str | None = None) -> Path | None:
    """The fixtures' folder, holding ``required`` when given, or ``None``."""
    roots = [REPO_ROOT.parent / "shared"]
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    if mirror:
        roots.append(Path(mirror).parent)
    for root in roots:
        path = root / "spec" / "golden" / "released_tasks"
        if path.is_dir() and (required is None or (path / required).is_file()):
            return path
    return None


#: The encoder precision the golden tests run (``stoicheia bench golden-precision`` sets it).
PRECISION = os.environ.get("STOICHEIA_GOLDEN_PRECISION", "float32")


def load(path: Path, **kwargs: Any) -> spacy.language.Language:
    """``spacy.load(path)`` with the encoder in :data:`PRECISION`."""
    nlp = spacy.load(path, **kwargs)
    if PRECISION != "float32" and "stoicheia_encoder" in nlp.pipe_names:
        nlp.get_pipe("stoicheia_encoder").configure(precision=PRECISION)
    return nlp
