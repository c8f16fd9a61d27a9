"""The package surface: lazy exports resolve, the codec path never imports torch, and every
registered entry point (spaCy factories, architectures, misc) resolves."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

import pytest

import stoicheia_spacy

SETUP_CFG = Path(__file__).resolve().parents[1] / "setup.cfg"


def _entry_points() -> list[tuple[str, str, str]]:
    parser = configparser.ConfigParser()
    parser.read(SETUP_CFG, encoding="utf-8")
    rows = []
    for group, body in parser["options.entry_points"].items():
        for line in body.strip().splitlines():
            name, target = (part.strip() for part in line.split("=", 1))
            rows.append((group, name, target))
    return rows


@pytest.mark.parametrize("name", [n for n in stoicheia_spacy.__all__ if n != "__version__"])
def test_every_export_resolves(name: str) -> None:
    assert getattr(stoicheia_spacy, name) is not None


def test_codec_and_leiden_do_not_import_torch() -> None:
    code = ("import sys, stoicheia_spacy as s; s.encode_planes('λόγος'); s.parse_gaps('[---]'); "
            "print('torch' in sys.modules, 'spacy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


@pytest.mark.parametrize(("group", "name", "target"), _entry_points())
def test_every_entry_point_resolves(group: str, name: str, target: str) -> None:
    import importlib

    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    assert callable(obj)
    if group == "spacy_architectures":
        from spacy.util import registry

        assert registry.architectures.get(name) is obj
    elif group == "spacy_misc":
        from spacy.util import registry

        assert registry.misc.get(name) is obj
    elif group == "spacy_factories":
        from spacy.language import Language

        assert Language.has_factory(name)


def test_registrations_name_every_entry_point_module() -> None:
    """``register_all`` (for a checkout without entry points) imports exactly what they name."""
    from stoicheia_spacy.registrations import MODULES

    modules = {target.partition(":")[0] for group, _, target in _entry_points() if group.startswith("spacy_")}
    assert set(MODULES) == modules


def test_architectures_are_registered_from_their_rooms() -> None:
    rooms = ("encoder", "restore", "accent", "scan", "morph", "date")
    targets = [target for group, _, target in _entry_points() if group == "spacy_architectures"]
    assert targets and all(t.split(".")[1] in rooms for t in targets)
