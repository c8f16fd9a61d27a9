"""Fixtures for the pretraining tests: a small real Greek corpus (96 records of
Aeschylus' Agamemnon from the Perseus texts, CC BY-SA 3.0 US, with gold/silver/bronze
tiers assigned in turn and one in four left without a tier), the codec encoder, and a
one-document fold-0 treebank as the parse data workflow writes it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def corpus() -> Path:
    return DATA / "agamemnon_small.jsonl"


@pytest.fixture(scope="session")
def encoder() -> Callable[[str], Any]:
    from stoicheia_spacy.codec import encode_planes

    return encode_planes


@pytest.fixture(scope="session")
def treebank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import spacy
    from spacy.tokens import DocBin

    root = tmp_path_factory.mktemp("treebank")
    (root / "fold0").mkdir()
    nlp = spacy.blank("grc")
    for split in ("train", "dev"):
        DocBin(docs=[nlp("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος")]).to_disk(root / "fold0" / f"{split}.spacy")
    return root
