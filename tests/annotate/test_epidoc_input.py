"""``stoicheia annotate`` reads a folder of EpiDoc files: one record per file, its edition as
Leiden text; files that pass through or cannot be read are listed as errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from stoicheia_spacy.annotate.io import discover_shards, read_shard
from stoicheia_spacy.cli.app import app
from stoicheia_spacy.leiden.epidoc import read_epidoc


def epidoc_folder(tmp_path: Path, files: list[Path], names: list[str]) -> Path:
    folder = tmp_path / "epidoc"
    folder.mkdir()
    for path in files:
        if path.name in names:
            shutil.copy(path, folder / path.name)
    (folder / "broken.xml").write_text("<TEI xmlns='http://www.tei-c.org/ns/1.0'><text>", encoding="utf-8")
    return folder


def test_epidoc_files_are_records(tmp_path: Path, epidoc_ddbdp: list[Path]) -> None:
    folder = epidoc_folder(tmp_path, epidoc_ddbdp, ["sb.28.16845.xml", "p.mich.3.166.xml"])
    shards = discover_shards(folder)
    assert [p.name for p in shards] == ["broken.xml", "p.mich.3.166.xml", "sb.28.16845.xml"]
    records = {p.name: list(read_shard(p)) for p in shards}
    assert "malformed XML" in records["broken.xml"][0]["error"]
    assert "not Greek" in records["p.mich.3.166.xml"][0]["error"]
    (greek,) = records["sb.28.16845.xml"]
    assert greek["id"] == "sb.28.16845"
    assert greek["text"] == read_epidoc(folder / "sb.28.16845.xml").text
    assert greek["meta"] == {"format": "epidoc", "language": "grc", "gaps": 2, "lost_gaps": 2}


def test_cli_annotates_a_folder_of_epidoc(tmp_path: Path, tiny_pipeline: Path, epidoc_ddbdp: list[Path]) -> None:
    folder = epidoc_folder(tmp_path, epidoc_ddbdp, ["sb.28.16843.xml", "p.mich.3.166.xml"])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["annotate", str(folder), "-o", str(out), "--model", str(tiny_pipeline),
                                      "--components", "restorer", "--quiet"])
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in (out / "sb.28.16843.jsonl").read_text(encoding="utf-8").splitlines()]
    assert record["id"] == "sb.28.16843" and record["meta"]["lost_gaps"] == 3
    assert len(record["restorations"]) == len(read_epidoc(folder / "sb.28.16843.xml").gaps)
    errors = (out / "p.mich.3.166.errors.jsonl").read_text(encoding="utf-8")
    assert "not Greek" in errors
