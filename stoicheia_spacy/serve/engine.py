"""The server's one pipeline: loaded once per server, run one request at a time.

:class:`Engine` turns a pasted Leiden text (:meth:`Engine.analyse_text`) or an uploaded
EpiDoc file (:meth:`Engine.analyse_epidoc`) into an :class:`Analysis`: the Doc, the
provenance answer and the downloads (CoNLL-U, JSON and EpiDoc), kept in a small cache so
that the page's download links can fetch them. Bad input raises
:class:`~stoicheia_spacy.errors.InvalidInputError` (the app answers it with a 4xx page).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import ConfigError, InvalidInputError, ParallelsIndexError, StoicheiaError
from ..records import plain

#: Longest text the page accepts (characters); longer texts are refused with 413.
MAX_TEXT = 20_000
#: Largest EpiDoc upload (bytes).
MAX_UPLOAD = 5_000_000
#: How many analyses keep their downloads for the page's links.
KEEP = 32
#: Attested parallels the page lists per candidate (when the parallels index is installed).
PARALLELS = 3
#: Similar passages of the corpus the page lists for the whole text (the parallels panel).
PASSAGES = 5


class TooLargeError(InvalidInputError):
    """The text or the file is over the page's bound."""


def load_serving_pipeline(model: str | None = None) -> Language:
    """The pipeline the page runs.

    ``model`` names a pipeline (an installed package or a saved directory, ``spacy.load``) or a
    backbone checkpoint (``embedded:NAME``, a hub id or a folder with ``model.safetensors``,
    built with the components listed beside it); without it, the installed default package,
    else the embedded default model. A checkpoint without components gets a restorer and an
    accentuator.
    """
    from ..assembly import DEFAULT_PACKAGE, DEFAULT_SOURCE, build_pipeline, extend, load_pipeline

    if model is None:
        try:
            return load_pipeline(DEFAULT_PACKAGE)
        except OSError:
            model = DEFAULT_SOURCE
    folder = Path(model)
    # a model folder (weights at its root, assembled from its config.cfg when it ships one), not a saved pipeline
    if model.startswith("embedded:") or (folder / "model.safetensors").is_file():
        nlp = build_pipeline(model)
        extend(nlp, {"components": {name: {"factory": name} for name in ("stoicheia_restorer", "stoicheia_accentuator")
                                    if name not in nlp.pipe_names}})
        return nlp
    try:
        return load_pipeline(model)
    except OSError as exc:
        raise ConfigError(f"cannot load the pipeline {model!r}: not an installed package, a pipeline "
                          "folder (config.cfg) or a checkpoint folder (model.safetensors)") from exc


@dataclass
class Download:
    """One file the page links to."""

    data: bytes
    filename: str
    media_type: str


@dataclass
class Analysis:
    """What the page shows for one input."""

    source: str
    doc: Doc
    which: Any = None
    epidoc: Any = None
    name: str = "text"
    token: str = ""
    notes: list[str] = field(default_factory=list)
    downloads: dict[str, Download] = field(default_factory=dict)


class Engine:
    """One pipeline per server, loaded on first use (or given), guarded by a lock."""

    def __init__(self, model: str | None = None, *, nlp: Language | None = None,
                 loader: Callable[[str | None], Language] = load_serving_pipeline) -> None:
        self.model = model
        self._nlp = nlp
        self._loader = loader
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, dict[str, Download]] = OrderedDict()

    @property
    def nlp(self) -> Language:
        """The pipeline (loaded at the first call)."""
        with self._lock:
            return self._load()

    def _load(self) -> Language:
        if self._nlp is None:
            self._nlp = with_parallels(self._loader(self.model))
        return self._nlp

    # ------------------------------------------------------------------ inputs
    def analyse_text(self, text: str) -> Analysis:
        """Run the pipeline on pasted Leiden text."""
        text = check_text(text)
        with self._lock:
            doc = self._run(text)
            analysis = Analysis(source=text, doc=doc, which=_which(text))
            self._downloads(analysis)
        return analysis

    def analyse_epidoc(self, data: bytes, filename: str = "upload.xml") -> Analysis:
        """Read an uploaded EpiDoc file, restore the lost gaps of its edition, and write it back restored."""
        from ..leiden.epidoc import read_epidoc, write_epidoc
        from ..textcheck import validate_text

        if not data.strip():
            raise InvalidInputError(f"{filename} is empty")
        if len(data) > MAX_UPLOAD:
            raise TooLargeError(f"{filename} has {len(data):,} bytes; the page reads files up to {MAX_UPLOAD:,}")
        edition = read_epidoc(data)  # EpiDocError (a StoicheiaError) for bad or hostile XML
        if not edition.text.strip():
            raise InvalidInputError(f"{filename}: {edition.message or 'the edition has no text'}")
        validate_text(edition.text)
        if len(edition.text) > MAX_TEXT:
            raise TooLargeError(f"the edition of {filename} has {len(edition.text):,} characters; "
                                f"the page reads up to {MAX_TEXT:,}")
        stem = safe_stem(filename)
        with self._lock:
            # offsets must stay those of edition.text (write_epidoc matches the gaps by them)
            doc = self._run(edition.text, only=list(edition.restorable))
            analysis = Analysis(source=edition.text, doc=doc, which=_which(edition.text), epidoc=edition, name=stem)
            if edition.message:
                analysis.notes.append(f"{filename}: {edition.message}")
            restored = write_epidoc(data, doc._.restorations or [])
            analysis.downloads["epidoc"] = Download(restored, f"{stem}.restored.xml", "application/tei+xml")
            self._downloads(analysis)
        return analysis

    def download(self, token: str, kind: str) -> Download | None:
        """A download of a kept analysis, or None when it is unknown (or no longer kept)."""
        with self._lock:
            kept = self._kept.get(token)
            return None if kept is None else kept.get(kind)

    # ------------------------------------------------------------------ internals
    def _run(self, text: str, only: list[int] | None = None) -> Doc:
        nlp = self._load()
        cfg = {"stoicheia_restorer": {"restore_only": only}} if only is not None and "stoicheia_restorer" in nlp.pipe_names else {}
        doc = nlp(text, component_cfg=cfg)
        data = getattr(doc._, "stoicheia", None) if doc.has_extension("stoicheia") else None
        if data is not None and data.markup_error:
            raise InvalidInputError(f"the Leiden markup does not parse: {data.markup_error}")
        if data is not None and not data.n_letters:
            raise InvalidInputError("the text has no Greek letters")
        return doc

    def _downloads(self, analysis: Analysis) -> None:
        from ..morph.conllu import to_conllu

        doc, stem = analysis.doc, analysis.name
        analysis.downloads["conllu"] = Download(to_conllu(doc, stem).encode("utf-8"), f"{stem}.conllu",
                                                "text/plain; charset=utf-8")
        payload = json.dumps(as_json(analysis), ensure_ascii=False, indent=1).encode("utf-8")
        analysis.downloads["json"] = Download(payload, f"{stem}.json", "application/json")
        if "epidoc" not in analysis.downloads:
            epidoc = leiden_epidoc(analysis)
            if epidoc is not None:
                analysis.downloads["epidoc"] = Download(epidoc, f"{stem}.xml", "application/tei+xml")
        analysis.token = secrets.token_urlsafe(12)
        self._kept[analysis.token] = analysis.downloads
        while len(self._kept) > KEEP:
            self._kept.popitem(last=False)


def with_parallels(nlp: Language, top: int = PARALLELS) -> Language:
    """``nlp`` with attested parallels, when the parallels index is installed: its restorer's
    parallels service lists ``top`` parallels per candidate (when configured and off), and the
    opt-in ``stoicheia_parallels`` pipe adds the corpus passages most similar to the whole text
    (``doc._.parallels``, the page's panel). Without the index ``nlp`` is returned unchanged."""
    from ..accent.lexasset import find_parallels
    from ..assembly import extend

    try:
        find_parallels()
    except ParallelsIndexError:  # restoration works without parallels
        return nlp
    if "stoicheia_restorer" in nlp.pipe_names:
        restorer: Any = nlp.get_pipe("stoicheia_restorer")
        service = getattr(restorer, "parallels", None)
        if service is not None and not service.top:
            try:
                service.index()
            except ParallelsIndexError:
                return nlp
            restorer.parallels = replace(service, top=top)
    if "stoicheia_parallels" not in nlp.pipe_names:
        extend(nlp, {"components": {"stoicheia_parallels": {"factory": "stoicheia_parallels", "n": PASSAGES}}})
    return nlp


def safe_stem(filename: str) -> str:
    """The file name's stem reduced to ASCII letters, digits, ``.``, ``_`` and ``-`` (for download names)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(filename).stem).strip("._")
    return stem[:80] or "upload"


def check_text(text: str) -> str:
    """``text`` with normalised line ends, or :class:`InvalidInputError` for empty, overlong or invalid text."""
    from ..textcheck import validate_text

    validate_text(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise InvalidInputError("paste some Greek text (Leiden gaps such as [.4] or [---]) or choose an EpiDoc file")
    if len(text) > MAX_TEXT:
        raise TooLargeError(f"the text has {len(text):,} characters; the page reads up to {MAX_TEXT:,}")
    return text


def _which(text: str) -> Any:
    """The provenance answer, or None when it cannot be given (no index shipped, too few words)."""
    from ..provenance import which_model

    try:
        return which_model(text)
    except (StoicheiaError, OSError):
        return None


def leiden_epidoc(analysis: Analysis) -> bytes | None:
    """The pasted text as a small EpiDoc file with its gaps restored (:mod:`.tei`)."""
    from ..leiden.epidoc import read_epidoc, write_epidoc
    from .tei import by_gap_index, leiden_to_tei

    tei = leiden_to_tei(analysis.source)
    items = by_gap_index(analysis.doc._.restorations or [])
    gaps = read_epidoc(tei).gaps
    if any(index >= len(gaps) for index in items):  # the file's gaps are not the text's: no EpiDoc download
        return None
    return write_epidoc(tei, items)


def as_json(analysis: Analysis) -> dict[str, Any]:
    """The page's results as one JSON object (the JSON download)."""
    doc = analysis.doc
    out: dict[str, Any] = {"text": doc.text, "restorations": [r.to_dict() for r in doc._.restorations or []]}
    for key in ("restored", "accent_text"):
        if doc.has_extension(key):
            out[key] = getattr(doc._, key)
    for key in ("date", "genre", "dialect"):
        value = getattr(doc._, key) if doc.has_extension(key) else None
        out[key] = value.to_dict() if value is not None else None
    out["tokens"] = [{"text": t.text, "lemma": t.lemma_, "upos": t.pos_, "tag": t.tag_, "head": t.head.i,
                      "dep": t.dep_} for t in doc]
    if doc.has_extension("verses") and doc._.verses:
        out["verses"] = [{"text": v.text, "scansion": plain(v._.scansion), "meter": plain(v._.meter)}
                         for v in doc._.verses]
    out["which_model"] = analysis.which.to_dict() if analysis.which is not None else None
    return out
