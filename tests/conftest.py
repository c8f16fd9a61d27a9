"""Shared fixtures. ``shared_data`` is the open-data mirror (``STOICHEIA_ASSET_MIRROR``,
else ``../shared/data`` beside the checkout); tests that need it skip, with a message,
only when it is absent (outside CI). ``tiny_checkpoint`` / ``tiny_model_config`` are the
golden tiny backbone (:data:`TINY`, its one path) and its ``stoicheia.CharEncoder.v1`` settings.

The pipelines, one of each per session (a test that changes a component's settings puts
them back before it ends):

- ``default_nlp``: the installed default package ``grc_stoicheia_doc_clean``, every component;
- ``default_parts(*names)``: the embedded default model's ``config.cfg`` assembled with the
  encoder and only ``names`` (the restore-only, morphosyntax-only, ... pipelines);
- ``tiny_restorer_nlp``: the tiny backbone + a ``stoicheia_restorer`` (beam 4, 4 candidates);
- ``attributor_nlp``: a blank pipeline + the shipped attributor (``attributor.cfg``);
- ``tiny_nlp(*names)``: a fresh tiny pipeline with untrained ``names`` (function scope).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
import spacy
import torch
from spacy.language import Language

from stoicheia_spacy.assembly import (
    DEFAULT_PACKAGE,
    ENCODER,
    assemble,
    attributor_config,
    build_pipeline,
    default_config,
    extend,
)
from stoicheia_spacy.registrations import register_all

# The suite runs against this checkout, whose entry points may not be the installed ones.
register_all()
# torch on one thread: the cores are shared with the rest of the suite.
torch.set_num_threads(1)

REPO_ROOT = Path(__file__).resolve().parents[1]
# The lab's tests import stoicheia_lab; `make install` installs it, a bare checkout finds it here.
if importlib.util.find_spec("stoicheia_lab") is None:
    sys.path.append(str(REPO_ROOT / "lab"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The golden tiny backbone (``config.json`` + ``model.safetensors``), the one copy every test uses.
TINY = FIXTURES / "char_bert_tiny"


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
def lexicon_installed(shared_data: Path) -> str:
    """The lexicon data package ``stoicheia-lexicon-grc`` that ``make lexicon`` builds from the
    mirror and installs (``make test`` depends on it); its version."""
    from importlib import metadata

    try:
        return metadata.version("stoicheia-lexicon-grc")
    except metadata.PackageNotFoundError:
        pytest.fail("stoicheia-lexicon-grc is not installed although the mirror is here: run `make lexicon`")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = find_shared_data()
    if path is None:
        pytest.skip("open-data mirror absent: set STOICHEIA_ASSET_MIRROR or place shared/data beside the checkout")
    return path


@pytest.fixture(scope="session")
def epidoc_ddbdp(shared_data: Path) -> list[Path]:
    """The DDbDP EpiDoc TEI files of the mirror (``epidoc/ddbdp/*.xml``), sorted; skips
    only when the mirror is absent."""
    folder = shared_data / "epidoc" / "ddbdp"
    files = sorted(folder.glob("*.xml"))
    assert files, f"no EpiDoc files in {folder}"
    return files


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


#: ``stoicheia.CharEncoder.v1`` settings of the golden tiny checkpoint (short rows so
#: that packing and windowing are exercised by short real sentences).
TINY_MODEL = {
    "@architectures": "stoicheia.CharEncoder.v1",
    "d_model": 64, "n_heads": 4, "depth": 4, "char_window": 8,
    "max_length": 48, "overlap": 12,
}


@pytest.fixture(scope="session")
def tiny_checkpoint(fixtures_dir: Path) -> Path:
    assert (TINY / "model.safetensors").is_file(), "golden tiny checkpoint fixture is missing"
    return TINY


@pytest.fixture()
def tiny_model_config() -> dict:
    return dict(TINY_MODEL)


@pytest.fixture(scope="session")
def default_nlp() -> Language:
    """The installed default pipeline (``make default-package``), every component."""
    return spacy.load(DEFAULT_PACKAGE)


@pytest.fixture(scope="session")
def default_parts():  # type: ignore[no-untyped-def]
    """``default_parts(*names)``: the embedded default config with the encoder and ``names``
    only (``assemble(default_config(), only=...)``), built once per set of names."""
    built: dict[tuple[str, ...], Language] = {}

    def parts(*names: str) -> Language:
        key = (ENCODER, *names)
        if key not in built:
            built[key] = assemble(default_config(), only=key)
        return built[key]

    return parts


@pytest.fixture(scope="session")
def tiny_restorer_nlp(tiny_checkpoint: Path) -> Language:
    """The golden tiny backbone's pipeline + a ``stoicheia_restorer`` at beam 4, 4 candidates."""
    nlp = build_pipeline(str(tiny_checkpoint))
    extend(nlp, {"components": {"stoicheia_restorer": {
        "factory": "stoicheia_restorer", "settings": {"beam_width": 4, "n_candidates": 4}}}})
    return nlp


@pytest.fixture(scope="session")
def attributor_nlp() -> Language:
    """The shipped attributor alone: its TF-IDF models read the text, not the encoder."""
    nlp = spacy.blank("grc")
    extend(nlp, attributor_config())
    return nlp


@pytest.fixture()
def tiny_nlp(tiny_model_config, tiny_checkpoint):  # type: ignore[no-untyped-def]
    """Build blank grc + stoicheia_encoder holding the golden tiny checkpoint (initialized)
    + the named components (``configs``: their configs)."""

    def build(*components: str, configs: dict | None = None, initialize: bool = True) -> spacy.Language:
        nlp = spacy.blank("grc")
        nlp.add_pipe("stoicheia_encoder", config={"model": dict(tiny_model_config)})
        nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
            "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(tiny_checkpoint)}}
        for name in components:
            nlp.add_pipe(name, config=(configs or {}).get(name, {}))
        if initialize:
            nlp.initialize()
        return nlp

    return build
