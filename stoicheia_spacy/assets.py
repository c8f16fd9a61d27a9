"""Where the shipped artifacts live: ``assets/`` in a checkout, or the copy installed
with the package (``share/stoicheia_spacy`` under the environment prefix)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from .errors import StoicheiaError

#: Name of the embedded default model (directory under ``assets/models``).
DEFAULT_MODEL = "grc_stoicheia_doc_clean"


def assets_dirs() -> list[Path]:
    """Candidate asset roots, checkout first."""
    checkout = Path(__file__).resolve().parent.parent / "assets"
    installed = Path(sys.prefix) / "share" / "stoicheia_spacy"
    return [p for p in (checkout, installed) if p.is_dir()]


def asset_path(*parts: str) -> Path:
    """The first existing ``assets/<parts>``; raises naming every place looked at."""
    for root in assets_dirs():
        candidate = root.joinpath(*parts)
        if candidate.exists():
            return candidate
    looked = ", ".join(str(r) for r in assets_dirs()) or "(no asset folder found)"
    raise StoicheiaError(f"asset {'/'.join(parts)!r} not found in {looked}")


def default_model_dir() -> Path:
    """Directory of the embedded default backbone (config.json + model.safetensors)."""
    return asset_path("models", DEFAULT_MODEL)


def cache_folder() -> Path:
    """Where data derived from installed files is kept between runs (memory-mappable copies):
    ``$STOICHEIA_CACHE``, else ``$XDG_CACHE_HOME/stoicheia``, else ``~/.cache/stoicheia``."""
    explicit = os.environ.get("STOICHEIA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stoicheia"


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file, read once per version of it: the digest is kept in
    :func:`cache_folder` under the file's path, size, inode and modification time (so an
    unchanged 100 MB data file is not read again at every start; a changed one is)."""
    path = Path(path).resolve()
    stat = path.stat()
    stamp = [stat.st_size, stat.st_ino, stat.st_mtime_ns]
    record = cache_folder() / "sha256" / (hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:32] + ".json")
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
        if kept.get("stat") == stamp and kept.get("path") == str(path):
            return str(kept["sha256"])
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        tmp = record.with_name(f".{record.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"path": str(path), "stat": stamp, "sha256": value}), encoding="utf-8")
        os.replace(tmp, record)
    except OSError:  # a read-only cache: hash again next time
        pass
    return value
