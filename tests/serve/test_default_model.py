"""The page as an editor gets it: ``stoicheia serve``'s default pipeline (the embedded
model with every shipped component), in headless Chromium, on a decree with one gap."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from stoicheia_spacy.serve import Engine, create_app
from stoicheia_spacy.serve.browser import ServerThread

from .conftest import DECREE
from .test_page import candidates, submit_text

pytest.importorskip("selenium")
from selenium.webdriver.common.by import By


@pytest.fixture(scope="module")
def default_url() -> Iterator[str]:
    engine = Engine()  # the default pipeline, loaded on the first request
    with ServerThread(create_app(engine)) as url:
        yield url


#: Odyssey 1.1, for the scansion.
VERSE = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"


def test_default_page_shows_every_section(browser: Any, default_url: str) -> None:
    submit_text(browser, default_url, f"{DECREE}\n{VERSE}")
    cands = candidates(browser, 1)
    assert len(cands) >= 5 and all(1 <= len(text.strip()) <= 4 for text, _ in cands)
    accented = browser.find_element(By.ID, "accented").text
    assert "Εὐπείθης" in accented and "[.4]" in accented
    trees = browser.find_elements(By.CSS_SELECTOR, "#parse .tree svg")  # displaCy's SVG, drawn by the server
    words = " ".join(tree.text for tree in trees)
    assert trees and "ἔδοξεν" in words and "ἐπρυτάνευε" in words
    assert browser.find_elements(By.CSS_SELECTOR, "#parse svg tspan.displacy-tag")  # parts of speech
    scansion = browser.find_element(By.ID, "scansion").text
    assert "dactylic hexameter" in scansion and "ἔν | νε | πε" in scansion
    date = browser.find_element(By.ID, "date")
    assert ("BCE" in date.text or "CE" in date.text) and date.find_elements(By.CSS_SELECTOR, "svg rect.bin")
    which = browser.find_element(By.ID, "which").text
    assert "5-grams" in which and ("Never read by fold" in which or "No released fold" in which)
    kinds = {a.get_attribute("id") for a in browser.find_elements(By.CSS_SELECTOR, "a.download")}
    assert {"download-conllu", "download-json"} <= kinds
