"""Loading a pipeline imports the factories of its own components only: spaCy's
``Language()`` would import every installed ``spacy_factories`` entry point (spacy-transformers
pulls in ``transformers``, seconds of a cold start)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from stoicheia_spacy.registrations import config_factories, lazy_factories

ROOT = Path(__file__).resolve().parents[1]


def test_config_factories_skips_excluded_and_sourced() -> None:
    config = {"components": {"a": {"factory": "sentencizer"}, "b": {"factory": "stoicheia_restorer"}}}
    assert config_factories(config) == {"sentencizer", "stoicheia_restorer"}
    assert config_factories(config, exclude=["b"]) == {"sentencizer"}
    assert config_factories({"components": {"c": {"source": "en_core_web_sm"}}}) is None


def test_lazy_factories_restores_spacy_behaviour() -> None:
    from spacy import util

    eager = util.registry._entry_point_factories
    with lazy_factories({"sentencizer"}):
        assert "get_all" in eager.__dict__
        nlp = spacy.blank("grc")
        nlp.add_pipe("sentencizer")
    assert "get_all" not in eager.__dict__
    assert nlp("ἔδοξε τῇ βουλῇ. καὶ τῷ δήμῳ.").has_annotation("SENT_START")


@pytest.mark.skipif(importlib.util.find_spec("spacy_transformers") is None, reason="spacy-transformers absent")
def test_load_pipeline_does_not_import_transformers(tmp_path: Path) -> None:
    nlp = spacy.blank("grc")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "pipe")
    code = ("import sys; from stoicheia_spacy.assembly import load_pipeline; "
            f"nlp = load_pipeline({str(tmp_path / 'pipe')!r}); "
            "print(nlp.pipe_names, 'spacy_transformers' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["['sentencizer']", "False", "False"]
