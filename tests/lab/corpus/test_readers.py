"""Readers on the real mirror (first few records of each source) and on edge cases."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from stoicheia_lab.corpus import DOCUMENTARY, LITERARY, iter_records
from stoicheia_lab.corpus.readers import clean_ddbdp_token, cts_work, tesserae_work

from stoicheia_spacy.errors import CorpusError
from stoicheia_spacy.textnorm import fix_tesserae_line, sentence_spans, word_keys


@pytest.mark.parametrize("name", LITERARY + DOCUMENTARY)
def test_reader_first_records_on_mirror(shared_data: Path, name: str) -> None:
    records = list(iter_records(name, shared_data, limit=3))
    assert len(records) == 3
    for rec in records:
        assert set(rec) == {"id", "text", "source", "work", "tier"}
        assert rec["id"].startswith(name + ":") and rec["source"] == name
        assert rec["text"] == unicodedata.normalize("NFC", rec["text"])
        assert len(word_keys(rec["text"])) > 5
        if name in DOCUMENTARY:
            assert rec["work"].startswith("doc:")


def test_reader_ids_works_and_licence(shared_data: Path) -> None:
    perseus = next(iter_records("perseus", shared_data, limit=1))
    assert perseus["work"] == "tlg0085.tlg005"  # Aeschylus, Agamemnon
    assert perseus["text"].startswith("Φύλαξ\nθεοὺς μὲν αἰτῶ")
    glaux = next(iter_records("glaux", shared_data, limit=1, with_meta=True))
    assert glaux["work"] == "tlg0002.tlg001" and glaux["meta"]["license"] == "CC BY-SA 4.0"
    tess = next(iter_records("tesserae", shared_data, limit=1))
    # combining breathing written before the capital is moved onto it; ':' is the ano teleia
    assert "Ἀσσυρίων" in tess["text"] and "πατήρ·" in tess["text"]
    assert not any(unicodedata.combining(tess["text"][i]) and tess["text"][i - 1] == " "
                   for i in range(1, 5000))
    ddbdp = next(iter_records("ddbdp", shared_data, limit=1))
    assert ddbdp["text"].startswith("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν.")
    assert "|" not in ddbdp["text"] and "ὀγδοήκοντα" in ddbdp["text"]


def test_keys_and_helpers() -> None:
    assert cts_work("urn:cts:greekLit:tlg0059.tlg030.perseus-grc2") == "tlg0059.tlg030"
    assert cts_work("no urn") is None
    assert tesserae_work("texts/antiphon.speeches.part.2.first_tetralogy.tess") == "tess:antiphon.speeches"
    assert fix_tesserae_line("\u0313Ενταῦθα ἥκων: \u0314\u0342Ηι") == "Ἐνταῦθα ἥκων· Ἧι"
    assert word_keys("Ἀνὴρ ΛΌΓΟΣ λόγος, ᾠδῇ 12 abc") == ["ανηρ", "λογοσ", "λογοσ", "ωδη"]
    text = "ἦλθον. εἶδον; ἐνίκησα· καὶ τέλος"
    spans = sentence_spans(text)
    assert "".join(text[a:b] for a, b in spans) == text and len(spans) == 4
    assert clean_ddbdp_token("ὀγδοήκο[ν]-τα|num=780|", "original") == "ὀγδοήκοντα"


def test_bad_source_and_limit(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="unknown source"):
        list(iter_records("tlg", tmp_path))
    with pytest.raises(CorpusError, match="not found"):
        list(iter_records("perseus", tmp_path))
    with pytest.raises(CorpusError, match="no record reader"):
        list(iter_records("glaux_metadata", tmp_path))
