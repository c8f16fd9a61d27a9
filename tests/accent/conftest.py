"""Fixtures of the accentuator tests: real UD sentences, the tiny and the default backbone."""

from __future__ import annotations

import pytest
import torch

from tests.conftest import FIXTURES, TINY


@pytest.fixture(scope="session")
def ud_texts() -> list[str]:
    lines = (FIXTURES / "ud_sentences_200.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip()]


@pytest.fixture(scope="session")
def tiny_model():  # type: ignore[no-untyped-def]
    from stoicheia_spacy.backbone import load_backbone

    torch.set_num_threads(1)
    return load_backbone(TINY)


@pytest.fixture(scope="session")
def default_model():  # type: ignore[no-untyped-def]
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import load_backbone

    torch.set_num_threads(1)
    return load_backbone(default_model_dir())


@pytest.fixture(autouse=True)
def _accent_lexicon_off(monkeypatch):  # type: ignore[no-untyped-def]
    """Accent tests run without an installed lexicon unless they provide one (the data
    package looked up is one that is not installed)."""
    from stoicheia_spacy.accent import lexasset

    monkeypatch.setattr(lexasset, "DATA_PACKAGE", "stoicheia_lexicon_not_installed")
