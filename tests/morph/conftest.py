"""Fixtures shared by the morphology tests."""

from __future__ import annotations

import pytest
import spacy


@pytest.fixture(scope="module")
def default_morph() -> spacy.Language:
    """The installed default pipeline with the encoder, morphologizer and lemmatizer only."""
    try:
        return spacy.load("grc_stoicheia_doc_clean", exclude=["stoicheia_restorer", "stoicheia_accentuator",
                                                               "stoicheia_parser", "stoicheia_scanner", "stoicheia_dater"])
    except OSError:
        pytest.skip("the default pipeline grc_stoicheia_doc_clean is not installed")
