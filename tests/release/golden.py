"""Where the golden released-task fixtures are: ``../shared/spec/golden/released_tasks``.

Looked up beside the checkout, then beside the data mirror (``STOICHEIA_ASSET_MIRROR``, whose
parent is ``shared/``); ``None`` where neither has them, so that the tests skip.
"""

from __future__ import annotations

import os
from pathlib import Path

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
