"""Where the shipped artifacts live: ``assets/`` in a checkout, or the copy installed
with the package (``share/stoicheia_spacy`` under the environment prefix)."""

from __future__ import annotations

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
