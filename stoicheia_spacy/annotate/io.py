"""Input shards (plain text, JSON-lines or EpiDoc XML files, or a folder of them) and atomic
output shards. An EpiDoc file (``.xml``) is one record: its edition read as Leiden text
(:func:`stoicheia_spacy.leiden.read_epidoc`); a file that passes through (another language, no
edition) or cannot be read is listed as an error.

A *shard* is one input file; it gives one output file per format, named after it
(``DIR/NAME.jsonl``, ``DIR/NAME.conllu``, ``DIR/NAME.spacy``), plus ``DIR/NAME.errors.jsonl``
listing the records that were skipped. Every file is written to a temporary name and moved
into place with ``os.replace``, so an output that exists is complete: a rerun skips it.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import spacy
from spacy.tokens import DocBin

from ..errors import ConfigError, EpiDocError, InvalidTextError
from ..leiden.epidoc import read_epidoc
from ..textcheck import validate_text
from .convert import record_to_conllu, record_to_doc

TEXT_SUFFIXES = (".txt", ".txt.gz")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".ndjson")
XML_SUFFIXES = (".xml",)
#: Output format -> file suffix.
FORMATS = {"jsonl": ".jsonl", "conllu": ".conllu", "docbin": ".spacy"}
UNITS = ("line", "paragraph", "file")


def shard_name(path: Path) -> str:
    """The output name of an input file: its name without the input suffixes."""
    name = path.name
    for suffix in (*TEXT_SUFFIXES, *JSONL_SUFFIXES, *XML_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def discover_shards(source: Path) -> list[Path]:
    """``source`` itself, or the text / JSON-lines / EpiDoc files directly inside the folder ``source``."""
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise ConfigError(f"input {source} does not exist")
    suffixes = (*TEXT_SUFFIXES, *JSONL_SUFFIXES, *XML_SUFFIXES)
    files = sorted(p for p in source.iterdir() if p.is_file() and p.name.endswith(suffixes))
    if not files:
        raise ConfigError(f"no .txt, .jsonl or .xml files in {source}")
    names = [shard_name(p) for p in files]
    if len(set(names)) != len(names):
        raise ConfigError(f"two input files in {source} would write the same output shard")
    return files


def _open(path: Path) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def read_shard(path: Path, unit: str = "line") -> Iterator[dict[str, Any]]:
    """Records ``{"id", "text", "meta"?}`` of one input file; a record that cannot be used comes
    as ``{"id", "error"}`` instead (bad JSON, no ``text``, invalid characters), never raised."""
    if unit not in UNITS:
        raise ConfigError(f"--unit must be one of {', '.join(UNITS)}, got {unit!r}")
    stem = shard_name(path)
    if path.name.endswith(XML_SUFFIXES):
        yield _epidoc_record(path, stem)
        return
    try:
        with _open(path) as handle:
            if path.name.endswith(JSONL_SUFFIXES):
                for n, line in enumerate(handle, 1):
                    if line.strip():
                        yield _json_record(line, f"{stem}:{n}")
                return
            yield from _text_records(handle.read(), stem, unit)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        yield {"id": stem, "error": f"cannot read {path.name}: {exc}"}


def _epidoc_record(path: Path, stem: str) -> dict[str, Any]:
    """The record of one EpiDoc file: its edition as Leiden text, or why it cannot be used."""
    try:
        view = read_epidoc(path)
    except EpiDocError as exc:
        return {"id": stem, "error": f"{path.name}: {exc}"}
    if not view.text.strip():
        return {"id": stem, "error": f"{path.name}: {view.message}"}
    meta = {"format": "epidoc", "language": view.language, "gaps": len(view.gaps),
            "lost_gaps": len(view.restorable)}
    return _checked(stem, view.text, meta)


def _json_record(line: str, fallback_id: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"id": fallback_id, "error": f"not JSON: {exc}"}
    if not isinstance(obj, dict):
        return {"id": fallback_id, "error": "not a JSON object"}
    rec_id = str(obj["id"]) if obj.get("id") is not None else fallback_id
    return _checked(rec_id, obj.get("text"), {k: v for k, v in obj.items() if k not in ("id", "text")})


def _text_records(text: str, stem: str, unit: str) -> Iterator[dict[str, Any]]:
    if unit == "file":
        yield _checked(stem, text, {})
    elif unit == "paragraph":
        for k, para in enumerate(p for p in text.split("\n\n") if p.strip()):
            yield _checked(f"{stem}:p{k + 1}", " ".join(para.split()), {})
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                yield _checked(f"{stem}:{n}", line.strip(), {})


def _checked(rec_id: str, text: Any, meta: dict[str, Any]) -> dict[str, Any]:
    try:
        validate_text(text)
    except InvalidTextError as exc:
        return {"id": rec_id, "error": str(exc)}
    if not text.strip():
        return {"id": rec_id, "error": "empty text"}
    return {"id": rec_id, "text": text, **({"meta": meta} if meta else {})}


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and move it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with tmp.open("wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def output_paths(out_dir: Path, name: str, formats: list[str]) -> dict[str, Path]:
    """Output file per format of the shard ``name``."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ConfigError(f"--format takes {', '.join(FORMATS)} (comma-separated), got {formats!r}")
    return {f: out_dir / f"{name}{FORMATS[f]}" for f in formats}


def write_shard(out_dir: Path, name: str, formats: list[str], lines: list[str], errors: list[dict[str, Any]]) -> None:
    """Write the errors file, then each output of one shard, each atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(out_dir / f"{name}.errors.jsonl",
                 "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in errors))
    for fmt, path in output_paths(out_dir, name, formats).items():
        atomic_write(path, render(fmt, lines))


def render(fmt: str, lines: list[str]) -> str | bytes:
    """The bytes of one output file from the JSON-lines annotation records."""
    if fmt == "jsonl":
        return "".join(line + "\n" for line in lines)
    records = [json.loads(line) for line in lines]
    if fmt == "conllu":
        return "".join(record_to_conllu(r) for r in records)
    vocab = spacy.blank("grc").vocab
    docbin = DocBin(store_user_data=True)
    for record in records:
        docbin.add(record_to_doc(record, vocab))
    return docbin.to_bytes()
