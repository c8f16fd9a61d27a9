"""``--model`` naming an installed pipeline package (as ``make demo`` installs
``grc_stoicheia_doc_clean``): the commands read the pipeline folder inside the package
(``LANG_NAME-VERSION``), as ``spacy.load`` does, not the package folder, which holds no
``config.cfg``."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest

from stoicheia_spacy.cli.loading import load_for, pipeline_path
from tests.conftest import TINY


@pytest.fixture(scope="module")
def saved_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from stoicheia_spacy.assembly import build_pipeline

    nlp = build_pipeline(str(TINY), components=False)
    nlp.add_pipe("stoicheia_restorer")
    nlp.add_pipe("stoicheia_accentuator")
    folder = tmp_path_factory.mktemp("pipeline") / "p"
    nlp.to_disk(folder)
    return folder


@pytest.fixture()
def installed(saved_pipeline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``saved_pipeline`` laid out as ``spacy package`` + pip install lay it out."""
    name, version = "grc_stoicheia_doctest", "0.0.1"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    meta = json.loads((saved_pipeline / "meta.json").read_text(encoding="utf-8"))
    meta.update(lang="grc", name="stoicheia_doctest", version=version)
    (package / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    shutil.copytree(saved_pipeline, package / f"{name}-{version}")
    info = tmp_path / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return name


def test_an_installed_package_loads_only_what_the_command_needs(installed: str) -> None:
    folder = pipeline_path(installed)
    assert folder is not None and (folder / "config.cfg").is_file()
    assert folder.name == f"{installed}-0.0.1"
    assert load_for("restore", installed).pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    assert load_for("accentuate", installed).pipe_names == ["stoicheia_encoder"]
