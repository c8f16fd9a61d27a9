"""What a cold start no longer rebuilds (issue 38, item 1): the macron lexicon is read as
memory-mapped arrays instead of 0.5 M JSON entries parsed at every start, the code-point
tables are built once, and a data file's SHA-256 is read once per version of the file.
Each cache must give the same answers as what it replaces and notice a changed file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.assets import file_sha256
from stoicheia_spacy.codec import tables
from stoicheia_spacy.scan.macron_lexicon import SOURCES, MacronLexicon, from_markup
from stoicheia_spacy.scan.mapped_table import MappedKeys, MappedTable


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("STOICHEIA_CACHE", str(folder))
    return folder


def _lexicon() -> MacronLexicon:
    lex = MacronLexicon()
    for markup, source in (("ἄ^λγεα^", "hypotactic"), ("κα^λός", "lsj"), ("κα_λός", "wiktionary"),
                           ("θεά_", "hypotactic"), ("μῆνι^ν", "lsj")):
        lex.add(*from_markup(markup), SOURCES[source])
    lex.build_suffixes(min_count=1)
    lex.eta_forms = {"θεή", "καλή"}
    lex.corpus = {"θεά": [2, 7, 0]}
    return lex


def test_a_macron_lexicon_is_read_mapped_with_the_same_answers(cache: Path, tmp_path: Path) -> None:
    lex = _lexicon()
    lex.to_disk(tmp_path / "lex.json.gz")
    first = MacronLexicon.from_disk(tmp_path / "lex.json.gz")  # parses the JSON, saves the mapped copy
    again = MacronLexicon.from_disk(tmp_path / "lex.json.gz")  # reads the mapped copy
    assert len(list(cache.glob("macron-*"))) == 1
    for back in (first, again):
        assert isinstance(back.entries, MappedTable) and isinstance(back.eta_forms, MappedKeys)
        for word in ("Καλός", "ἄλγεα", "ἄλγεά", "θεὰ", "μῆνιν", "λόγος"):
            assert back.candidates(word) == lex.candidates(word), word
            assert back.suffix_vote(word, 1, min_count=1) == lex.suffix_vote(word, 1, min_count=1), word
        assert back.corpus_counts("θεὰ", 2) == (7, 0) and back.corpus_counts("θεά", 1) == (0, 0)
        assert back.eta_variant_attested("θεά", 2) and not back.eta_variant_attested("μῆνιν", 1)
        assert len(back) == len(lex) and back.meta["licence"] == first.meta["licence"]
    again.add(*from_markup("ἔθηκε^"), SOURCES["lsj"])  # a mapped lexicon is copied on the first write
    assert again.candidates("ἔθηκε") == [["....0", 2, 1]] and first.candidates("ἔθηκε") == []


def test_a_changed_macron_lexicon_is_not_read_from_the_old_copy(cache: Path, tmp_path: Path) -> None:
    lex = _lexicon()
    lex.to_disk(tmp_path / "lex.json.gz")
    assert MacronLexicon.from_disk(tmp_path / "lex.json.gz").candidates("λόγος") == []
    lex.add(*from_markup("λό^γος"), SOURCES["lsj"])
    lex.to_disk(tmp_path / "lex.json.gz")
    assert MacronLexicon.from_disk(tmp_path / "lex.json.gz").candidates("λόγος") == [[".0...", 2, 1]]


def test_an_unwritable_cache_still_reads_the_lexicon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("STOICHEIA_CACHE", str(blocker))
    _lexicon().to_disk(tmp_path / "lex.json.gz")
    back = MacronLexicon.from_disk(tmp_path / "lex.json.gz")
    assert back.candidates("καλός") == _lexicon().candidates("καλός") and isinstance(back.entries, dict)


def test_a_files_digest_is_cached_until_the_file_changes(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "kn.npz"
    path.write_bytes("ἔδοξε τῇ βουλῇ".encode())
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len(list((cache / "sha256").iterdir())) == 1
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()  # from the record
    path.write_bytes("ἔδοξε τῷ δήμῳ".encode())  # a new version: read again
    os.utime(path, ns=(1, 1))
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_cached_codepoint_tables_are_the_built_ones(cache: Path) -> None:
    tables.codepoint_tables.cache_clear()
    try:
        saved = tables.codepoint_tables()
        assert len(list(cache.glob("codepoint-tables-*.npy"))) == 1
        tables.codepoint_tables.cache_clear()
        read = tables.codepoint_tables()
        built = tables._build_tables()
        for name in ("kind", "letter", "cap", "flags", "punct"):
            assert np.array_equal(getattr(read, name), getattr(built, name)), name
            assert np.array_equal(getattr(saved, name), getattr(built, name)), name
        assert read.letter[ord("ᾅ")] == built.letter[ord("α")] and read.kind[ord("ᾅ")] == tables.KIND_LETTER
    finally:
        tables.codepoint_tables.cache_clear()
