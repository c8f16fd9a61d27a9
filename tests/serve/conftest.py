"""Fixtures of the page tests: a headless Chromium (skipped, with the reason, only where
none can be installed), and the page served on a free loopback port from the golden tiny
backbone with a restorer and an accentuator (fast), or from the embedded default model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import spacy

from stoicheia_spacy.serve import Engine, create_app
from stoicheia_spacy.serve.browser import ServerThread, chromium, missing_browser

#: An Attic decree prescript with one four-letter lacuna.
DECREE = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι· Κεκροπὶς ἐπρυτάνευε, [.4]ιος ἐγραμμάτευε, Εὐπείθης ἐπεστάτει."
#: Candidates per gap of the tiny pipeline.
N_CANDIDATES = 5


@pytest.fixture(scope="session")
def tiny_nlp(tiny_checkpoint: Path) -> spacy.Language:
    from stoicheia_spacy.assembly import build_pipeline

    nlp = build_pipeline(str(tiny_checkpoint))
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 4, "n_candidates": N_CANDIDATES}})
    nlp.add_pipe("stoicheia_accentuator")
    return nlp


@pytest.fixture(scope="session")
def tiny_url(tiny_nlp: spacy.Language) -> Iterator[str]:
    with ServerThread(create_app(Engine("char_bert_tiny", nlp=tiny_nlp))) as url:
        yield url


@pytest.fixture(scope="session")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="session")
def browser(downloads: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    why = missing_browser()
    if why is not None:
        pytest.skip(f"no headless browser: {why}")
    driver = chromium(downloads, profile=tmp_path_factory.mktemp("chromium-profile"))
    driver.set_page_load_timeout(300)
    yield driver
    driver.quit()


@pytest.fixture()
def fresh_downloads(downloads: Path) -> Path:
    """The browser's download folder, emptied."""
    for path in downloads.iterdir():
        path.unlink()
    return downloads

