"""Fixtures of the restore tests: the installed parallels index and Kneser-Ney 8-gram (skipped
where the lexicon data package is not installed)."""

from __future__ import annotations

import importlib.util
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from stoicheia_spacy.accent.lexasset import find_parallels
from stoicheia_spacy.errors import ParallelsIndexError
from stoicheia_spacy.parallels.index import ParallelIndex
from stoicheia_spacy.restore.kneser_ney import load_kn


@pytest.fixture(scope="module")
def index() -> ParallelIndex:
    try:
        return ParallelIndex(find_parallels())
    except ParallelsIndexError as exc:
        pytest.skip(f"no parallels index installed: {exc}")


@pytest.fixture(scope="module")
def kn() -> Any:
    if importlib.util.find_spec("stoicheia_lexicon_grc") is None:
        pytest.skip("the lexicon data package is not installed (make lexicon)")
    path = Path(str(resources.files("stoicheia_lexicon_grc") / "kn_lm8.npz"))
    if not path.is_file():
        pytest.skip("the data package has no kn_lm8.npz")
    return load_kn(path)
