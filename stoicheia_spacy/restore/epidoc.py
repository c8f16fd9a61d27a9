"""Restore the lost gaps of an EpiDoc TEI file in place: read its edition as Leiden text
(:func:`~stoicheia_spacy.leiden.epidoc.read_epidoc_bytes`), restore with the pipeline's encoder and
``stoicheia_restorer``, write the restorations back (:func:`~stoicheia_spacy.leiden.epidoc.write_epidoc`).
The TEI header sets ``doc._.domain`` (:func:`~.domain.header_domain`), which the restorer's ``domain = "auto"``
reads to pick its combination weights."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spacy.language import Language

from ..errors import ConfigError, EpiDocError
from ..leiden.epidoc import (
    DEFAULT_MAX_BYTES,
    Regularised,
    Supplied,
    read_epidoc_bytes,
    write_epidoc,
)
from .domain import header_domain


def restore_epidoc(nlp: Language, source: bytes | str | Path, *, supplied: Supplied = "text",
                   regularised: Regularised = "reg", max_bytes: int = DEFAULT_MAX_BYTES,
                   reasons: Iterable[str] = ("lost",), top: int | None = None,
                   settings: dict[str, Any] | None = None) -> bytes:
    """Read ``source``, restore its gaps (those of ``reasons``) with ``nlp``'s encoder and
    ``stoicheia_restorer``, and write them back (:func:`write_epidoc`). A file that passes
    through (another language, no edition, nothing to restore) comes back unchanged.
    ``settings``: the restorer's settings for this file only (its ``component_cfg``)."""
    raw, view = read_epidoc_bytes(source, supplied=supplied, regularised=regularised, max_bytes=max_bytes)
    wanted = set(reasons)
    only = [i for i, gap in enumerate(view.gaps) if gap.reason in wanted and gap.unit == "character"]
    if not only or not view.text.strip():
        return raw
    if "stoicheia_restorer" not in nlp.pipe_names:
        raise ConfigError(f"restore_epidoc needs a stoicheia_restorer pipe (pipeline: {nlp.pipe_names})")
    restorer: Any = nlp.get_pipe("stoicheia_restorer")
    if restorer.cfg.get("notation", "leiden") != "leiden":
        raise ConfigError("restore_epidoc writes Leiden text: the restorer's notation must be 'leiden'")
    keep = {restorer.reference.upstream_name, "stoicheia_restorer"}
    call = {**(settings or {}), "strip_restorations": False, "restore_only": only}  # the file keeps its markup
    source_doc = nlp.make_doc(view.text)
    source_doc._.domain = header_domain(raw)  # the restorer's automatic domain (None: read from the text)
    doc = next(iter(nlp.pipe([source_doc], disable=[n for n in nlp.pipe_names if n not in keep],
                             component_cfg={"stoicheia_restorer": call})))
    data = doc._.stoicheia
    if data is not None and data.markup_error is not None:
        raise EpiDocError(f"the Leiden text read from the file did not parse: {data.markup_error}")
    return write_epidoc(source, doc._.restorations or [], supplied=supplied, regularised=regularised,
                        max_bytes=max(max_bytes, len(raw)), reasons=wanted, top=top)
