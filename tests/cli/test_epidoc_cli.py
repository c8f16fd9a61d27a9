"""``stoicheia restore FILE.xml [--format epidoc]`` and ``accentuate --notation epidoc`` on DDbDP
files of the mirror, with the golden tiny checkpoint (a restorer pipeline saved to disk)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree
from typer.testing import CliRunner

from stoicheia_spacy.cli.app import app
from stoicheia_spacy.leiden.epidoc import TEI_NS, read_epidoc

NS = {"t": TEI_NS}


@pytest.fixture(scope="module")
def tiny_restorer_dir(tmp_path_factory, tiny_checkpoint: Path) -> Path:  # type: ignore[no-untyped-def]
    import spacy
    import torch

    from tests.conftest import TINY_MODEL

    torch.set_num_threads(1)
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"model": dict(TINY_MODEL)})
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
        "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(tiny_checkpoint)}}
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"max_letters": 4}})
    nlp.initialize()
    path = tmp_path_factory.mktemp("epidoc_cli") / "restorer"
    nlp.to_disk(path)
    return path


def ddbdp(files: list[Path], name: str) -> Path:
    return next(p for p in files if p.name == name)


def test_restore_writes_epidoc(tmp_path: Path, tiny_restorer_dir: Path, epidoc_ddbdp: list[Path]) -> None:
    source = ddbdp(epidoc_ddbdp, "sb.28.16843.xml")
    out = tmp_path / "restored.xml"
    result = CliRunner().invoke(app, ["restore", str(source), "--format", "epidoc", "-o", str(out),
                                      "--model", str(tiny_restorer_dir), "--top", "3", "--beam", "4"])
    assert result.exit_code == 0, result.output
    root = etree.fromstring(out.read_bytes())
    ours = root.findall(".//t:supplied[@resp='#stoicheia']", NS)
    before = read_epidoc(source)
    unknown = [i for i in before.restorable if before.gaps[i].max_width is None]  # [---]: extent unknown
    assert len(before.restorable) == 3 and len(unknown) == 2
    assert len(ours) == 1  # the one-letter gap; the two of unknown extent stay gaps, candidates in a note
    assert len(root.findall(".//t:note[@type='restoration'][@resp='#stoicheia']", NS)) == 2
    assert all(len(app_el.findall("t:rdg", NS)) <= 2 for app_el in root.findall(".//t:app[@resp='#stoicheia']", NS))
    again = read_epidoc(out)
    assert [again.gaps[i].max_width for i in again.restorable] == [None, None]
    # the same file as text: the candidates of each lost gap are printed (not of the illegible one)
    shown = CliRunner().invoke(app, ["restore", str(source), "--model", str(tiny_restorer_dir), "--top", "2",
                                     "--beam", "4"])
    assert shown.exit_code == 0, shown.output
    as_json = CliRunner().invoke(app, ["restore", str(source), "--model", str(tiny_restorer_dir), "--top", "2",
                                       "--beam", "4", "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    view = read_epidoc(source)
    assert [(g["start"], g["end"]) for g in json.loads(as_json.output)] == \
        [(view.gaps[i].start, view.gaps[i].end) for i in view.restorable]
    assert "gap 1: [.1]" in shown.output and "gap 3: [---]" in shown.output and "gap 4" not in shown.output and "candidate" in shown.output


def test_restore_passes_other_files_through(tmp_path: Path, epidoc_ddbdp: list[Path]) -> None:
    latin = ddbdp(epidoc_ddbdp, "p.mich.3.166.xml")
    out = tmp_path / "latin.xml"
    result = CliRunner().invoke(app, ["restore", str(latin), "--format", "epidoc", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == latin.read_bytes()
    assert "not Greek: passed through" in result.output
    broken = tmp_path / "broken.xml"
    broken.write_text('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text>', encoding="utf-8")
    bad = CliRunner().invoke(app, ["restore", str(broken), "--format", "epidoc"])
    assert bad.exit_code == 1 and "EpiDocError: malformed XML" in bad.output
    assert "Traceback" not in bad.output
    wrong = CliRunner().invoke(app, ["restore", str(latin), "--format", "html"])
    assert wrong.exit_code == 2 and "--format" in wrong.output  # not one of text, json, epidoc


def test_accentuate_reads_epidoc(tiny_checkpoint: Path, epidoc_ddbdp: list[Path]) -> None:
    source = ddbdp(epidoc_ddbdp, "sb.28.16845.xml")
    result = CliRunner().invoke(app, ["accentuate", str(source), "--notation", "epidoc", "--model",
                                      str(tiny_checkpoint), "--boundary", "keep", "--capitals", "keep",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["source"] == read_epidoc(source).text == "Γεῶργε [---] τ\u0323ρισωμα\u0323[τ]ριτες [---]"
    assert shown["text"].startswith("Γεῶργε")
    latin = CliRunner().invoke(app, ["accentuate", str(ddbdp(epidoc_ddbdp, "p.mich.3.166.xml")),
                                     "--notation", "epidoc", "--model", str(tiny_checkpoint)])
    assert latin.exit_code == 1 and "not Greek" in latin.output


DECREE = (f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition" xml:lang="grc">\n'
          '<ab>ἔδοξε τῇ βουλῇ <gap reason="lost" quantity="3" unit="character"/> τῷ δήμῳ '
          '<gap reason="lost" extent="unknown" unit="character"/></ab>\n</div></body></text></TEI>\n')


def test_restore_epidoc_accent_writes_accented_supplied_letters_and_keeps_unknown_gaps(tmp_path: Path) -> None:
    """The default pipeline: ``--accent`` writes the supplied letters with accents (καὶ, not και);
    the gap of unknown extent stays a gap with its candidates in a note."""
    import unicodedata

    source, out = tmp_path / "decree.xml", tmp_path / "restored.xml"
    source.write_text(DECREE, encoding="utf-8")
    result = CliRunner().invoke(app, ["restore", str(source), "--format", "epidoc", "--accent", "--top", "3",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    root = etree.fromstring(out.read_bytes())
    ours = [el.text or "" for el in root.findall(".//t:supplied", NS)]
    assert len(ours) == 3 and all(any(unicodedata.combining(c) for c in unicodedata.normalize("NFD", t))
                                  for t in ours), ours
    assert root.find(".//t:gap[@extent='unknown']", NS) is not None
    assert root.find(".//t:note[@type='restoration']", NS) is not None
