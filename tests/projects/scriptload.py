"""Helpers for the tests beside this file: import a project script by path, write the sample treebank."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import spacy
from spacy.tokens import DocBin


def load_script(path: Path, name: str) -> ModuleType:
    """The module at ``path``, imported under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_sample_treebank(path: Path, helpers: ModuleType) -> Path:
    """The morph tests' gold sentences (``helpers``: tests/morph/helpers.py) as a DocBin at ``path``."""
    nlp = spacy.blank("grc")
    db = DocBin()
    for sent in helpers.load_sentences():
        db.add(helpers.gold_doc(nlp, sent))
    db.to_disk(path)
    return path
