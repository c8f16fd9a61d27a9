"""Shared fixtures. ``shared_data`` is the open-data mirror (``STOICHEIA_ASSET_MIRROR``,
else ``../shared/data`` beside the checkout); tests that need it skip, with a message,
only when it is absent (outside CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def find_shared_data() -> Path | None:
    """The open-data mirror, or None when this checkout has none beside it."""
    env = os.environ.get("STOICHEIA_ASSET_MIRROR")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "data")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = find_shared_data()
    if path is None:
        pytest.skip("open-data mirror absent: set STOICHEIA_ASSET_MIRROR or place shared/data beside the checkout")
    return path


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
