"""Asset fetching: copy from ``$STOICHEIA_ASSET_MIRROR`` (verifying sha256) or download.

Verbatim assets download from their raw GitHub URL and are checked against the pinned sha256.
Derived assets (JSONL/TSV conversions of a repository at a pinned commit) are only byte-exact
from the mirror; without one, fetching them raises a CorpusError naming the upstream archive.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from stoicheia_spacy.errors import AssetChecksumError, CorpusError

from .sources import SOURCES, get_source

MIRROR_ENV = "STOICHEIA_ASSET_MIRROR"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_asset(name: str, dest_dir: Path | str, mirror: Path | str | None = None) -> Path:
    """Place source ``name`` at ``dest_dir/<path>`` and return that path (skips a good copy)."""
    src = get_source(name)
    dest = Path(dest_dir) / src.path
    if dest.is_file() and sha256_of(dest) == src.sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV)
    if mirror:
        origin = Path(mirror) / src.path
        if not origin.is_file():
            raise CorpusError(f"{name}: {origin} is not in the mirror {mirror}")
        shutil.copyfile(origin, tmp)
    elif src.derived:
        raise CorpusError(
            f"{name}: {src.path} is a conversion of {src.url} (path {src.upstream_path}); set "
            f"{MIRROR_ENV} to a copy of the open-data mirror to fetch the exact file")
    else:
        try:
            with urllib.request.urlopen(src.url, timeout=60) as resp, tmp.open("wb") as out:
                shutil.copyfileobj(resp, out)
        except OSError as exc:
            raise CorpusError(f"{name}: download of {src.url} failed: {exc}") from exc
    digest = sha256_of(tmp)
    if digest != src.sha256:
        tmp.unlink()
        raise AssetChecksumError(f"{name}: sha256 {digest} != pinned {src.sha256}")
    tmp.replace(dest)
    return dest


def fetch_all(dest_dir: Path | str, names: Iterable[str] | None = None,
              mirror: Path | str | None = None) -> list[Path]:
    """Fetch several sources (all registered ones by default)."""
    return [fetch_asset(n, dest_dir, mirror) for n in (names or SOURCES)]
