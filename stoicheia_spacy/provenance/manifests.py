"""Fold manifests: which works each fold held out, in our JSON format or the published one.

* ours: ``projects/corpus`` ``corpus/manifests/fold_<k>.json`` (``test_works``, ``dev_works``);
* published: per fold a gzipped TSV of its test works, the work key in the first column (a
  header row starting with ``work`` is skipped), the fold number in the file name
  (``fold_3...tsv.gz``, ``fold-3...``). :func:`write_published` writes ours in that format.

Fold ``k`` tests on zone ``k`` and develops on zone ``k + 1`` (mod 10), so with only test
lists the dev works of fold ``k`` are the test works of fold ``k + 1``.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from ..errors import CorpusError

N_FOLDS = 10
_FOLD = re.compile(r"fold[_-]?(\d+)", re.IGNORECASE)


def read_manifests(directory: Path) -> dict[int, dict[str, set[str]]]:
    """``{fold: {"test": works, "dev": works}}`` from either format in ``directory``."""
    if not directory.is_dir():
        raise CorpusError(f"manifest folder {directory} does not exist")
    folds: dict[int, dict[str, set[str]]] = {}
    for path in sorted(directory.glob("fold*.json")):
        match = _FOLD.search(path.name)
        if match:
            data = json.loads(path.read_text(encoding="utf-8"))
            folds[int(match.group(1))] = {"test": set(data.get("test_works", [])),
                                          "dev": set(data.get("dev_works", []))}
    if not folds:
        for path in sorted(directory.glob("*.tsv.gz")):
            match = _FOLD.search(path.name)
            if match:
                folds[int(match.group(1))] = {"test": _tsv_works(path), "dev": set()}
        for k in folds:
            folds[k]["dev"] = set(folds.get((k + 1) % N_FOLDS, {}).get("test", set()))
    if not folds:
        raise CorpusError(f"no fold manifests (fold_<k>.json or fold_<k>*.tsv.gz) in {directory}")
    return folds


def _tsv_works(path: Path) -> set[str]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CorpusError(f"cannot read manifest {path}: {exc}") from exc
    if rows and rows[0][0].strip().lower() == "work":
        rows = rows[1:]
    return {row[0].strip() for row in rows if row and row[0].strip()}


def never_read(folds: dict[int, dict[str, set[str]]], work: str) -> dict[int, str]:
    """Folds that held ``work`` out, with the split (``test`` or ``dev``) that held it."""
    out: dict[int, str] = {}
    for k in sorted(folds):
        if work in folds[k]["test"]:
            out[k] = "test"
        elif work in folds[k]["dev"]:
            out[k] = "dev"
    return out


def write_published(manifests: Path, out_dir: Path) -> list[Path]:
    """Write our JSON manifests as per-fold gzipped TSVs of test works (the published format)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for k, splits in sorted(read_manifests(manifests).items()):
        path = out_dir / f"fold_{k}_test_works.tsv.gz"
        text = "work\n" + "".join(f"{w}\n" for w in sorted(splits["test"]))
        path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))  # reproducible bytes
        written.append(path)
    return written
