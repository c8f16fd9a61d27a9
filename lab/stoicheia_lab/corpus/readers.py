"""Streaming readers for the mirrored sources.

Every reader yields plain dicts ``{"id", "text", "source", "work", "tier", "meta"}``:
``id`` is ``"<source>:<document id>"``, ``work`` the canonical work key (``tlgAAAA.tlgWWW``
where a TLG/CTS identifier exists, ``tess:author.work`` for Tesserae file names, ``doc:...``
for documentary records), ``tier`` the provisional ``"gold"`` (the ``tiers`` step may demote a
record to ``"silver"``) and ``meta`` per-source metadata (licence, author, title, dates).
Files are streamed (lzma/tarfile stream mode); no source is loaded whole into memory.
"""

from __future__ import annotations

import csv
import json
import lzma
import re
import sys
import tarfile
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from stoicheia_spacy.errors import CorpusError
from stoicheia_spacy.textnorm import fix_leading_combining, fix_tesserae_line

from .sources import LITERARY, SOURCES, get_source

Record = dict[str, Any]

_CTS = re.compile(r"urn:cts:\w+:([a-z]+\d+[a-z]?)\.([a-z]+\d+[a-z]?)")
_TESS_CITE = re.compile(r"^<[^>]*>\s?")
_TESS_PART = re.compile(r"\.part\.\d+.*$")
_DDBDP_ANNOT = re.compile(r"\|[^|]*\|")
_DDBDP_ORIG_JUNK = re.compile(r"[\[\]⟦⟧<>{}()*\\/@^\u0323?-]|\^?inline\^?")


def _open_source(mirror_dir: Path | str, name: str) -> Path:
    path = Path(mirror_dir) / get_source(name).path
    if not path.is_file():
        raise CorpusError(f"source {name!r} not found at {path} (run `python -m stoicheia_lab.corpus fetch`)")
    return path


def _iter_xz_lines(path: Path) -> Iterator[str]:
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        yield from fh


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def cts_work(urn: str) -> str | None:
    """``tlg0085.tlg005`` from a CTS URN such as ``urn:cts:greekLit:tlg0085.tlg005.perseus-grc2``."""
    m = _CTS.search(urn or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def tesserae_work(filename: str) -> str:
    """Work key of a Tesserae file name: ``antiphon.speeches.part.1.x.tess`` -> ``tess:antiphon.speeches``."""
    stem = Path(filename).name.removesuffix(".tess")
    return "tess:" + _TESS_PART.sub("", stem)


def read_perseus(path: Path) -> Iterator[Record]:
    """Perseus (cltk JSON): one record per work, segments joined by newlines."""
    for line in _iter_xz_lines(path):
        doc = json.loads(line)
        urn = doc.get("urn", "")
        text = "\n".join(_nfc(s["text"]).strip() for s in doc.get("segments", []) if s.get("text"))
        yield {
            "id": f"perseus:{urn or doc['file']}", "text": text, "source": "perseus",
            "work": cts_work(urn) or f"perseus:{doc['file']}", "tier": "gold",
            "meta": {"author": doc.get("author"), "title": doc.get("title"), "urn": urn,
                     "license": SOURCES["perseus"].license},
        }


def read_first1k(path: Path) -> Iterator[Record]:
    """First1KGreek/OPP (Celano's lemmatized XML, re-joined): sentences joined by spaces."""
    for line in _iter_xz_lines(path):
        doc = json.loads(line)
        urn = doc.get("urn", "")
        text = " ".join(_nfc(s).strip() for s in doc.get("sentences", []) if s)
        yield {
            "id": f"first1k:{urn or doc['file']}", "text": text, "source": "first1k",
            "work": cts_work(urn) or f"first1k:{doc['file']}", "tier": "gold",
            "meta": {"author": doc.get("author"), "title": doc.get("title"), "urn": urn,
                     "license": SOURCES["first1k"].license},
        }


def read_glaux(path: Path) -> Iterator[Record]:
    """GLAUx: one record per text; the per-text SOURCE_LICENSE and dates are kept in ``meta``."""
    for line in _iter_xz_lines(path):
        doc = json.loads(line)
        tlg = doc.get("tlg") or ""
        meta = dict(doc.get("metadata") or {})
        m = re.fullmatch(r"(\d{4})-(\d{3})", tlg)
        work = f"tlg{m.group(1)}.tlg{m.group(2)}" if m else f"glaux:{doc.get('glaux_file', tlg)}"
        text = " ".join(_nfc(s).strip() for s in doc.get("sentences", []) if s)
        yield {
            "id": f"glaux:{tlg or doc.get('glaux_file')}", "text": text, "source": "glaux",
            "work": work, "tier": "gold",
            "meta": {"author": meta.get("AUTHOR_STANDARD"), "title": meta.get("TITLE_STANDARD"),
                     "license": meta.get("SOURCE_LICENSE") or "NA", "genre": meta.get("GENRE_STANDARD"),
                     "start_date": meta.get("STARTDATE"), "end_date": meta.get("ENDDATE"),
                     "dialect": meta.get("DIALECT"), "upstream": meta.get("SOURCE")},
        }


def read_tesserae(path: Path) -> Iterator[Record]:
    """Tesserae ``.tess`` files (``<cite> text`` lines, not NFC): one record per file.

    Lines are canonicalised with ``fix_tesserae_line`` (combining marks written before a capital
    are moved onto it, beta-code ``:`` becomes the ano teleia, NFC).
    """
    with tarfile.open(path, mode="r|xz") as tar:
        for member in tar:
            if not (member.isfile() and member.name.endswith(".tess")):
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            raw = fh.read().decode("utf-8")  # one file (stream-mode members are not seekable)
            lines = [fix_tesserae_line(_TESS_CITE.sub("", ln).strip()) for ln in raw.splitlines()]
            stem = Path(member.name).name.removesuffix(".tess")
            yield {
                "id": f"tesserae:{stem}", "text": "\n".join(ln for ln in lines if ln),
                "source": "tesserae", "work": tesserae_work(member.name), "tier": "gold",
                "meta": {"file": member.name, "license": SOURCES["tesserae"].license},
            }


def clean_ddbdp_token(token: str, layer: str = "regularized") -> str:
    """Surface text of one DDbDP token: ``|...|`` annotations dropped; for the original layer
    also editorial brackets, under-dots, line-break hyphens and inline markup."""
    token = _DDBDP_ANNOT.sub("", token)
    if layer == "original":
        token = re.sub(r"⟦[^⟧]*⟧", "", token)
        token = _DDBDP_ORIG_JUNK.sub("", unicodedata.normalize("NFD", token))
    return _nfc(token)


def _strip_editorial(form: str) -> str:
    """A word form without editorial brackets and under-dots (``Ἀμ[μ]ωνίῳ`` -> ``Ἀμμωνίῳ``)."""
    return _nfc(re.sub("[\\[\\]⟦⟧<>{}()\u0323]", "", unicodedata.normalize("NFD", form)))


def read_ddbdp(path: Path, layer: str = "regularized") -> Iterator[Record]:
    """DDbDP documentary papyri (duke-nlp token TSV), streamed: one record per document.

    Text is rebuilt from the REGULARIZED (default) or cleaned ORIGINAL column; punctuation
    tokens attach to the previous word, sentences are separated by spaces.
    """
    if layer not in ("regularized", "original"):
        raise CorpusError(f"layer must be 'regularized' or 'original', not {layer!r}")
    col = 4 if layer == "regularized" else 3
    doc_id: str | None = None
    tm: str | None = None
    parts: list[str] = []

    def flush() -> Record | None:
        if doc_id is None:
            return None
        text = re.sub(r"\s+([.,·;:])", r"\1", " ".join(p for p in parts if p)).strip()
        return {"id": f"ddbdp:{doc_id}", "text": text, "source": "ddbdp",
                "work": f"doc:tm{tm}" if tm else f"doc:{doc_id}", "tier": "gold",
                "meta": {"tm": tm, "license": SOURCES["ddbdp"].license}}

    for line in _iter_xz_lines(path):
        if line.startswith("# newdoc"):
            rec = flush()
            if rec is not None:
                yield rec
            m = re.search(r"file = (\S+)", line)
            t = re.search(r"TM = (\S+)", line)
            doc_id = m.group(1) if m else f"doc{id(line)}"
            tm = t.group(1) if t else None
            parts = []
        elif line and line[0] != "#" and line.strip():
            cols = line.rstrip("\n").split("\t")
            if len(cols) > col:
                parts.append(clean_ddbdp_token(cols[col], layer))
    rec = flush()
    if rec is not None:
        yield rec


def read_padoc(path: Path, name: str = "padoc") -> Iterator[Record]:
    """PaDoc CSV (``padoc389`` or ``in_the_wild``): the diacritic ``text_raw`` column per papyrus."""
    csv.field_size_limit(sys.maxsize)
    with lzma.open(path, "rt", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            tm = row.get("tm") or row.get("TM_Number") or ""
            text = " ".join(_nfc(row.get("text_raw") or row.get("text") or "").split())
            yield {"id": f"{name}:tm{tm}", "text": text, "source": name, "work": f"doc:tm{tm}",
                   "tier": "gold", "meta": {"tm": tm, "license": SOURCES[name].license}}


def read_papygreek(path: Path, layer: str = "reg") -> Iterator[Record]:
    """PapyGreek treebanks (AGDT-style XML, ``orig``/``reg`` layers): one record per document."""
    attr = "form_reg" if layer == "reg" else "orig_form"
    with tarfile.open(path, mode="r|xz") as tar:
        for member in tar:
            if not (member.isfile() and member.name.endswith(".xml")):
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            root = ET.parse(fh).getroot()
            meta = root.find("document_meta")
            tm = meta.get("tm_id", "") if meta is not None else ""
            sentences = []
            for sent in root.iter("sentence"):
                forms = [_strip_editorial(w.get(attr) or w.get("form") or "") for w in sent.iter("word")]
                sentences.append(" ".join(f for f in forms if f))
            text = re.sub(r"\s+([.,·;:])", r"\1", " ".join(sentences))
            stem = Path(member.name).name.removesuffix(".xml")
            yield {"id": f"papygreek:{stem}", "text": fix_leading_combining(text),
                   "source": "papygreek", "work": f"doc:tm{tm}" if tm else f"doc:{stem}",
                   "tier": "gold", "meta": {"tm": tm, "license": SOURCES["papygreek"].license}}


_READERS = {
    "perseus": read_perseus, "first1k": read_first1k, "glaux": read_glaux,
    "tesserae": read_tesserae, "ddbdp": read_ddbdp, "papygreek": read_papygreek,
    "padoc": lambda p: read_padoc(p, "padoc"), "padoc_wild": lambda p: read_padoc(p, "padoc_wild"),
}


def iter_records(source_name: str, mirror_dir: Path | str, limit: int | None = None,
                 *, with_meta: bool = False) -> Iterator[Record]:
    """Records ``{id, text, source, work, tier}`` of one mirrored source, streamed.

    ``source_name`` is a key of ``SOURCES`` with a reader (literary: perseus, tesserae, first1k,
    glaux; documentary: ddbdp, padoc, padoc_wild, papygreek); ``mirror_dir`` the asset folder
    laid out like the open-data mirror; ``limit`` stops after that many records. Records with no
    Greek text are skipped. ``with_meta=True`` keeps the per-source ``meta`` dict (licences).
    """
    source = get_source(source_name)
    reader = _READERS.get(source.name)
    if reader is None:
        raise CorpusError(f"source {source_name!r} has no record reader ({source.kind})")
    if limit is not None and limit < 0:
        raise CorpusError(f"limit must be >= 0, not {limit}")
    records = (r for r in reader(_open_source(mirror_dir, source.name)) if r["text"].strip())
    for rec in islice(records, limit):
        if not with_meta:
            rec.pop("meta", None)
        yield rec


def iter_literary(mirror_dir: Path | str, limit: int | None = None, *, with_meta: bool = False) -> Iterator[Record]:
    """Records of every literary source in turn (``limit`` applies per source)."""
    for name in LITERARY:
        yield from iter_records(name, mirror_dir, limit, with_meta=with_meta)
