"""Streaming readers for AGDT/ALDT XML (AGDT 2.1, AGDT 1.6 Homer, Gorman, Pedalion) and
UD CoNLL-U.

Readers return :class:`RawSentence` objects exactly as annotated (raw tags, relations,
word ids and heads, artificial nodes included); :mod:`.harmonise` turns them into
clean trees. Sources are read from a ``.tar``/``.tar.xz`` archive (members streamed with
:mod:`tarfile`, never extracted) or from a directory holding the extracted files.
XML is parsed with :func:`xml.etree.ElementTree.iterparse`, one sentence at a time.
"""

from __future__ import annotations

import fnmatch
import lzma
import re
import tarfile
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from stoicheia_spacy.errors import TreebankError


@dataclass
class RawSentence:
    """One annotated sentence as read. ``ids``/``heads`` are the file's word ids (heads
    ``0`` = root, ``-1`` = missing or not an integer); ``artificial`` marks elliptic nodes
    (``artificial="elliptic"`` or ``insertion_id``)."""

    source: str
    doc_id: str
    sent_id: str
    forms: list[str] = field(default_factory=list)
    lemmas: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    artificial: list[bool] = field(default_factory=list)
    work_id: str = ""

    def __len__(self) -> int:
        return len(self.forms)


@dataclass(frozen=True)
class SourceSpec:
    """Where a treebank lives in the asset mirror and which members are its documents."""

    name: str
    archive: str
    pattern: str
    version: str
    layer: str = ""  # a PapyGreek annotation layer ("reg" or "orig"); "" for plain AGDT XML


#: The four training treebanks, relative to the asset mirror (``STOICHEIA_ASSET_MIRROR``).
SOURCES: dict[str, SourceSpec] = {
    "agdt": SourceSpec("agdt", "agdt/AGDT_v2.1_Greek_texts.tar.xz", "v2.1/Greek/texts/*.xml", "2.1"),
    "homer": SourceSpec(
        "homer", "agdt/AGDT_v1.6_Homer_Iliad_Odyssey_by_book.tar.xz", "v1.6/greek/data/*.xml", "1.6"
    ),
    "gorman": SourceSpec("gorman", "treebanks/gorman_trees_xml.tar.xz", "xml versions/*.xml", "gorman"),
    "pedalion": SourceSpec(
        "pedalion", "treebanks/pedalion_trees_xml.tar.xz", "public/xml/*.xml", "pedalion"
    ),
}


#: Treebanks held out of every training fold: scored only, as data no recipe was tuned on.
#: PapyGreek: documentary papyri (Roman and Byzantine Egypt), its regularised (``reg``) layer.
HELD_OUT: dict[str, SourceSpec] = {
    "papygreek": SourceSpec(
        "papygreek", "treebanks/papygreek_treebanks_xml.tar.xz", "documentary/*/*.xml", "papygreek", layer="reg"
    ),
}

#: The word attributes of each annotation layer: form, lemma, postag, relation, head.
_LAYER_ATTRS: dict[str, tuple[str, str, str, str, str]] = {
    "": ("form", "lemma", "postag", "relation", "head"),
    "reg": ("form_reg", "lemma_reg", "postag_reg", "relation_reg", "head_reg"),
    "orig": ("orig_form", "lemma_orig", "postag_orig", "relation_orig", "head_orig"),
}

_PEDALION_WORK = re.compile(r"^(\d{4})-(\d{3})$")


def _int(value: str | None) -> int:
    if value is None:
        return -1
    try:
        return int(value.strip())
    except ValueError:
        return -1


def _nfc(text: str | None) -> str:
    return unicodedata.normalize("NFC", text or "")


def _work_id(document_id: str, fallback: str) -> str:
    """``tlgNNNN.tlgNNN`` when the document id names a TLG work, else ``fallback``."""
    lowered = document_id.lower()
    numeric = _PEDALION_WORK.search(lowered)
    if numeric:  # Pedalion writes TLG author-work as "0019-001"
        return f"tlg{numeric.group(1)}.tlg{numeric.group(2)}"
    start = lowered.find("tlg")
    if start >= 0:
        parts = lowered[start:].replace(":", ".").split(".")
        if len(parts) >= 2 and parts[1].startswith("tlg"):
            return f"{parts[0]}.{parts[1]}"
    return fallback


def iter_xml_sentences(
    stream: IO[bytes] | str | Path, *, source: str, doc_id: str, layer: str = ""
) -> Iterator[RawSentence]:
    """Sentences of one AGDT-style XML file (``<sentence><word .../></sentence>``); ``layer``
    picks a PapyGreek annotation layer's attributes (``reg``: ``form_reg``, ``postag_reg``, ...)."""
    if layer not in _LAYER_ATTRS:
        raise TreebankError(f"unknown annotation layer {layer!r}; known: {sorted(_LAYER_ATTRS)}")
    form, lemma, postag, relation, head = _LAYER_ATTRS[layer]
    try:
        for _event, elem in ET.iterparse(stream, events=("end",)):
            if elem.tag != "sentence":
                continue
            sent = RawSentence(source=source, doc_id=doc_id, sent_id=elem.get("id", ""))
            sent.work_id = _work_id(elem.get("document_id") or "", doc_id)
            for word in elem.iter("word"):
                sent.forms.append(_nfc(word.get(form)))
                sent.lemmas.append(_nfc(word.get(lemma)))
                sent.tags.append(word.get(postag) or "")
                sent.relations.append((word.get(relation) or "").strip())
                sent.ids.append(_int(word.get("id")))
                sent.heads.append(_int(word.get(head)))
                sent.artificial.append(
                    word.get("artificial") is not None or word.get("insertion_id") is not None
                )
            elem.clear()
            if sent.forms:
                yield sent
    except ET.ParseError as exc:
        raise TreebankError(f"malformed XML in {doc_id}: {exc}") from exc


def document_id(member_name: str) -> str:
    """The reader's ``doc_id`` of a treebank file or archive member (folder and ``.tb.xml``
    / ``.xml`` removed); UD Perseus ``newdoc id`` values map to the same ids."""
    name = member_name.rsplit("/", 1)[-1]
    for suffix in (".tb.xml", ".xml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def list_documents(path: str | Path, pattern: str = "*.xml") -> list[str]:
    """Sorted member names (archive) or relative paths (directory) matching ``pattern``."""
    path = Path(path)
    if path.is_dir():
        return sorted(
            p.relative_to(path).as_posix()
            for p in path.rglob("*")
            if p.is_file() and fnmatch.fnmatch(p.relative_to(path).as_posix(), pattern)
        )
    if not path.exists():
        raise TreebankError(f"treebank not found: {path}")
    with tarfile.open(path, "r:*") as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile() and fnmatch.fnmatch(m.name, pattern))


def iter_treebank(
    path: str | Path,
    *,
    source: str,
    pattern: str = "*.xml",
    documents: list[str] | None = None,
    layer: str = "",
) -> Iterator[RawSentence]:
    """Sentences of every XML document under ``path`` (archive or directory) matching
    ``pattern``, in sorted document order; ``documents`` restricts to those member names;
    ``layer`` as in :func:`iter_xml_sentences`."""
    path = Path(path)
    wanted = set(documents) if documents is not None else None
    if path.is_dir():
        for rel in list_documents(path, pattern):
            if wanted is None or rel in wanted:
                yield from iter_xml_sentences(path / rel, source=source, doc_id=document_id(rel), layer=layer)
        return
    if not path.exists():
        raise TreebankError(f"treebank not found: {path}")
    with tarfile.open(path, "r:*") as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and fnmatch.fnmatch(m.name, pattern)),
            key=lambda m: m.name,
        )
        for member in members:
            if wanted is not None and member.name not in wanted:
                continue
            handle = tar.extractfile(member)
            if handle is None:  # pragma: no cover - isfile() members always have data
                continue
            with handle:
                yield from iter_xml_sentences(handle, source=source, doc_id=document_id(member.name), layer=layer)


def source_path(root: str | Path, name: str) -> Path:
    """Archive of source ``name`` under an asset mirror / assets folder ``root``; if the
    archive was extracted into a folder of the same name without ``.tar.xz``, that folder."""
    spec = SOURCES.get(name) or HELD_OUT.get(name)
    if spec is None:
        raise TreebankError(f"unknown treebank source {name!r}; known: {sorted(SOURCES | HELD_OUT)}")
    archive = Path(root) / spec.archive
    extracted = archive.with_name(archive.name.removesuffix(".tar.xz"))
    if archive.exists():
        return archive
    if extracted.is_dir():
        return extracted
    raise TreebankError(f"treebank {name!r} not found under {root} ({archive})")


def iter_source(root: str | Path, name: str, *, documents: list[str] | None = None) -> Iterator[RawSentence]:
    """Sentences of one of :data:`SOURCES` (``agdt``, ``homer``, ``gorman``, ``pedalion``) or
    :data:`HELD_OUT` (``papygreek``)."""
    spec = SOURCES.get(name) or HELD_OUT.get(name)
    if spec is None:
        raise TreebankError(f"unknown treebank source {name!r}; known: {sorted(SOURCES | HELD_OUT)}")
    yield from iter_treebank(source_path(root, name), source=name, pattern=spec.pattern, documents=documents,
                             layer=spec.layer)


def iter_conllu(path: str | Path, *, source: str = "ud") -> Iterator[RawSentence]:
    """Sentences of a CoNLL-U file (plain or ``.xz``), read with the ``conllu`` package.

    Multiword-token lines and empty nodes are skipped (the syntactic words are kept).
    ``tags`` holds XPOS (the AGDT tag in UD Perseus); :func:`iter_conllu_full` also
    returns UPOS and FEATS.
    """
    for sent, _upos, _feats in iter_conllu_full(path, source=source):
        yield sent


def iter_conllu_full(
    path: str | Path, *, source: str = "ud"
) -> Iterator[tuple[RawSentence, list[str], list[str]]]:
    """Like :func:`iter_conllu`, also returning each sentence's UPOS and FEATS strings."""
    import conllu

    path = Path(path)
    if not path.exists():
        raise TreebankError(f"CoNLL-U file not found: {path}")
    opener = lzma.open if path.suffix == ".xz" else open
    doc_id = path.name
    with opener(path, "rt", encoding="utf-8") as handle:
        for token_list in conllu.parse_incr(handle):
            meta = token_list.metadata
            doc_id = meta.get("newdoc id", doc_id)
            sent = RawSentence(source=source, doc_id=doc_id, sent_id=meta.get("sent_id", ""))
            sent.work_id = _work_id(doc_id, doc_id)
            upos: list[str] = []
            feats: list[str] = []
            for tok in token_list:
                if not isinstance(tok["id"], int):
                    continue
                sent.forms.append(_nfc(tok["form"]))
                sent.lemmas.append(_nfc(tok["lemma"] or ""))
                sent.tags.append(tok["xpos"] or "")
                sent.relations.append(tok["deprel"] or "")
                sent.ids.append(tok["id"])
                head = tok["head"]
                sent.heads.append(head if isinstance(head, int) else -1)
                sent.artificial.append(False)
                upos.append(tok["upos"] or "_")
                f = tok["feats"]
                feats.append("|".join(f"{k}={v}" for k, v in sorted(f.items())) if f else "_")
            if sent.forms:
                yield sent, upos, feats
