"""The page in headless Chromium, served from the golden tiny backbone: paste, permalink,
downloads, and readable messages (with 4xx) for bad input."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from stoicheia_lab.scoring.conll import read_conllu

from stoicheia_spacy.serve.browser import submit_and_wait, wait_for_file

from .conftest import DECREE, N_CANDIDATES

pytest.importorskip("selenium")
from selenium.webdriver.common.by import By


def submit_text(browser: Any, url: str, text: str) -> None:
    browser.get(url + "/")
    box = browser.find_element(By.ID, "text")
    box.clear()
    box.send_keys(text)
    submit_and_wait(browser, browser.find_element(By.ID, "run"))


def candidates(browser: Any, number: int) -> list[tuple[str, float]]:
    rows = browser.find_elements(By.CSS_SELECTOR, f"#gap-{number} table.cands tr")[1:]
    return [(row.find_element(By.CSS_SELECTOR, "td.cand").text, float(row.find_element(By.CSS_SELECTOR, "td.p").text))
            for row in rows]


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_paste_a_decree_shows_the_gap_and_its_candidates(browser: Any, tiny_url: str) -> None:
    submit_text(browser, tiny_url, DECREE)
    gaps = browser.find_elements(By.CSS_SELECTOR, "#gapped a.gap")
    assert len(gaps) == 1
    cands = candidates(browser, 1)
    assert len(cands) == N_CANDIDATES
    assert all(1 <= len(text.strip()) <= 4 for text, _ in cands)  # [.4]: four characters (a space may be one)
    probs = [p for _, p in cands]
    assert probs == sorted(probs, reverse=True) and 0.0 < sum(probs) <= 1.001
    assert gaps[0].text.startswith(f"[{cands[0][0]}]")  # the top candidate fills the gap in the text
    assert "ἐγραμμάτευε" in browser.find_element(By.ID, "gapped").text
    accented = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#gap-1 table.cands td.accented")]
    assert accented[:5] and all(accented[:5])  # the top candidates with accents, as the accentuator reads them
    assert browser.find_element(By.ID, "accented").text.strip()
    assert browser.find_element(By.ID, "text").get_attribute("value") == DECREE  # the form keeps the text


def test_permalink_runs_on_load(browser: Any, tiny_url: str) -> None:
    submit_text(browser, tiny_url, DECREE)
    link = browser.find_element(By.ID, "permalink").get_attribute("href")
    browser.get("about:blank")
    browser.get(link)
    assert browser.current_url == link
    assert len(candidates(browser, 1)) == N_CANDIDATES
    assert browser.find_element(By.ID, "text").get_attribute("value") == DECREE


def test_downloads_conllu_and_json(browser: Any, tiny_url: str, fresh_downloads: Path) -> None:
    browser.get(f"{tiny_url}/?text={quote(DECREE)}")
    browser.find_element(By.ID, "download-conllu").click()
    sentences = read_conllu(wait_for_file(fresh_downloads, ".conllu"))
    forms = [word["form"] for sentence in sentences for word in sentence]
    assert "ἐπρυτάνευε" in forms and "Εὐπείθης" in forms
    browser.find_element(By.ID, "download-json").click()
    data = json.loads(wait_for_file(fresh_downloads, ".json").read_text(encoding="utf-8"))
    assert data["text"] == DECREE
    [gap] = data["restorations"]
    assert DECREE[gap["start"]:gap["end"]] == "[.4]" and len(gap["candidates"]) == N_CANDIDATES


@pytest.mark.parametrize(("text", "message"), [
    ("ἔδοξεν τῆι βουλῆι [.4", "never closed"),
    ("   ", "paste some Greek text"),
    ("the council and the people", "no Greek letters"),
])
def test_bad_text_gives_a_message_and_400(browser: Any, tiny_url: str, text: str, message: str) -> None:
    submit_text(browser, tiny_url, text)
    assert message in browser.find_element(By.ID, "error").text
    assert not browser.find_elements(By.ID, "results")
    assert "Traceback" not in browser.page_source
    if text.strip():
        assert status_of(f"{tiny_url}/?text={quote(text)}") == 400


def test_too_long_text_is_413_and_unknown_download_404(tiny_url: str) -> None:
    assert status_of(f"{tiny_url}/?text={quote('α' * 20_001)}") == 413
    assert status_of(f"{tiny_url}/download/nothing/json") == 404


def test_assets_come_from_the_server(browser: Any, tiny_url: str) -> None:
    browser.get(tiny_url + "/")
    sources = browser.execute_script(
        "return Array.from(document.querySelectorAll('link[href],script[src]')).map(e => e.href || e.src)")
    assert sources and all(src.startswith(tiny_url + "/static/") for src in sources)
    for src in sources:
        assert status_of(src) == 200
