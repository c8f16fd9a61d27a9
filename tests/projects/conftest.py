"""Fixtures of the project tests: the sample treebank the parse and finetune recipes train on."""

from __future__ import annotations

from pathlib import Path

import pytest
from scriptload import load_script, write_sample_treebank

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def docbin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 12 real AGDT sentences of tests/morph (gold tags, lemmas, arcs) as a DocBin."""
    helpers = load_script(REPO / "tests" / "morph" / "helpers.py", "morph_helpers_treebank")
    return write_sample_treebank(tmp_path_factory.mktemp("corpus") / "sample.spacy", helpers)
