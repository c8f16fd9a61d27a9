"""spaCy's config is the one assembly route: configs whose [initialize] names the weights,
the restorer's frozen settings block, and lexicon pins that a saved pipeline carries."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import spacy
from thinc.api import Config

from stoicheia_spacy.assembly import (
    CONFIG,
    assemble,
    build_pipeline,
    checkpoint_config,
    keep_components,
)
from stoicheia_spacy.errors import ConfigError, LexiconMissingError
from stoicheia_spacy.restore.settings import RestorerSettings

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = ROOT / "assets" / "models" / "grc_stoicheia_doc_clean" / CONFIG
DECREE = "ἔδοξεν τῆι βουλῆι [.3] δήμωι"


# ------------------------------------------------------------------ configs
def test_a_checkpoint_becomes_a_config_whose_initialize_names_its_weights(tiny_checkpoint: Path) -> None:
    config = checkpoint_config(str(tiny_checkpoint))
    assert config["nlp"]["pipeline"] == ["stoicheia_encoder"]
    loader = config["initialize"]["components"]["stoicheia_encoder"]["loader"]
    assert loader["@misc"] == "stoicheia.BackboneLoader.v1" and loader["source"] == str(tiny_checkpoint)
    nlp = assemble(config)
    assert nlp.get_pipe("stoicheia_encoder").has_weights
    doc = nlp("ἔδοξε τῇ βουλῇ")
    assert doc._.stoicheia.n_letters == 12
    # the same config, written and read back, assembles the same pipeline
    text = config.to_str()
    again = assemble(Config().from_str(text))
    assert again("ἔδοξε τῇ βουλῇ")._.stoicheia.hidden.tolist() == doc._.stoicheia.hidden.tolist()


def test_a_model_folder_config_names_its_weights_relative_to_itself(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """A config.cfg beside the weights: ${paths.base} is its folder, wherever it is copied."""
    folder = tmp_path / "model"
    shutil.copytree(tiny_checkpoint, folder / "backbone")
    nlp = build_pipeline(str(tiny_checkpoint), components=False)
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 2, "n_candidates": 2}})
    nlp.get_pipe("stoicheia_restorer").to_disk(folder / "restorer")
    (folder / CONFIG).write_text(textwrap.dedent("""
        [paths]
        base = null

        [nlp]
        lang = "grc"
        pipeline = ["stoicheia_encoder", "stoicheia_restorer"]

        [nlp.tokenizer]
        @tokenizers = "stoicheia.GreekTokenizer.v1"

        [components]

        [components.stoicheia_encoder]
        factory = "stoicheia_encoder"

        [components.stoicheia_encoder.model]
        @architectures = "stoicheia.CharEncoder.v1"
        d_model = 64
        n_heads = 4
        depth = 4
        char_window = 8

        [components.stoicheia_restorer]
        factory = "stoicheia_restorer"

        [components.stoicheia_restorer.settings]
        @misc = "stoicheia.RestorerSettings.v1"
        beam_width = 3
        n_candidates = 3

        [initialize]

        [initialize.components]

        [initialize.components.stoicheia_encoder]

        [initialize.components.stoicheia_encoder.loader]
        @misc = "stoicheia.BackboneLoader.v1"
        source = "${paths.base}/backbone"

        [initialize.components.stoicheia_restorer]
        weights = "${paths.base}/restorer"
        """), encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps({"license": "MIT (code); test weights"}), encoding="utf-8")
    moved = tmp_path / "elsewhere"
    shutil.move(str(folder), moved)
    nlp = assemble(moved / CONFIG)
    assert nlp.pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    assert nlp.meta["license"] == "MIT (code); test weights"
    restorer = nlp.get_pipe("stoicheia_restorer")
    assert restorer.settings.beam_width == 3  # the config's settings, not the folder's cfg
    [item] = nlp(DECREE)._.restorations
    assert len(item.candidates) == 3 and all(len(c.text) == 3 for c in item.candidates)
    only = assemble(moved / CONFIG, only=["stoicheia_encoder"])
    assert only.pipe_names == ["stoicheia_encoder"]
    with pytest.raises(ConfigError, match="no component"):
        keep_components(Config().from_disk(moved / CONFIG, interpolate=False), ["stoicheia_parser"])
    (moved / "restorer").rename(moved / "gone")
    with pytest.raises(ConfigError, match="weights: no folder"):
        assemble(moved / CONFIG)


def test_the_default_config_names_every_component_and_only_existing_weights() -> None:
    config = Config().from_disk(DEFAULT_CONFIG, interpolate=False)
    assert config["nlp"]["pipeline"][0] == "stoicheia_encoder"
    for name, settings in config["initialize"]["components"].items():
        assert name in config["nlp"]["pipeline"]
        if "weights" in settings:
            rel = settings["weights"].strip('"').replace("${paths.base}/", "")
            assert (DEFAULT_CONFIG.parent / rel).is_dir(), rel
    meta = json.loads((DEFAULT_CONFIG.parent / "meta.json").read_text(encoding="utf-8"))
    assert "MIT" in meta["license"] and "CC BY-NC 4.0" in meta["license"] and "GPL-3.0" in meta["license"]
    for name in config["nlp"]["pipeline"]:  # every component's terms are named
        assert any(name in what for what in meta["licenses"]), name
    assert not (DEFAULT_CONFIG.parent / "pipeline.json").exists()  # one route: the config


# ------------------------------------------------------------------ restorer settings
def test_restorer_settings_are_one_frozen_validated_config_block(tmp_path: Path, tiny_checkpoint: Path) -> None:
    settings = RestorerSettings(beam_width=4, temperatures={"1-3": 2.0}, width_log_prior=[-1.0, -2.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.beam_width = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.temperatures["1-3"] = 1.0  # type: ignore[index]
    assert settings.width_log_prior == (-1.0, -2.0)
    with pytest.raises(ConfigError, match="mode"):
        RestorerSettings(mode="sideways")
    with pytest.raises(ConfigError, match="unknown stoicheia_restorer options"):
        settings.replace(beam=3)
    nlp = build_pipeline(str(tiny_checkpoint), components=False)
    restorer = nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 4, "context": 64}})
    assert restorer.settings == RestorerSettings(beam_width=4, context=64)
    assert nlp.config["components"]["stoicheia_restorer"]["settings"]["@misc"] == "stoicheia.RestorerSettings.v1"
    with pytest.raises(TypeError):
        restorer.cfg["beam_width"] = 9  # read-only view: change the settings with configure()
    restorer.configure(n_candidates=2)
    assert restorer.settings.n_candidates == 2 and restorer.settings.beam_width == 4
    with pytest.raises(ConfigError):
        restorer.configure(abstain_below=2.0)
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert loaded.get_pipe("stoicheia_restorer").settings == restorer.settings


# ------------------------------------------------------------------ lexicon pins
def _fake_lexicon_package(root: Path, name: str, content: bytes, version: str = "9.9.9") -> Path:
    """A data package ``name`` (importable from ``root``) holding the two lexicon files."""
    pkg = root / name
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(f'__version__ = "{version}"\n', encoding="utf-8")
    (pkg / "formlex.npz").write_bytes(content)
    (pkg / "macron_lexicon.json.gz").write_bytes(content)
    return root


def _pinned_pipeline(tiny_checkpoint: Path, package: str) -> spacy.Language:
    nlp = build_pipeline(str(tiny_checkpoint), components=False)
    nlp.add_pipe("stoicheia_accentuator", config={"lexicon": {"package": package}})
    nlp.get_pipe("stoicheia_accentuator").initialize(lambda: [], nlp=nlp)
    return nlp


def test_a_saved_pipeline_pins_its_lexicon_and_refuses_another(tiny_checkpoint: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    package = "stoicheia_lexicon_pin_test"
    root = _fake_lexicon_package(tmp_path / "site", package, b"lexicon one")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    nlp = _pinned_pipeline(tiny_checkpoint, package)
    pin = nlp.get_pipe("stoicheia_accentuator").lexicon_pin
    assert pin.package == package and pin.version == "9.9.9" and len(pin.sha256) == 64
    nlp.to_disk(tmp_path / "p")
    saved = json.loads((tmp_path / "p" / "stoicheia_accentuator" / "lexicon.json").read_text(encoding="utf-8"))
    assert saved == dataclasses.asdict(pin)
    assert not list((tmp_path / "p").rglob("formlex.npz"))  # the data stays in its own package
    assert spacy.load(tmp_path / "p").get_pipe("stoicheia_accentuator").lexicon_pin == pin
    (root / package / "formlex.npz").write_bytes(b"lexicon two")  # another lexicon installed
    from stoicheia_spacy.accent import lexasset

    lexasset._sha256.cache_clear()
    with pytest.raises(LexiconMissingError, match="stoicheia-lexicon-pin-test.*not the file.*make demo"):
        spacy.load(tmp_path / "p")
    with pytest.raises(LexiconMissingError, match="not installed.*make demo.*lexicon = null"):
        _pinned_pipeline(tiny_checkpoint, "stoicheia_lexicon_absent")


def test_saved_with_the_lexicon_loaded_in_a_fresh_process_without_it(tiny_checkpoint: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The clear error (never a silent fallback), and ``lexicon = null`` as the explicit way out."""
    import importlib

    package = "stoicheia_lexicon_fresh_test"
    root = _fake_lexicon_package(tmp_path / "site", package, b"lexicon")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    _pinned_pipeline(tiny_checkpoint, package).to_disk(tmp_path / "pinned")
    off = build_pipeline(str(tiny_checkpoint), components=False)
    off.add_pipe("stoicheia_accentuator", config={"lexicon": None})
    off.initialize()
    off.to_disk(tmp_path / "off")
    script = textwrap.dedent(f"""
        import spacy
        from stoicheia_spacy.errors import LexiconMissingError
        from stoicheia_spacy.registrations import register_all
        register_all()
        print(spacy.load({str(tmp_path / "off")!r}).get_pipe("stoicheia_accentuator").lexicon_pin)
        try:
            spacy.load({str(tmp_path / "pinned")!r})
        except LexiconMissingError as exc:
            print("MISSING", exc)
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                                        "OMP_NUM_THREADS": "1"})
    lines = out.stdout.splitlines()
    assert lines[0] == "None"
    assert lines[1].startswith("MISSING") and "stoicheia-lexicon-fresh-test" in lines[1] and "make demo" in lines[1]
    assert "Warning" not in out.stderr


def test_package_without_the_lexicon_is_an_explicit_opt_out(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """``stoicheia package --no-lexicon`` (``make demo`` without a mirror) sets ``lexicon = null``;
    otherwise a missing lexicon stops the build with the package's name."""
    from stoicheia_spacy.cli.package import package_pipeline

    config = checkpoint_config(str(tiny_checkpoint))
    config["nlp"]["pipeline"].append("stoicheia_accentuator")
    config["components"]["stoicheia_accentuator"] = {
        "factory": "stoicheia_accentuator", "lexicon": {"@misc": "stoicheia.Lexicon.v1", "package": "stoicheia_lexicon_absent"}}
    config.to_disk(tmp_path / "model.cfg")
    with pytest.raises(LexiconMissingError, match="stoicheia-lexicon-absent"):
        package_pipeline(str(tmp_path / "model.cfg"), "nolex", tmp_path / "out", build="none")
    path = package_pipeline(str(tmp_path / "model.cfg"), "nolex", tmp_path / "out", build="none", lexicon=False)
    [data] = [p for p in path.rglob("stoicheia_accentuator") if p.is_dir()]
    assert json.loads((data / "lexicon.json").read_text(encoding="utf-8")) is None
    loaded = spacy.load(data.parent)
    assert loaded.get_pipe("stoicheia_accentuator").lexicon_pin is None


# ------------------------------------------------------------------ the previous release
def test_a_config_of_the_previous_release_assembles_to_the_same_pipeline(fixtures_dir: Path) -> None:
    """The default model's config with the flat options of the release before the settings
    blocks (tests/fixtures/legacy_doc_clean_config.cfg) migrates, in one place, to today's
    config and assembles to the same components with the same settings."""
    from spacy import util

    from stoicheia_spacy.assembly import ENCODER
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.legacy_config import migrate_config

    old_path = fixtures_dir / "legacy_doc_clean_config.cfg"
    old = util.load_config(old_path, interpolate=False)
    assert old["components"][ENCODER]["store_hidden"] is True and "settings" not in old["components"][ENCODER]
    migrated, changed = migrate_config(old)
    today = util.load_config(DEFAULT_CONFIG, interpolate=False)
    parts = [ENCODER, "stoicheia_scanner"]  # the components whose flat options the migration moves
    assert changed and all(migrated["components"][name] == today["components"][name] for name in parts)
    before = assemble(old_path, base=default_model_dir(), only=parts)
    after = assemble(DEFAULT_CONFIG, only=parts)
    assert before.pipe_names == after.pipe_names == parts
    for name in parts:
        assert before.get_pipe(name).settings == after.get_pipe(name).settings  # type: ignore[attr-defined]
    assert before.get_pipe(ENCODER).settings.store_hidden  # type: ignore[attr-defined]
    assert before.get_pipe("stoicheia_scanner").settings.temperature == pytest.approx(1.795250029)  # type: ignore[attr-defined]
    verse = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"
    assert [m.to_dict() for m in before(verse)._.macrons] == [m.to_dict() for m in after(verse)._.macrons]
