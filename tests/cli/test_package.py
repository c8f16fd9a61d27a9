"""``stoicheia package`` end to end on the golden tiny checkpoint, and ``stoicheia demo``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spacy
from typer.testing import CliRunner

from stoicheia_spacy import __version__
from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.cli import app
from stoicheia_spacy.cli.demo import mask_restorations, read_sample
from stoicheia_spacy.cli.package import package_pipeline
from stoicheia_spacy.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
TEXT = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη"


@pytest.fixture(scope="module")
def packaged(tmp_path_factory, tiny_checkpoint: Path) -> Path:
    out = tmp_path_factory.mktemp("packages")
    result = CliRunner().invoke(app, ["package", str(tiny_checkpoint), "--name", "tiny", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return out / f"grc_stoicheia_tiny-{__version__}"


def test_package_builds_a_loadable_pipeline(packaged: Path, tiny_checkpoint: Path) -> None:
    data_dir = packaged / "grc_stoicheia_tiny" / f"grc_stoicheia_tiny-{__version__}"
    assert (packaged / "dist" / f"grc_stoicheia_tiny-{__version__}.tar.gz").is_file()
    files = {p.name for p in (data_dir / "stoicheia_encoder").iterdir()}
    assert files == {"config.json", "model.safetensors"}  # settings: config.cfg only
    assert not list(data_dir.rglob("*.bin")) or all(p.name == "lookups.bin" for p in data_dir.rglob("*.bin"))
    nlp = spacy.load(data_dir)
    assert nlp.lang == "grc" and nlp.pipe_names == ["stoicheia_encoder"]
    reference = build_pipeline(str(tiny_checkpoint))
    np.testing.assert_array_equal(nlp(TEXT)._.stoicheia.hidden, reference(TEXT)._.stoicheia.hidden)
    # the checkpoint became a config whose [initialize] names its weights; spaCy assembles it again
    config = spacy.util.load_config(packaged.parent / "tiny.cfg")
    assert config["initialize"]["components"]["stoicheia_encoder"]["loader"]["source"] == str(tiny_checkpoint)
    from stoicheia_spacy.assembly import assemble

    np.testing.assert_array_equal(assemble(packaged.parent / "tiny.cfg")(TEXT)._.stoicheia.hidden,
                                  reference(TEXT)._.stoicheia.hidden)
    assert nlp.meta["license"]  # every package names its licences


def test_installed_package_loads_by_name(packaged: Path, tmp_path: Path) -> None:
    sdist = packaged / "dist" / f"grc_stoicheia_tiny-{__version__}.tar.gz"
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(sdist)], check=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO), os.environ.get("PYTHONPATH", "")])}
    code = ("import spacy; nlp = spacy.load('grc_stoicheia_tiny'); "
            f"print(nlp({TEXT!r})._.stoicheia.hidden.shape)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=tmp_path, check=True)
    assert out.stdout.strip() == "(5, 47, 64)"


def test_package_refuses_a_bad_name(tmp_path: Path, tiny_checkpoint: Path) -> None:
    with pytest.raises(ConfigError, match="identifier"):
        package_pipeline(str(tiny_checkpoint), "doc-clean", tmp_path)


def test_demo_shows_planes_gaps_and_runs_a_pipeline(packaged: Path) -> None:
    data_dir = packaged / "grc_stoicheia_tiny" / f"grc_stoicheia_tiny-{__version__}"
    result = CliRunner().invoke(app, ["demo", "--model", str(data_dir)])
    assert result.exit_code == 0, result.output
    assert "Κόμων" in result.output and "diacritic" in result.output
    assert "Leiden gaps (restorations masked): 4" in result.output
    assert "hidden states (layers, letters, width): (5," in result.output


def test_sample_restorations_become_lacunae() -> None:
    text = read_sample()
    assert "κεχαραγμένο[ν]" in text and not text.startswith("#")
    assert "κεχαραγμένο[.1]" in mask_restorations(text)
