"""Weights that travel in parts: ``python -m pretrain split`` / ``python -m pretrain reassemble``.

``split SRC --out DIR`` cuts every file of ``SRC`` (a file or a directory, e.g. an exported
model: ``config.json`` + ``model.safetensors``) larger than ``--part-mib`` (15) into
``NAME.partNN`` pieces and writes ``DIR/parts.json`` with each file's sha256, size and
pieces; small files are embedded in the manifest (so a model comes back as few files).
It refuses to write more than ``--max-files`` files (8, the limit of one transfer).
``reassemble --parts DIR --install DEST`` concatenates, checks every sha256 and installs
the files into ``DEST`` (each written to a temporary sibling folder first, then renamed over
its target, so other files of DEST such as task heads stay), with ``model.safetensors.sha256``
beside the weights, as the shipped models have.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stoicheia_spacy.errors import CheckpointError, StoicheiaError

MANIFEST = "parts.json"
FORMAT = "stoicheia-parts/1"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_files(src: str | Path, out: str | Path, *, part_mib: float = 15.0, max_files: int = 8,
                prefix: str = "") -> dict[str, Any]:
    """Split ``src`` (file or directory) into ``out``; returns the manifest."""
    src, out = Path(src), Path(out)
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
    if not files:
        raise CheckpointError(f"nothing to split under {src}")
    part_bytes = int(part_mib * 2**20)
    out.mkdir(parents=True, exist_ok=True)
    entries: dict[str, Any] = {}
    written = 1  # the manifest
    for path in files:
        rel = path.name if src.is_file() else str(path.relative_to(src))
        data = path.read_bytes()
        entry: dict[str, Any] = {"bytes": len(data), "sha256": _sha(data)}
        if len(data) <= 64 * 1024:
            entry["inline"] = base64.b64encode(data).decode("ascii")
        else:
            pieces: list[dict[str, Any]] = []
            for i in range(0, len(data), part_bytes):
                chunk = data[i : i + part_bytes]
                name = f"{prefix}{rel.replace('/', '__')}.part{i // part_bytes:02d}"
                pieces.append({"file": name, "bytes": len(chunk), "sha256": _sha(chunk)})
            written += len(pieces)
            if written > max_files:
                raise CheckpointError(f"{src} needs more than {max_files} files of {part_mib} MiB")
            for piece, i in zip(pieces, range(0, len(data), part_bytes), strict=True):
                (out / str(piece["file"])).write_bytes(data[i : i + part_bytes])
            entry["parts"] = pieces
        entries[rel] = entry
    manifest = {"format": FORMAT, "files": entries}
    (out / f"{prefix}{MANIFEST}").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def reassemble(parts: str | Path, dest: str | Path, *, prefix: str = "") -> Path:
    """Rebuild the files listed in ``parts/parts.json`` into ``dest`` (sha256-checked)."""
    parts, dest = Path(parts), Path(dest)
    path = parts / f"{prefix}{MANIFEST}"
    if not path.is_file():
        raise CheckpointError(f"no {path}")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise CheckpointError(f"{path}: unknown format {manifest.get('format')!r}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for rel, entry in manifest["files"].items():
            if "inline" in entry:
                data = base64.b64decode(entry["inline"])
            else:
                chunks = []
                for piece in entry["parts"]:
                    f = parts / piece["file"]
                    if not f.is_file():
                        raise CheckpointError(f"missing part {f}")
                    chunk = f.read_bytes()
                    if _sha(chunk) != piece["sha256"]:
                        raise CheckpointError(f"{f}: sha256 mismatch (a damaged transfer?)")
                    chunks.append(chunk)
                data = b"".join(chunks)
            if len(data) != entry["bytes"] or _sha(data) != entry["sha256"]:
                raise CheckpointError(f"{rel}: reassembled file does not match its sha256")
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            if rel.endswith(".safetensors"):
                (tmp / f"{rel}.sha256").write_text(f"{entry['sha256']}  {Path(rel).name}\n", encoding="utf-8")
        dest.mkdir(parents=True, exist_ok=True)
        for f in sorted(x for x in tmp.rglob("*") if x.is_file()):
            target = dest / f.relative_to(tmp)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(f, target)  # file by file: other files of DEST (task heads) stay
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def main_split(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain split", description="cut weights into transferable parts")
    p.add_argument("src", help="a file or a directory (e.g. an exported model)")
    p.add_argument("--out", required=True)
    p.add_argument("--part-mib", type=float, default=15.0)
    p.add_argument("--max-files", type=int, default=8)
    args = p.parse_args(list(argv))
    try:
        manifest = split_files(args.src, args.out, part_mib=args.part_mib, max_files=args.max_files)
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    print(json.dumps({k: {"bytes": v["bytes"], "parts": len(v.get("parts", []))} for k, v in manifest["files"].items()}))
    return 0


def main_reassemble(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain reassemble", description="verify and install parts")
    p.add_argument("--parts", required=True, help="directory holding parts.json and the pieces")
    p.add_argument("--install", required=True, help="destination directory, e.g. assets/models/NAME")
    p.add_argument("--prefix", default="", help="manifest prefix (chain steps write best.parts.json, resume.parts.json)")
    args = p.parse_args(list(argv))
    try:
        print(reassemble(args.parts, args.install, prefix=args.prefix))
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    return 0
