"""EpiDoc through the page in headless Chromium: upload a DDbDP file, see its gaps, download
the restored EpiDoc and read it again; a bad file gets a message; pasted text downloads as EpiDoc."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from stoicheia_spacy.leiden.epidoc import read_epidoc
from stoicheia_spacy.serve.browser import submit_and_wait, wait_for_file

from .conftest import DECREE
from .test_page import candidates

pytest.importorskip("selenium")
from selenium.webdriver.common.by import By

#: A Mons Claudianus ostracon with four lost gaps (short: the tiny pipeline restores it in a second).
OSTRACON = "o.claud.1.100.xml"


def upload(browser: Any, url: str, path: Path) -> None:
    browser.get(url + "/")
    browser.find_element(By.ID, "file").send_keys(str(path))
    submit_and_wait(browser, browser.find_element(By.ID, "run"))


def mirror_file(files: list[Path], name: str) -> Path:
    """The mirror's DDbDP file ``name`` (from the shared ``epidoc_ddbdp`` fixture)."""
    [path] = [p for p in files if p.name == name]
    return path


def top_candidates(browser: Any) -> list[str]:
    return [cands[0][0] for n in range(1, len(browser.find_elements(By.CSS_SELECTOR, ".gapinfo")) + 1)
            if (cands := candidates(browser, n))]


def test_upload_restore_download_and_read_again(browser: Any, tiny_url: str, epidoc_ddbdp: list[Path],
                                                fresh_downloads: Path) -> None:
    source = mirror_file(epidoc_ddbdp, OSTRACON)
    before = read_epidoc(source)
    upload(browser, tiny_url, source)
    assert not browser.find_elements(By.ID, "error")
    shown = browser.find_element(By.ID, "gapped").text
    assert shown.replace("\n", " ").split()[0] in before.text  # the edition's text, as read
    tops = top_candidates(browser)
    assert len(tops) == len(before.restorable) > 0
    browser.find_element(By.ID, "download-epidoc").click()
    restored = wait_for_file(fresh_downloads, ".restored.xml")
    assert restored.name == "o.claud.1.100.restored.xml"
    data = restored.read_bytes()
    after = read_epidoc(data)  # well-formed TEI again
    assert data.count(b'resp="#stoicheia"') >= len(tops)
    # every lost gap of known extent now holds a restoration; one of unknown extent stays a gap
    # (its candidates in a note), never a fixed-width <supplied>
    unknown = [i for i in before.restorable if before.gaps[i].max_width is None]
    assert len(after.restorable) == len(unknown)
    assert data.count(b'<note type="restoration"') == len(unknown)
    for i, top in zip(before.restorable, tops, strict=True):
        if i not in unknown:
            assert f'resp="#stoicheia">{top.strip()}'.encode() in data


def test_a_file_without_lost_gaps_passes_through(browser: Any, tiny_url: str, epidoc_ddbdp: list[Path]) -> None:
    upload(browser, tiny_url, mirror_file(epidoc_ddbdp, "o.claud.1.137.xml"))
    assert "passed through" in browser.find_element(By.CSS_SELECTOR, ".notes").text
    assert not browser.find_elements(By.CSS_SELECTOR, "#gapped a.gap")


@pytest.mark.parametrize(("content", "message"), [
    (b"<html><body><p>not an edition</p></body></html>", "not a TEI file"),
    (b'<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition">', "malformed XML"),
    (b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
     b'<TEI xmlns="http://www.tei-c.org/ns/1.0">&b;</TEI>', "entities"),
    (b"", "is empty"),
])
def test_a_bad_file_gives_a_message(browser: Any, tiny_url: str, tmp_path: Path, content: bytes, message: str) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(content)
    upload(browser, tiny_url, bad)
    assert message in browser.find_element(By.ID, "error").text
    assert "Traceback" not in browser.page_source and not browser.find_elements(By.ID, "results")


def test_a_bad_file_is_answered_with_400(tiny_url: str) -> None:
    body = (b'--X\r\nContent-Disposition: form-data; name="file"; filename="bad.xml"\r\n'
            b"Content-Type: application/xml\r\n\r\n<TEI><unclosed>\r\n--X--\r\n")
    request = urllib.request.Request(tiny_url + "/", data=body, method="POST",
                                     headers={"Content-Type": "multipart/form-data; boundary=X"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request)
    assert caught.value.code == 400
    assert "malformed XML" in caught.value.read().decode("utf-8")


def test_pasted_text_downloads_as_epidoc(browser: Any, tiny_url: str, fresh_downloads: Path) -> None:
    browser.get(f"{tiny_url}/?text={quote(DECREE)}")
    # the supplement written is the top candidate as the accentuator wrote it, when it ran (its column)
    first = browser.find_elements(By.CSS_SELECTOR, "#gap-1 table.cands tr")[1]
    top = first.find_elements(By.CSS_SELECTOR, "td.cand, td.accented")[-1].text
    browser.find_element(By.ID, "download-epidoc").click()
    data = wait_for_file(fresh_downloads, ".xml").read_bytes()
    view = read_epidoc(data)
    assert "Εὐπείθης ἐπεστάτει" in view.text and not view.restorable
    assert f'resp="#stoicheia">{top.strip()}'.encode() in data
