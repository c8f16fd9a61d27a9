"""The accent lexicon as a separate data asset, the 'auto' word division, the Doc view and
the scriptio-continua path of the default pipe and the command line."""

from __future__ import annotations

import fnmatch
import importlib
import logging
import lzma
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.accent import lexasset
from stoicheia_spacy.accent.formlex import FormLexicon
from stoicheia_spacy.accent.predict import PlaneControl, decode_heads, model_inputs, strip_planes
from stoicheia_spacy.codec import decode_planes, encode_planes
from stoicheia_spacy.errors import ConfigError

JOHN_BARE = "εναρχηηνολογοσκαιολογοσηνπροστονθεον"
JOHN = "ἐν ἀρχῇ ἦν ὁ λόγος καὶ ὁ λόγος ἦν πρὸς τὸν θεόν"


@pytest.fixture(autouse=True)
def _warn_again():  # type: ignore[no-untyped-def]
    lexasset._warned.clear()


def test_auto_boundary_mode() -> None:
    ctl = PlaneControl(boundary="auto")
    assert ctl.resolve(encode_planes("ἐν ἀρχῇ ἦν")).boundary == "copy"
    assert ctl.resolve(encode_planes(JOHN_BARE)).boundary == "predict"
    with pytest.raises(ConfigError):
        PlaneControl(diacritics="auto")


def test_no_lexicon_logs_once_and_decodes_with_the_backbone(caplog) -> None:  # type: ignore[no-untyped-def]
    # (the accent tests' conftest names a data package that is not installed)
    with caplog.at_level(logging.WARNING, logger="stoicheia_spacy.accent"):
        assert lexasset.load_lexicon() is None
        assert lexasset.load_lexicon() is None
    assert sum("No accent lexicon installed" in r.message for r in caplog.records) == 1
    with pytest.raises(ConfigError):
        lexasset.find_lexicon("/nonexistent/formlex.npz")


def test_data_package_layout_and_lookup(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    lex = FormLexicon.from_forms([("λόγος", 3), ("ὁ", 9)], sources='{"licenses": {"test": "GPL-3.0"}}')
    lex.to_disk(tmp_path / "lex.npz")
    root = lexasset.write_data_package(tmp_path / "lex.npz", tmp_path / "out", "GPL TEXT")
    assert (root / "pyproject.toml").read_text().count("GPL-3.0-or-later") == 1
    assert (root / lexasset.DATA_PACKAGE / "LICENSE").read_text() == "GPL TEXT"
    assert "test: GPL-3.0" in (root / "README.md").read_text()
    monkeypatch.setenv("STOICHEIA_ACCENT_LEXICON", "none")  # read by nothing any more
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, lexasset.DATA_PACKAGE, raising=False)  # an installed one, imported before
    importlib.invalidate_caches()
    try:
        found = lexasset.find_lexicon()
        assert found is not None and found.name == lexasset.LEXICON_FILE
        loaded = lexasset.load_lexicon()
        assert loaded is not None and loaded.forms_of("λογοσ") == [("λόγος", 3)]
    finally:
        sys.modules.pop(lexasset.DATA_PACKAGE, None)
    # the code package itself carries no lexicon data
    pkg = Path(lexasset.__file__).resolve().parents[1]
    assert not list(pkg.rglob("*.npz"))


def test_decode_heads_with_a_lexicon_keeps_given_division() -> None:
    lex = FormLexicon.from_forms([("ἐν", 5000), ("ἀρχῇ", 500), ("ἦν", 2000), ("ἐνάρχη", 0)])
    planes = encode_planes("εν αρχη ην")
    ctl = PlaneControl(boundary="auto", diacritics="predict")
    inputs, fixed = model_inputs(planes, ctl)
    n = len(planes)
    logp = {"boundary": np.log(np.full((n, 3), 1 / 3)), "dia": np.log(np.full((n, 48), 1 / 48)),
            "punct": np.log(np.full((n, 6), 1 / 6)), "cap": np.log(np.full((n, 2), 0.5))}
    pred = decode_heads(planes, inputs, fixed, logp, ctl, lexicon=lex)
    assert decode_planes(pred.planes).split() == ["ἐν", "ἀρχῇ", "ἦν"]
    bare = strip_planes(encode_planes("ἐν ἀρχῇ ἦν"))
    inputs, fixed = model_inputs(bare, ctl)
    assert decode_planes(decode_heads(bare, inputs, fixed, logp, ctl, lexicon=lex).planes).split()[0] == "ἐν"


def _small_real_lexicon(mirror: Path, bare_text: str, path: Path) -> Path:
    """A real, small lexicon: the Hunspell forms whose bare spelling occurs in ``bare_text``
    (count 0, as in the full lexicon) and the counted word forms of UD Perseus dev."""
    from stoicheia_lab.accent.evaluate import read_ud_texts

    from stoicheia_spacy.accent.formlex import FormCounter

    def bare(form: str) -> str:
        s = "".join(c for c in unicodedata.normalize("NFD", form) if not unicodedata.combining(c))
        return s.lower().replace("ς", "σ").replace("’", "")

    counter = FormCounter()
    with lzma.open(mirror / "lexica/grc_hunspell_wordforms.txt.xz", "rt", encoding="utf-8") as fh:
        counter.add_forms((line.strip(), 0) for line in fh if line.strip() and bare(line.strip()) in bare_text)
    for text in read_ud_texts(mirror / "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-dev.conllu.xz"):
        counter.add_planes(encode_planes(text))
    counter.build().to_disk(path)
    return path


def test_default_pipe_and_cli_divide_scriptio_continua(lexicon_installed) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.cli import app

    nlp = build_pipeline(str(default_model_dir()))  # the default pipeline with its lexicon, as `make demo` packages it
    assert nlp.get_pipe("stoicheia_accentuator").lexicon_pin.version == lexicon_installed
    assert "stoicheia_accentuator" in nlp.pipe_names
    doc = nlp(JOHN_BARE)
    assert doc.text == JOHN_BARE
    rendered = doc._.accent_text
    assert len(rendered.split()) >= 8  # divided (the gold has 12 words)
    view = doc._.accent_doc
    assert view.text == rendered and view._.source_text == JOHN_BARE
    assert [t.text for t in view if t.text not in ",.·;"] == rendered.replace(".", "").replace(",", "").split()
    gold = set(JOHN.split())
    hits = sum(w.strip(".,·;") in gold | {"καί", "θεὸν"} for w in rendered.split())
    assert hits >= 8, rendered
    out = CliRunner().invoke(app, ["accentuate", JOHN_BARE])
    assert out.exit_code == 0, out.output
    assert out.output.strip() == rendered


def test_every_file_the_data_package_holds_is_declared_package_data(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A file copied into the package but left out of package-data is silently missing from the wheel
    (the form table was, so ``form_table = true`` decoded without it)."""
    lex = FormLexicon.from_forms([("λόγος", 3)], sources='{"licenses": {"test": "GPL-3.0"}}')
    lex.to_disk(tmp_path / "lex.npz")
    np.savez(tmp_path / "table.npz", forms=np.array(["λόγος"]))
    domain = tmp_path / "inscription"  # a domain's sources folder (Run 14): files and the index folder
    (domain / "parallels").mkdir(parents=True)
    for name in ("kn.npz", "kn.json", "vocabulary.npy", "parallels/sa.npy", "parallels/docs.json"):
        (domain / name).write_bytes(b"x")
    root = lexasset.write_data_package(tmp_path / "lex.npz", tmp_path / "out", "GPL TEXT",
                                       form_table=tmp_path / "table.npz", domain_sources={"inscription": domain})
    text = (root / "pyproject.toml").read_text()
    declared = re.findall(r'"([^"]+)"', text.split("[tool.setuptools.package-data]", 1)[1])
    pkg = root / lexasset.DATA_PACKAGE
    files = [p.relative_to(pkg).as_posix() for p in pkg.rglob("*") if p.is_file() and p.name != "__init__.py"]
    assert lexasset.FORM_TABLE_FILE in files
    assert "domains/inscription/parallels/sa.npy" in files and "domains/inscription/kn.npz" in files
    # setuptools' package-data globs do not cross a folder: each level is declared
    assert [f for f in files if f.startswith("domains/")
            and not any(fnmatch.fnmatch(f, p) and p.count("/") == f.count("/") for p in declared)] == []
    assert [f for f in files if not any(fnmatch.fnmatch(f, pattern) for pattern in declared)] == []
