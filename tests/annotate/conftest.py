"""A small real pipeline for the annotate tests: the golden tiny encoder + restorer,
accentuator, morphologizer, lemmatizer and parser (heads initialised on 12 AGDT sentences),
saved to disk so that spawned workers and Ray actors load it by path; and a corpus of real
Greek (the UD sentences fixture)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)

COMPONENTS = ("stoicheia_restorer", "stoicheia_accentuator", "stoicheia_morphologizer",
              "stoicheia_lemmatizer", "stoicheia_parser")


def _helpers():
    spec = importlib.util.spec_from_file_location("morph_helpers", Path(__file__).parents[1] / "morph" / "helpers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tiny_pipeline(tmp_path_factory, tiny_checkpoint: Path) -> Path:
    helpers = _helpers()
    nlp = helpers.tiny_nlp(*COMPONENTS)
    helpers.initialized(nlp)
    path = tmp_path_factory.mktemp("pipeline") / "tiny"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="session")
def greek_sentences(fixtures_dir: Path) -> list[str]:
    lines = (fixtures_dir / "ud_sentences_200.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip()]
