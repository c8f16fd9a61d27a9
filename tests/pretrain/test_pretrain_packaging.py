"""``pretrain`` is a repository tool, not an installed module, and the toolkit never imports it."""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pretrain_is_not_installed_as_a_top_level_package() -> None:
    from setuptools import find_packages

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    include = [x.strip() for x in cfg["options.packages.find"]["include"].split() if x.strip()]
    packages = find_packages(where=str(ROOT), include=include)
    assert "stoicheia_spacy" in packages and "stoicheia_spacy.codec" in packages
    assert not any(p == "pretrain" or p.startswith("pretrain.") for p in packages)


def test_the_toolkit_never_imports_pretrain() -> None:
    offenders = []
    for path in (ROOT / "stoicheia_spacy").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "pretrain"]
    assert offenders == []


def test_which_model_uses_the_trainers_dev_rule() -> None:
    """provenance restates pretrain.data.is_dev (the package may not import pretrain)."""
    from pretrain.data import is_dev
    from stoicheia_spacy.provenance.index import is_trainer_dev

    ids = [f"urn:cts:greekLit:tlg{n:04d}.tlg001" for n in range(2000)] + ["", "Ἰλιάς"]
    for fraction in (0.0, 0.005, 0.5):
        assert [is_trainer_dev(i, fraction) for i in ids] == [is_dev(i, fraction) for i in ids]
