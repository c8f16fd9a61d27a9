"""The encoder's, accentuator's, scanner's, morphologizer's, lemmatizer's and parser's settings:
one frozen, validated config block each, saved in ``config.cfg`` only (the component folders hold data), read back alike in a
fresh process; old flat config keys still load; bad values are clear ``ConfigError``s."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import spacy
from spacy.training import Example
from spacy.util import registry
from stoicheia_lab.scan.silver import ScannedLine, label_line

from stoicheia_spacy.accent.settings import AccentuatorSettings
from stoicheia_spacy.assembly import build_pipeline, load_pipeline
from stoicheia_spacy.encoder.pipe import EncoderSettings
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.morph.settings import LemmatizerSettings, MorphologizerSettings, ParserSettings
from stoicheia_spacy.scan.settings import ScannerSettings

ROOT = Path(__file__).resolve().parents[1]
VERSE = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
SCANNER = {"theta": 0.3, "abstain_below": 0.2, "temperature": 1.5, "meters": ["dactylic_hexameter"],
           "synizesis_cost": 2.0}
ACCENT = {"punctuation": "copy", "capitals": "copy", "boundary": "copy"}
MORPH = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
LEMMA = {"top_k": 3, "use_lexicon": False, "min_count": 1, "max_drop": 6.0, "prefer_form": 1.0}
TEXT = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην."


def _pipeline(tiny_checkpoint: Path) -> spacy.Language:
    nlp = build_pipeline(str(tiny_checkpoint), components=False)
    nlp.add_pipe("stoicheia_accentuator", config={"settings": ACCENT, "lexicon": None})
    nlp.add_pipe("stoicheia_scanner", config={"settings": SCANNER, "lexicon": None})
    lab = label_line(ScannedLine("οὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,", "HLLHHHLLHHHLLHH", "hexameter", "x"))
    assert lab is not None
    ref = nlp.make_doc("οὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,")
    ref._.scan_gold = {"macron": lab.macron.tolist(), "scan": lab.scan.tolist()}
    examples = [Example(nlp.make_doc(ref.text), ref)]
    nlp.get_pipe("stoicheia_accentuator").initialize(lambda: [], nlp=nlp)
    nlp.get_pipe("stoicheia_scanner").initialize(lambda: examples, nlp=nlp)
    return nlp


def _answers(nlp: spacy.Language) -> dict:
    doc = nlp(VERSE)
    return {"settings": {name: dataclasses.asdict(nlp.get_pipe(name).settings)
                         for name in ("stoicheia_encoder", "stoicheia_accentuator", "stoicheia_scanner")},
            "accent": doc._.accent_text, "macrons": [m.to_dict() for m in doc._.macrons],
            "scansion": [v._.scansion.pattern for v in doc._.verses]}


def test_settings_live_in_the_config_and_read_back_alike_in_a_fresh_process(tiny_checkpoint: Path,
                                                                            tmp_path: Path) -> None:
    nlp = _pipeline(tiny_checkpoint)
    scanner = nlp.get_pipe("stoicheia_scanner")
    assert scanner.settings == ScannerSettings(**SCANNER) and scanner.settings.meters == ("dactylic_hexameter",)
    assert list(scanner.meters) == ["dactylic_hexameter"]
    assert nlp.get_pipe("stoicheia_accentuator").settings == AccentuatorSettings(**ACCENT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        scanner.settings.theta = 0.5  # type: ignore[misc]
    with pytest.raises(TypeError):
        scanner.cfg["theta"] = 0.5  # a read-only view
    scanner.calibration = {"backbone": {"prior": {"weights": [0.5], "bias": 0.0, "features": [0]}}}
    before = json.loads(json.dumps(_answers(nlp), default=list))
    nlp.to_disk(tmp_path / "p")
    for name in ("stoicheia_encoder", "stoicheia_accentuator", "stoicheia_scanner"):
        assert not (tmp_path / "p" / name / "cfg").exists(), name  # no settings file beside config.cfg
    assert sorted(p.name for p in (tmp_path / "p" / "stoicheia_scanner").iterdir()) == [
        "calibration.json", "heads.json", "heads.safetensors", "lexicon.json", "meters.json"]
    saved = spacy.util.load_config(tmp_path / "p" / "config.cfg")
    assert saved["components"]["stoicheia_scanner"]["settings"]["theta"] == 0.3
    assert saved["components"]["stoicheia_accentuator"]["settings"]["punctuation"] == "copy"
    script = textwrap.dedent(f"""
        import dataclasses, json, spacy
        from stoicheia_spacy.registrations import register_all
        register_all()
        nlp = spacy.load({str(tmp_path / "p")!r})
        doc = nlp({VERSE!r})
        print(json.dumps({{"settings": {{n: dataclasses.asdict(nlp.get_pipe(n).settings) for n in
                          ("stoicheia_encoder", "stoicheia_accentuator", "stoicheia_scanner")}},
                          "accent": doc._.accent_text, "macrons": [m.to_dict() for m in doc._.macrons],
                          "scansion": [v._.scansion.pattern for v in doc._.verses],
                          "calibration": nlp.get_pipe("stoicheia_scanner").calibration}}, default=list))
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    after = json.loads(out.stdout.strip().splitlines()[-1])
    assert after.pop("calibration") == scanner.calibration
    assert after == before


def test_old_flat_config_keys_and_cfg_files_still_load(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """A pipeline saved before the settings blocks: flat keys in ``config.cfg`` and a ``cfg``
    file per component (the scanner's with its calibration)."""
    nlp = _pipeline(tiny_checkpoint)
    nlp.to_disk(tmp_path / "old")
    text = (tmp_path / "old" / "config.cfg").read_text(encoding="utf-8")
    config = spacy.util.load_config(tmp_path / "old" / "config.cfg", interpolate=False)
    for name in ("stoicheia_encoder", "stoicheia_accentuator", "stoicheia_scanner"):
        block = config["components"][name]
        block.update({k: v for k, v in block.pop("settings").items() if not k.startswith("@")})
    config.to_disk(tmp_path / "old" / "config.cfg")
    assert "[components.stoicheia_scanner.settings]" in text
    assert "[components.stoicheia_scanner.settings]" not in (tmp_path / "old" / "config.cfg").read_text()
    calibration = {"backbone": {"prior": {"weights": [0.25], "bias": 0.1, "features": [0]}}}
    (tmp_path / "old" / "stoicheia_scanner" / "cfg").write_text(json.dumps(
        {**SCANNER, "temperature": 1.7, "macron_calibration": calibration, "lexicon": None}), encoding="utf-8")
    (tmp_path / "old" / "stoicheia_scanner" / "lexicon.json").unlink()
    loaded = load_pipeline(tmp_path / "old")
    scanner = loaded.get_pipe("stoicheia_scanner")
    assert scanner.settings == ScannerSettings(**{**SCANNER, "temperature": 1.7})  # the saved cfg's own
    assert scanner.calibration == calibration
    assert loaded.get_pipe("stoicheia_accentuator").settings == AccentuatorSettings(**ACCENT)
    assert loaded(VERSE)._.accent_text == nlp(VERSE)._.accent_text
    from stoicheia_spacy.cli.loading import load_for

    scan = load_for("scan", str(tmp_path / "old"))  # the CLI's route: only what `stoicheia scan` needs
    assert scan.pipe_names == ["stoicheia_encoder", "stoicheia_scanner"]
    assert scan.get_pipe("stoicheia_scanner").settings == scanner.settings
    config["components"]["stoicheia_scanner"]["beam"] = 4  # no option of the scanner
    config.to_disk(tmp_path / "old" / "config.cfg")
    with pytest.raises(ConfigError, match=r"stoicheia_scanner\] has unknown option\(s\) \['beam'\].*theta"):
        load_pipeline(tmp_path / "old")


@pytest.mark.parametrize(("factory", "settings", "match"), [
    ("stoicheia_scanner", {"decode": "guess"}, r"decode must be one of \['lattice', 'research'\], got 'guess'"),
    ("stoicheia_scanner", {"meter": "sapphic"}, "meter 'sapphic' is not a research metre"),
    ("stoicheia_scanner", {"temperature": 0.0}, "temperature must be > 0"),
    ("stoicheia_scanner", {"rule_eps": 1.5}, r"rule_eps must lie in \(0, 1\)"),
    ("stoicheia_scanner", {"meters": "dactylic_hexameter"}, "meters must be a list of names"),
    ("stoicheia_accentuator", {"diacritics": "auto"}, "plane 'diacritics': mode 'auto' is not one of"),
    ("stoicheia_accentuator", {"boundary": "guess"}, "plane 'boundary': mode 'guess'"),
    ("stoicheia_morphologizer", {"decode": "greedy"},
     r"stoicheia_morphologizer decode must be one of \['joint', 'research', 'paper'\], got 'greedy'"),
    ("stoicheia_lemmatizer", {"decode": "joint"}, r"decode must be one of \['topk_lexicon', 'research', 'paper'\]"),
    ("stoicheia_lemmatizer", {"top_k": 0}, "top_k must be an integer >= 1, got 0"),
    ("stoicheia_parser", {"decode": "mst"}, r"decode must be one of \['mst_single_root', 'research', 'paper'\]"),
])
def test_bad_settings_are_clear_config_errors(factory: str, settings: dict, match: str) -> None:
    nlp = spacy.blank("grc")
    config = {"settings": settings} if factory in MORPH else {"settings": settings, "lexicon": None}
    with pytest.raises(ConfigError, match=match):
        nlp.add_pipe(factory, config=config)


def test_configure_validates_and_names_the_options() -> None:
    nlp = spacy.blank("grc")
    scanner = nlp.add_pipe("stoicheia_scanner", config={"lexicon": None})
    with pytest.raises(ConfigError, match=r"unknown stoicheia_scanner options: \['thetta'\]; choose from"):
        scanner.configure(thetta=0.2)
    with pytest.raises(ConfigError, match="abstain_below must be >= 0"):
        scanner.configure(abstain_below=-1)
    assert scanner.configure(decode="research", meter="hex").decode == "research"
    encoder = nlp.add_pipe("stoicheia_encoder")
    with pytest.raises(ConfigError, match="store_logits must be true or false"):
        encoder.configure(store_logits="yes")
    assert encoder.settings == EncoderSettings()
    accent = nlp.add_pipe("stoicheia_accentuator", config={"lexicon": None})
    with pytest.raises(ConfigError, match="unknown stoicheia_accentuator options"):
        accent.configure(accent="predict")


@pytest.mark.parametrize("module", ["stoicheia_spacy.scan.settings", "stoicheia_spacy.accent.settings",
                                    "stoicheia_spacy.morph.settings",
                                    "stoicheia_spacy.encoder.pipe", "stoicheia_spacy.restore.settings"])
def test_an_added_option_touches_the_settings_class_and_its_user_only(module: str) -> None:
    import importlib

    doc = " ".join((importlib.import_module(module).__doc__ or "").split())
    assert "Adding an option touches this class and the code that uses it, nothing else" in doc \
        or "Adding an option touches that class and the code that uses it, nothing else" in doc


def test_a_new_option_needs_no_change_to_the_factory_or_the_loader() -> None:
    """A settings class with one more field is a config block the factory takes as it is."""

    @dataclasses.dataclass(frozen=True)
    class Extended(ScannerSettings):
        verse_split: str = "lines"

    registry.misc.register("test.ScannerSettingsExtended.v1", func=Extended)
    nlp = spacy.blank("grc")
    pipe = nlp.add_pipe("stoicheia_scanner", config={
        "settings": {"@misc": "test.ScannerSettingsExtended.v1", "verse_split": "sentences", "theta": 0.2},
        "lexicon": None})
    assert pipe.settings.verse_split == "sentences" and pipe.settings.theta == 0.2
    assert nlp.config["components"]["stoicheia_scanner"]["settings"]["verse_split"] == "sentences"


def test_library_helpers_read_no_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``find_lexicon``, ``find_macron_lexicon`` and ``default_meter_dirs`` take explicit
    paths (else the data package / the shipped metres); the package reads no ``STOICHEIA_*``
    variable but the asset mirror of the lab tooling and the cache folder."""
    import re

    from stoicheia_spacy.accent.lexasset import find_lexicon
    from stoicheia_spacy.scan.macron_lexicon import find_macron_lexicon
    from stoicheia_spacy.scan.meters import default_meter_dirs, shipped_meter_dirs

    monkeypatch.setenv("STOICHEIA_ACCENT_LEXICON", str(tmp_path / "absent.npz"))
    monkeypatch.setenv("STOICHEIA_MACRON_LEXICON", str(tmp_path / "absent.json.gz"))
    monkeypatch.setenv("STOICHEIA_METERS", str(tmp_path))
    assert find_lexicon(None) == find_lexicon()  # the installed package (or None), never the variable
    assert find_macron_lexicon() is None or find_macron_lexicon().name == "macron_lexicon.json.gz"
    assert default_meter_dirs() == shipped_meter_dirs()
    assert default_meter_dirs(tmp_path) == [*shipped_meter_dirs(), tmp_path]
    (tmp_path / "lex.npz").write_bytes(b"x")
    assert find_lexicon(tmp_path / "lex.npz") == tmp_path / "lex.npz"
    with pytest.raises(ConfigError, match="does not exist"):
        find_macron_lexicon(tmp_path / "missing.json.gz")
    names = set()
    for path in (ROOT / "stoicheia_spacy").rglob("*.py"):
        names |= set(re.findall(r"environ(?:\.get)?[\[(]\s*[\"'](STOICHEIA_\w+)", path.read_text(encoding="utf-8")))
    assert names <= {"STOICHEIA_ASSET_MIRROR", "STOICHEIA_CACHE"}  # the mirror, and where derived caches go


def test_a_half_precision_encoder_stays_half_precision_without_a_cfg_file(tiny_checkpoint: Path,
                                                                           tmp_path: Path) -> None:
    """``save_dtype`` is read back from the stored weights, not from a settings file."""
    from stoicheia_spacy.backbone.loading import stored_dtype

    nlp = build_pipeline(str(tiny_checkpoint), components=False)
    encoder = nlp.get_pipe("stoicheia_encoder")
    encoder.save_dtype = "bfloat16"  # what [initialize.components.stoicheia_encoder] save_dtype sets
    nlp.to_disk(tmp_path / "a")
    assert stored_dtype(tmp_path / "a" / "stoicheia_encoder") == "BF16"
    assert not (tmp_path / "a" / "stoicheia_encoder" / "cfg").exists()
    again = spacy.load(tmp_path / "a")
    assert again.get_pipe("stoicheia_encoder").save_dtype == "bfloat16"
    again.to_disk(tmp_path / "b")
    assert stored_dtype(tmp_path / "b" / "stoicheia_encoder") == "BF16"


def test_a_weights_folder_gives_data_not_settings_or_lexicon(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """``[initialize.components.stoicheia_scanner] weights``: the heads, metres and calibration
    of the folder; the settings and the lexicon block stay the config's."""
    from stoicheia_spacy.assembly import extend

    nlp = _pipeline(tiny_checkpoint)
    nlp.get_pipe("stoicheia_scanner").calibration = {"backbone": {"prior": {"weights": [0.5], "bias": 0.0,
                                                                             "features": [0]}}}
    nlp.get_pipe("stoicheia_scanner").to_disk(tmp_path / "scanner")
    (tmp_path / "scanner" / "lexicon.json").write_text('{"package": "stoicheia_lexicon_elsewhere"}')
    other = build_pipeline(str(tiny_checkpoint), components=False)
    extend(other, {"components": {"stoicheia_scanner": {"factory": "stoicheia_scanner", "settings": {"theta": 0.05},
                                                        "lexicon": None}},
                   "initialize": {"components": {"stoicheia_scanner": {"weights": str(tmp_path / "scanner")}}}})
    pipe: Any = other.get_pipe("stoicheia_scanner")
    assert other.config["initialize"]["components"]["stoicheia_scanner"] == {"weights": str(tmp_path / "scanner")}
    assert pipe.settings == ScannerSettings(theta=0.05) and pipe.lexicon_pin is None
    assert pipe.calibration == nlp.get_pipe("stoicheia_scanner").calibration
    assert list(pipe.meters) == ["dactylic_hexameter"]  # the metres the folder saved


# ------------------------------------------------------------------ morphosyntax
def _morph_helpers() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("morph_helpers", ROOT / "tests" / "morph" / "helpers.py")
    assert spec and spec.loader
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    return helpers


def _morph_pipeline() -> spacy.Language:
    helpers = _morph_helpers()
    nlp = helpers.tiny_nlp(*MORPH, cfg={"stoicheia_lemmatizer": {"settings": LEMMA}})
    helpers.initialized(nlp)
    return nlp


def _morph_answers(nlp: spacy.Language) -> list[list]:
    return [[t.text, t.tag_, t.pos_, t.lemma_, t.head.i, t.dep_] for t in nlp(TEXT)]


def test_morphosyntax_settings_live_in_the_config_and_data_in_files(tmp_path: Path) -> None:
    """Settings in ``config.cfg`` only; tags, scripts, lexicon and relations are each folder's
    ``data.json``; a fresh process reads back the same settings and annotations."""
    nlp = _morph_pipeline()
    lem = nlp.get_pipe("stoicheia_lemmatizer")
    assert lem.settings == LemmatizerSettings(**LEMMA)
    assert nlp.get_pipe("stoicheia_morphologizer").settings == MorphologizerSettings()
    assert nlp.get_pipe("stoicheia_parser").settings == ParserSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        lem.settings.top_k = 9  # type: ignore[misc]
    with pytest.raises(TypeError):
        lem.cfg["top_k"] = 9  # a read-only view
    assert dict(lem.cfg) == {"decode": "topk_lexicon", **LEMMA, "backoff": "form", "form_table": False, "table_lexicon": True,
                             "table_prior": 2.0,
                             "table_prior_papyrus": 1.0, "domain": "auto"}
    assert "λόγος" in lem.data["lexicon"] and lem.data["scripts"]
    before = _morph_answers(nlp)
    nlp.to_disk(tmp_path / "p")
    for name in MORPH:
        assert sorted(p.name for p in (tmp_path / "p" / name).iterdir()) == ["data.json", "model"], name
    data = json.loads((tmp_path / "p" / "stoicheia_lemmatizer" / "data.json").read_text(encoding="utf-8"))
    assert set(data) == {"scripts", "lexicon", "n_in"}  # data only: no setting beside config.cfg
    saved = spacy.util.load_config(tmp_path / "p" / "config.cfg")
    assert saved["components"]["stoicheia_lemmatizer"]["settings"] == {
        "@misc": "stoicheia.LemmatizerSettings.v1", **LEMMA, "decode": "topk_lexicon", "backoff": "form", "form_table": False,
        "table_lexicon": True, "table_prior": 2.0, "table_prior_papyrus": 1.0, "domain": "auto"}
    assert saved["components"]["stoicheia_parser"]["settings"] == {"@misc": "stoicheia.ParserSettings.v1",
                                                                    "decode": "mst_single_root", "max_words": 160,
                                                                    "scheme": "agdt", "tree_prior": 0.0, "tree_prior_labels": 0.0,
                                                                    "tree_prior_papyrus": 0.0,
                                                                    "tree_prior_labels_papyrus": 0.0, "domain": "auto"}
    script = textwrap.dedent(f"""
        import dataclasses, json, spacy
        from stoicheia_spacy.registrations import register_all
        register_all()
        nlp = spacy.load({str(tmp_path / "p")!r})
        print(json.dumps({{"settings": {{n: dataclasses.asdict(nlp.get_pipe(n).settings) for n in {MORPH!r}}},
                          "answers": [[t.text, t.tag_, t.pos_, t.lemma_, t.head.i, t.dep_] for t in nlp({TEXT!r})]}}))
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    after = json.loads(out.stdout.strip().splitlines()[-1])
    assert after["settings"] == {n: dataclasses.asdict(nlp.get_pipe(n).settings) for n in MORPH}
    assert after["answers"] == before


def test_morphosyntax_old_flat_keys_and_cfg_files_still_load(tmp_path: Path) -> None:
    """A pipeline saved before the settings blocks: ``decode``/``top_k``… as flat keys of
    ``config.cfg`` and a ``cfg`` file per component holding data and settings."""
    nlp = _morph_pipeline()
    before = _morph_answers(nlp)
    nlp.to_disk(tmp_path / "old")
    config = spacy.util.load_config(tmp_path / "old" / "config.cfg", interpolate=False)
    for name in MORPH:
        block = config["components"][name]
        block.update({k: v for k, v in block.pop("settings").items() if not k.startswith("@")})
        folder = tmp_path / "old" / name
        data = json.loads((folder / "data.json").read_text(encoding="utf-8"))
        if name == "stoicheia_lemmatizer":
            data.update(LEMMA)  # the old cfg file held the lemmatizer's settings too
        (folder / "cfg").write_text(json.dumps(data), encoding="utf-8")
        (folder / "data.json").unlink()
    config.to_disk(tmp_path / "old" / "config.cfg")
    assert "[components.stoicheia_lemmatizer.settings]" not in (tmp_path / "old" / "config.cfg").read_text()
    loaded = load_pipeline(tmp_path / "old")
    assert loaded.get_pipe("stoicheia_lemmatizer").settings == nlp.get_pipe("stoicheia_lemmatizer").settings
    assert loaded.get_pipe("stoicheia_parser").settings.decode == "mst_single_root"
    assert _morph_answers(loaded) == before
    loaded.to_disk(tmp_path / "new")  # saved again: the new layout
    assert not (tmp_path / "new" / "stoicheia_lemmatizer" / "cfg").exists()
    assert (tmp_path / "new" / "stoicheia_lemmatizer" / "data.json").is_file()
    config["components"]["stoicheia_parser"]["top_k"] = 4  # a lemmatizer option, not the parser's
    config.to_disk(tmp_path / "old" / "config.cfg")
    with pytest.raises(ConfigError, match=r"stoicheia_parser\] has unknown option\(s\) \['top_k'\].*decode"):
        load_pipeline(tmp_path / "old")


def test_morphosyntax_weights_folder_gives_data_not_settings(tmp_path: Path) -> None:
    """``[initialize.components.stoicheia_lemmatizer] weights``: the folder's scripts and lexicon
    (also from an older ``cfg`` file); the settings stay the config's."""
    from stoicheia_spacy.assembly import extend

    nlp = _morph_pipeline()
    pipe = nlp.get_pipe("stoicheia_lemmatizer")
    pipe.to_disk(tmp_path / "lem")
    data = json.loads((tmp_path / "lem" / "data.json").read_text(encoding="utf-8"))
    (tmp_path / "lem" / "cfg").write_text(json.dumps({**data, "top_k": 64, "use_lexicon": True}))
    (tmp_path / "lem" / "data.json").unlink()
    other = _morph_helpers().tiny_nlp()
    other.get_pipe("stoicheia_encoder").from_bytes(nlp.get_pipe("stoicheia_encoder").to_bytes())
    extend(other, {"components": {"stoicheia_lemmatizer": {"factory": "stoicheia_lemmatizer", "settings": {"top_k": 2}}},
                   "initialize": {"components": {"stoicheia_lemmatizer": {"weights": str(tmp_path / "lem")}}}})
    again: Any = other.get_pipe("stoicheia_lemmatizer")
    assert dict(again.cfg) == {"decode": "topk_lexicon", "min_count": 1, "use_lexicon": True, "top_k": 2,
                               "max_drop": 6.0, "prefer_form": 1.0, "backoff": "form", "form_table": False, "table_lexicon": True,
                               "table_prior": 2.0,
                               "table_prior_papyrus": 1.0, "domain": "auto"}
    assert again.data["scripts"] == pipe.data["scripts"] and again.data["lexicon"] == pipe.data["lexicon"]


def test_morphosyntax_configure_validates_and_names_the_options() -> None:
    from stoicheia_spacy.morph.released import set_decode

    nlp = spacy.blank("grc")
    pipes = {name: nlp.add_pipe(name) for name in MORPH}
    lem = pipes["stoicheia_lemmatizer"]
    with pytest.raises(ConfigError, match=r"unknown stoicheia_lemmatizer options: \['topk'\]; choose from "
                                          r"\['decode', 'min_count', 'use_lexicon', 'top_k', 'max_drop', 'prefer_form', 'backoff', 'form_table', "
                                          r"'table_lexicon', 'table_prior', "
                                          r"'table_prior_papyrus', 'domain'\]"):
        lem.configure(topk=3)
    with pytest.raises(ConfigError, match=r"unknown stoicheia_parser options: \['top_k'\]; choose from \['decode', 'max_words', 'scheme', 'tree_prior', "):
        pipes["stoicheia_parser"].configure(top_k=3)
    with pytest.raises(ConfigError, match="top_k must be an integer >= 1"):
        lem.configure(top_k=-1)
    with pytest.raises(ConfigError, match="use_lexicon must be true or false"):
        lem.configure(use_lexicon="yes")
    assert lem.configure(top_k=7).top_k == 7 and lem.cfg["top_k"] == 7
    assert pipes["stoicheia_morphologizer"].configure(decode="paper").decode == "paper"
    assert pipes["stoicheia_morphologizer"].decode_mode == "paper"
    with pytest.raises(ConfigError, match="needs a released tagger-parser checkpoint"):
        set_decode(nlp, "research")  # no release tables in this pipeline
