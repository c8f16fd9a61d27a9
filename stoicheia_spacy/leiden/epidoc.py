"""EpiDoc TEI XML in and out: read an edition as the Leiden text the encoder reads, write
restorations back into the same file.

Reading (:func:`read_epidoc`): the ``<div type="edition">`` of a TEI file becomes a Leiden
string (:attr:`EpiDocText.text`) that :func:`~stoicheia_spacy.leiden.parse_gaps` and the
encoder read as they read any Leiden text:

* ``<gap>`` (any ``reason``): a lacuna in canonical Leiden (``[.4]``, ``[.2-5]``, ``[ca. 5]``,
  ``[---]``; lost lines ``|gap=N_lines|``); ``quantity``, ``atLeast``/``atMost``,
  ``extent="unknown"`` and ``precision="low"`` are read. Each is an :class:`EpiDocGap`
  carrying its ``reason``; the gaps of reason ``lost`` are the ones to restore
  (:attr:`EpiDocText.restorable`), the others stay in the context as unknown letters.
* ``<supplied reason="lost">``: kept as a Leiden restoration ``[αβγ]`` (``supplied="text"``)
  or, in the evaluation view (``supplied="gap"``), a gap of its width (``gold`` holds the text).
  ``reason="omitted"`` is ``⟨…⟩``; ``subaudible``/``explanation`` are left out.
* ``<unclear>``: letters kept with a dot below (flagged in :attr:`EpiDocText.unclear`).
* ``<lb break="no"/>`` (and ``cb``/``pb``/``milestone``): joined inside the word; any other
  line, column or block boundary is a word space.
* ``<expan>``: the expansion, each ``<ex>`` written ``(…)`` (flagged in
  :attr:`EpiDocText.expansions`); ``<am>`` is dropped.
* ``<choice>``: ``reg``/``corr`` (``regularised="reg"``) or ``orig``/``sic`` (``"orig"``);
  ``expan`` over ``abbr``; otherwise the first child. ``<app>``: the lemma (``<lem>``, else the
  first ``<rdg>``). ``<subst>``: the ``<add>``. ``<del>`` is ``⟦…⟧``, ``<surplus>`` ``{…}``.
  ``<note>``, ``<certainty>``, ``<desc>``, ``<figure>``, ``<head>`` and the like are left out.
* Blocks (``div``, ``ab``, ``p``, ``l``...) declared in a language that is not Greek are
  left out; an edition with no Greek passes through.
* Several ``<div type="edition">``: each is read, except a ``diplomatic`` or
  ``transliteration`` repeat of another and a word-segmented repeat (subtype
  ``X_segmented``, as IIP files carry beside ``X``) of an edition that is there.

Characters that Leiden reads as markup (brackets, ``|``, ``/``, ``?``, ``-``...) never come
from the file's text: they are dropped, so every gap of :attr:`EpiDocText.text` is one of
:attr:`EpiDocText.gaps`, in order (``parse_gaps(view.text).gaps[i]`` is ``view.gaps[i]``).

Files in another language, with no edition or with no lost gap are read without an
exception: :attr:`EpiDocText.message` says why they pass through. XML is hostile input: no
DTD is loaded, no entity is resolved, no network is used, a document type declaration that
declares entities is refused, the size read is bounded (``max_bytes``), and malformed or
non-TEI files and impossible widths raise :class:`~stoicheia_spacy.errors.EpiDocError`.

Writing (:func:`write_epidoc`): a gap of unknown extent (``extent="unknown"``) is kept as it
is, followed by ``<note type="restoration" resp="#stoicheia">`` listing the candidates (their
width is the restorer's guess, not the stone's). Each other restored gap element is replaced, in the original
bytes, by ``<supplied reason="lost" cert="low" resp="#stoicheia">TOP</supplied>``; when
there are other candidates, inside an apparatus
``<app type="alternative" resp="#stoicheia"><lem cert="P">…</lem><rdg cert="P"><supplied
reason="lost">…</supplied></rdg>…</app>`` (``cert``: the candidate's probability). Every
other byte is unchanged (the file is spliced, never re-serialised), so namespaces, prefixes,
comments and formatting stay as they were. :func:`restore_epidoc` reads, restores the lost
gaps with a pipeline's encoder and restorer, and writes.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np

from stoicheia_spacy.errors import ConfigError, EpiDocError, StoicheiaError
from stoicheia_spacy.leiden.model import LACUNA, LINES, Gap, GappedText
from stoicheia_spacy.leiden.parser import parse_leiden
from stoicheia_spacy.leiden.render import format_gap

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_LINES",
    "MAX_QUANTITY",
    "TEI_NS",
    "EpiDocGap",
    "EpiDocText",
    "epidoc_gapped",
    "read_epidoc",
    "read_epidoc_bytes",
    "write_epidoc",
]

TEI_NS: Final = "http://www.tei-c.org/ns/1.0"
XML_LANG: Final = "{http://www.w3.org/XML/1998/namespace}lang"
#: The largest file read (bytes); ``max_bytes=`` changes it per call.
DEFAULT_MAX_BYTES: Final = 8 * 1024 * 1024
#: The widest gap accepted, in characters; a wider ``quantity`` / ``atMost`` is refused.
MAX_QUANTITY: Final = 10_000
#: The most lines one gap may lose.
MAX_LINES: Final = 1_000
RESP: Final = "#stoicheia"
DOT_BELOW: Final = "\u0323"

Supplied = Literal["text", "gap"]
Regularised = Literal["reg", "orig"]

#: characters Leiden reads as markup: dropped from the file's text
_MARKUP_CHARS: Final = frozenset("[]⟦⟧〚〛{}⟨⟩〈〉<>()|/\\?-*@" + DOT_BELOW)
#: inside a restoration ``[...]`` these are gaps (or a width, ``±``) too: dropped there
_FILL_CHARS: Final = frozenset(".–—…±")
_GREEK_CODES: Final = frozenset({"grc", "el", "ell", "gre", "gr", "gkm", "grc-grc"})
_BLOCKS: Final = frozenset({"div", "ab", "p", "lg", "l", "list", "item", "table", "row", "cell"})
_BREAKS: Final = frozenset({"lb", "cb", "pb", "milestone"})
#: elements holding one word: whitespace-only text between their children is indentation
_WORDS: Final = frozenset({"expan", "w"})
#: subtypes of an edition that repeat another edition of the same file
_SECONDARY: Final = frozenset({"diplomatic", "transliteration"})
#: the subtype suffix of an edition that repeats edition ``X`` split into ``<w>`` words
_SEGMENTED: Final = "_segmented"
#: elements whose content is not part of the text read
_SKIP: Final = frozenset({
    "note", "certainty", "desc", "figure", "figDesc", "head", "witDetail", "wit", "interp", "precision",
    "bibl", "listBibl", "label", "am", "fw", "teiHeader", "rdg", "ptr", "link", "gloss",
})


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class EpiDocGap:
    """One gap of :attr:`EpiDocText.text`: its Leiden markup is ``text[start:end]``.

    ``min_width``/``max_width`` are letters (None: unknown; lost lines have None letters
    and ``lines``); ``node_path`` is the element (``/TEI[1]/text[1]/.../gap[2]``) the writer
    replaces; ``reason`` is the ``<gap>``'s (``lost``, ``illegible``, ``ellipsis``...) or
    ``lost`` for a ``<supplied>`` in the evaluation view, whose text is ``gold``; ``unit`` is
    ``character`` or ``line``; ``source_start``/``source_end`` the element's span in the
    decoded XML.
    """

    start: int
    end: int
    min_width: int | None
    max_width: int | None
    node_path: str
    reason: str = "lost"
    unit: str = "character"
    kind: Literal["gap", "supplied"] = "gap"
    approximate: bool = False
    lines: int | None = None
    gold: str | None = None
    source_start: int = -1
    source_end: int = -1

    @property
    def restorable(self) -> bool:
        """A lost gap of letters (the kind a restorer fills)."""
        return self.reason == "lost" and self.unit == "character"


@dataclass(frozen=True)
class EpiDocText:
    """The Leiden text of an EpiDoc edition, its gaps and a map back to the XML.

    ``offsets[i]`` is the path of the element that text position ``i`` comes from
    (``len(text) + 1`` entries; the last is the edition's); ``source_offsets[i]`` the
    position in the decoded XML (the character itself when it can be pinned down, else
    its element's start). ``unclear`` and ``expansions`` are ``[start, end)`` ranges of
    ``text``. ``message`` is None when the file has lost gaps to restore, else why it
    passes through (another language, no edition, no lost gap).
    """

    text: str
    gaps: tuple[EpiDocGap, ...]
    unclear: tuple[tuple[int, int], ...]
    expansions: tuple[tuple[int, int], ...]
    offsets: tuple[str, ...]
    language: str | None
    message: str | None
    source_offsets: tuple[int, ...] = ()
    supplied: tuple[tuple[int, int], ...] = ()

    @property
    def restorable(self) -> tuple[int, ...]:
        """Indices (in :attr:`gaps`, = gap indices of ``parse_gaps(text)``) of the lost gaps."""
        return tuple(i for i, gap in enumerate(self.gaps) if gap.restorable)

    def node_at(self, position: int) -> str:
        """The path of the XML element text position ``position`` comes from."""
        return self.offsets[position]


# ----------------------------------------------------------------------------- loading
@dataclass
class _Loaded:
    data: bytes
    bom: bytes
    codec: str
    source: str  # decoded, BOM removed
    root: Any  # lxml root element
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # per element: start, start-tag end, end
    index: dict[Any, int] = field(default_factory=dict)  # element -> document order
    paths: dict[Any, str] = field(default_factory=dict)


def _read_bytes(source: bytes | str | Path, max_bytes: int) -> tuple[bytes, bool]:
    """The bytes of ``source`` and whether they came from a str of XML."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        if len(data) > max_bytes:
            raise EpiDocError(f"EpiDoc input of {len(data)} bytes is larger than max_bytes={max_bytes}")
        return data, False
    if isinstance(source, str) and source.lstrip("\ufeff \t\r\n").startswith("<"):
        data = source.encode("utf-8", errors="surrogatepass")
        if len(data) > max_bytes:
            raise EpiDocError(f"EpiDoc input of {len(data)} bytes is larger than max_bytes={max_bytes}")
        return data, True
    if not isinstance(source, str | Path):
        raise EpiDocError(f"EpiDoc source must be bytes, XML text or a path, not {type(source).__name__}")
    path = Path(source)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise EpiDocError(f"{path} is {size} bytes, larger than max_bytes={max_bytes}")
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise EpiDocError(f"cannot read EpiDoc file {path}: {exc}") from exc
    if len(data) > max_bytes:
        raise EpiDocError(f"{path} is larger than max_bytes={max_bytes}")
    return data, False


_DECL = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")


def _decode(data: bytes, from_str: bool) -> tuple[bytes, str, str]:
    """BOM, codec name and decoded text (BOM removed) of ``data``."""
    boms = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
    bom, codec = next(((mark, name) for mark, name in boms if data.startswith(mark)), (b"", ""))
    if not bom:
        codec = "utf-8"
        match = _DECL.match(data)
        if match is not None and not from_str:
            declared = match.group(1).decode("ascii").lower()
            try:
                codec = codecs.lookup(declared).name
            except LookupError as exc:
                raise EpiDocError(f"unknown XML encoding {declared!r}") from exc
    if codec == "utf-16":
        raise EpiDocError("a UTF-16 file needs a byte order mark")
    try:
        text = data[len(bom):].decode(codec)
    except UnicodeDecodeError as exc:
        raise EpiDocError(f"the file is not valid {codec}: {exc}") from exc
    return bom, codec, text


_DOCTYPE = re.compile(r"<!DOCTYPE\b", re.I)
_ENTITY_DECL = re.compile(r"<!ENTITY\b", re.I)
# One XML token: comment, CDATA, PI, DOCTYPE, end tag, start / empty tag.
_TOKEN = re.compile(
    r"<!--.*?-->"
    r"|<!\[CDATA\[.*?\]\]>"
    r"|<\?.*?\?>"
    r"|<!DOCTYPE(?:[^\[>\"']|\"[^\"]*\"|'[^']*'|\[(?:[^\]\"']|\"[^\"]*\"|'[^']*')*\])*>"
    r"|</(?P<end>[^\s>]+)\s*>"
    r"|<(?P<start>[^\s/>!?]+)(?:[^>\"']|\"[^\"]*\"|'[^']*')*?(?P<empty>/?)>",
    re.S,
)


def _load(source: bytes | str | Path, max_bytes: int) -> _Loaded:
    """Read, check and parse ``source`` safely; locate every element in the decoded text."""
    if not isinstance(max_bytes, int) or max_bytes < 1:
        raise ConfigError(f"max_bytes must be a positive int, got {max_bytes!r}")
    data, from_str = _read_bytes(source, max_bytes)
    if not data.strip():
        raise EpiDocError("empty EpiDoc input")
    bom, codec, text = _decode(data, from_str)
    doctype = _DOCTYPE.search(text)
    if doctype is not None:
        root_at = text.find("<", doctype.end())
        if _ENTITY_DECL.search(text, doctype.start(), max(root_at, doctype.end())):
            raise EpiDocError("the document type declares entities: refused (entity expansion is not allowed)")
        if _ENTITY_DECL.search(text):
            raise EpiDocError("the file declares entities: refused (entity expansion is not allowed)")
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False, dtd_validation=False,
        remove_comments=False, remove_pis=False,  # (collect_ids=False would load an external DTD)
        encoding="utf-8" if from_str else None,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise EpiDocError(f"malformed XML: {exc}") from exc
    except ValueError as exc:  # e.g. an unknown encoding
        raise EpiDocError(f"cannot parse the XML: {exc}") from exc
    if root is None:
        raise EpiDocError("the file holds no XML element")
    local = etree.QName(root).localname
    namespace = etree.QName(root).namespace
    if not ((local == "TEI" and namespace in (TEI_NS, None)) or (local == "TEI.2" and namespace is None)):
        raise EpiDocError(f"not a TEI file: the root element is <{local}>"
                          + (f" in namespace {namespace}" if namespace else ""))
    loaded = _Loaded(data=data, bom=bom, codec=codec, source=text, root=root)
    _locate(loaded)
    return loaded


def _locate(loaded: _Loaded) -> None:
    """Find the start and end of every element in the decoded text (document order)."""
    from lxml import etree

    spans: list[list[int]] = []
    stack: list[int] = []
    for match in _TOKEN.finditer(loaded.source):
        if match.group("start") is not None:
            spans.append([match.start(), match.end(), match.end()])
            if match.group("empty"):
                continue
            stack.append(len(spans) - 1)
        elif match.group("end") is not None:
            if not stack:
                raise EpiDocError("cannot locate the elements of the file (unbalanced end tag)")
            spans[stack.pop()][2] = match.end()
    elements = list(loaded.root.iter(etree.Element))
    if len(elements) != len(spans) or stack:
        raise EpiDocError(f"cannot locate the elements of the file ({len(spans)} tags, "
                          f"{len(elements)} elements)")
    loaded.spans = [(a, b, c) for a, b, c in spans]
    loaded.index = {el: i for i, el in enumerate(elements)}
    for el, (start, _, _) in zip(elements, loaded.spans, strict=True):
        name = etree.QName(el).localname
        if not loaded.source.startswith("<" + (el.prefix + ":" if el.prefix else "") + name, start):
            raise EpiDocError(f"cannot locate the element <{name}> in the file")
    _paths(loaded.root, loaded.paths)


def _paths(root: Any, out: dict[Any, str]) -> None:
    """``/TEI[1]/text[1]/body[1]/div[1]/ab[1]/gap[2]`` for every element (local names)."""
    from lxml import etree

    out[root] = f"/{etree.QName(root).localname}[1]"
    stack = [root]
    while stack:
        el = stack.pop()
        counts: dict[str, int] = {}
        for child in el.iterchildren(etree.Element):
            name = etree.QName(child).localname
            counts[name] = counts.get(name, 0) + 1
            out[child] = f"{out[el]}/{name}[{counts[name]}]"
            stack.append(child)


# ----------------------------------------------------------------------------- reading
def _local(el: Any) -> str:
    tag = el.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _lang(el: Any) -> str | None:
    """The language an element declares: ``xml:lang`` (``lang`` in TEI P4 files)."""
    lang = el.get(XML_LANG) or el.get("lang")
    return str(lang) if lang else None


def _blank(chunk: str | None) -> bool:
    return chunk is not None and not chunk.strip()


def _closer(node: Any) -> str:
    """How a comment, processing instruction or entity reference ends in the source."""
    from lxml import etree

    if isinstance(node, etree._Comment):
        return "-->"
    if isinstance(node, etree._ProcessingInstruction):
        return "?>"
    return ";"


def _is_greek(lang: str | None) -> bool | None:
    """True/False for a declared language, None when undeclared."""
    if not lang:
        return None
    parts = lang.strip().lower().replace("_", "-").split("-")
    if parts[0] not in _GREEK_CODES:
        return False
    return "latn" not in parts[1:]


def _int_attr(el: Any, name: str, what: str) -> int | None:
    value = el.get(name)
    if value is None:
        return None
    value = value.strip()
    if not re.fullmatch(r"\d{1,12}", value):
        raise EpiDocError(f"<{what}> has {name}={value!r}: not a whole number")
    return int(value)


class _Reader:
    def __init__(self, loaded: _Loaded, supplied: Supplied, regularised: Regularised) -> None:
        self.loaded = loaded
        self.supplied = supplied
        self.regularised = regularised
        self.chars: list[str] = []
        self.nodes: list[str] = []
        self.src: list[int] = []
        self.gaps: list[EpiDocGap] = []
        self.unclear: list[tuple[int, int]] = []
        self.expansions: list[tuple[int, int]] = []
        self.supplied_spans: list[tuple[int, int]] = []
        self.pending: tuple[str, int] | None = None  # a word space waiting for the next content
        self.join = False  # after <lb break="no"/>: whitespace is dropped until the next content
        self.square = False  # a "[" of a restoration is open
        self.greek_letters = 0
        self.latin_letters = 0
        self.skipped_blocks: list[str] = []

    # --- output ----------------------------------------------------------------------
    def _put(self, text: str, node: str, src: int) -> None:
        for ch in text:
            self.chars.append(ch)
            self.nodes.append(node)
            self.src.append(src)

    def space(self, node: str, src: int) -> None:
        if not self.join and self.chars and self.pending is None:
            self.pending = (node, src)

    def _before_content(self, in_supplied: bool, node: str, src: int) -> None:
        if self.square and not in_supplied:
            self._put("]", self.nodes[-1], self.src[-1])
            self.square = False
        if self.pending is not None:
            if self.chars and self.chars[-1] != " ":
                self._put(" ", *self.pending)
            self.pending = None
        self.join = False
        if in_supplied and not self.square:
            self._put("[", node, src)
            self.square = True

    def content(self, ch: str, node: str, src: int, in_supplied: bool, dotted: bool = False) -> None:
        self._before_content(in_supplied, node, src)
        self._put(ch, node, src)
        if ch.isalpha():
            if "GREEK" in unicodedata.name(ch, ""):
                self.greek_letters += 1
            elif ch.isascii():
                self.latin_letters += 1
            if dotted:
                self._put(DOT_BELOW, node, src)

    def markup(self, text: str, node: str, src: int) -> tuple[int, int]:
        """Leiden markup outside any restoration (a gap); its [start, end) in the text."""
        self._before_content(False, node, src)
        start = len(self.chars)
        self._put(text, node, src)
        return start, len(self.chars)

    def span_from(self, first: int) -> tuple[int, int] | None:
        """The content emitted since ``first``, without the word space or "[" before it."""
        end = len(self.chars)
        while first < end and self.chars[first] in " [":
            first += 1
        return (first, end) if end > first else None

    def close(self) -> None:
        if self.square:
            self._put("]", self.nodes[-1], self.src[-1])
            self.square = False

    # --- text --------------------------------------------------------------------------
    def text(self, chunk: str | None, node: str, start: int, in_supplied: bool, dotted: bool) -> None:
        if not chunk:
            return
        raw = self.loaded.source
        exact = raw.startswith(chunk, start)
        for i, ch in enumerate(chunk):
            src = start + i if exact else start
            if ch.isspace():
                self.space(node, src)
            elif ch in _MARKUP_CHARS or (in_supplied and ch in _FILL_CHARS):
                continue
            elif unicodedata.category(ch) in ("Cc", "Cf"):
                continue
            else:  # digits stay outside a restoration, where "[5]" would read as a lacuna
                self.content(ch, node, src, in_supplied and not ch.isdigit(),
                             dotted and not unicodedata.combining(ch))

    # --- elements ----------------------------------------------------------------------
    def walk(self, el: Any, greek: bool, in_supplied: bool, dotted: bool) -> None:
        """Read the element ``el`` (not its tail)."""
        name = _local(el)
        if not name:
            return  # comment, processing instruction or entity
        loaded = self.loaded
        node = loaded.paths[el]
        start, tag_end, end = loaded.spans[loaded.index[el]]
        lang = _lang(el)
        declared = _is_greek(lang)
        if name in _BLOCKS or name in ("text", "body"):
            if declared is not None:
                if not declared and greek:
                    self.skipped_blocks.append(lang or "")
                greek = declared
            self.space(node, start)
        if name in _BREAKS:
            if (el.get("break") or "").lower() == "no":
                self.pending = None
                self.join = True
            else:
                self.space(node, start)
            return
        if name == "gap":
            if greek:
                self.gap(el, node, start)
            return
        if name == "space":
            self.space(node, start)
            return
        if name in _SKIP:
            return
        if name == "g" and len(el) == 0 and not (el.text or "").strip():
            self.space(node, start)
            return
        if name == "supplied":
            reason = (el.get("reason") or "").lower()
            if reason in ("subaudible", "explanation"):
                return
            if reason == "lost":
                if self.supplied == "gap" and greek and self.supplied_gap(el, node, start):
                    return
                first = len(self.chars)
                self.children(el, node, tag_end, greek, True, dotted)
                span = self.span_from(first)
                if span is not None:
                    self.supplied_spans.append(span)
                return
            if reason == "omitted" and greek:
                self.bracketed("⟨", "⟩", el, node, start, tag_end, end, greek, in_supplied, dotted)
                return
        if name == "unclear":
            first = len(self.chars)
            self.children(el, node, tag_end, greek, in_supplied, True)
            span = self.span_from(first)
            if span is not None:
                self.unclear.append(span)
            return
        if name == "ex":
            if greek:
                self.content("(", node, start, in_supplied)
                first = len(self.chars)
                self.children(el, node, tag_end, greek, in_supplied, dotted)
                span = self.span_from(first)
                if span is not None:
                    self.expansions.append(span)
                self.content(")", node, max(start, end - 1), in_supplied)
            else:
                self.children(el, node, tag_end, greek, in_supplied, dotted)
            return
        if name in ("del",) and greek:
            self.bracketed("⟦", "⟧", el, node, start, tag_end, end, greek, in_supplied, dotted)
            return
        if name == "surplus" and greek:
            self.bracketed("{", "}", el, node, start, tag_end, end, greek, in_supplied, dotted)
            return
        if name == "choice":
            chosen = self.choose(el)
            if chosen is not None:
                self.walk_chosen(chosen, greek, in_supplied, dotted)
            return
        if name == "app":
            lemma = next((c for c in el.iterchildren() if _local(c) == "lem"), None)
            if lemma is None:
                lemma = next((c for c in el.iterchildren() if _local(c) == "rdg"), None)
            if lemma is not None:
                self.walk_chosen(lemma, greek, in_supplied, dotted)
            return
        if name == "subst":
            for child in el.iterchildren():
                if _local(child) == "add":
                    self.walk_chosen(child, greek, in_supplied, dotted)
            return
        self.children(el, node, tag_end, greek, in_supplied, dotted)
        if name in _BLOCKS:
            self.space(node, max(start, end - 1))

    def walk_chosen(self, el: Any, greek: bool, in_supplied: bool, dotted: bool) -> None:
        """A child picked by <choice>/<app>/<subst>: read its content as the parent's."""
        node = self.loaded.paths[el]
        start, tag_end, end = self.loaded.spans[self.loaded.index[el]]
        name = _local(el)
        if name in ("lem", "rdg", "add", "reg", "orig", "sic", "corr", "abbr", "seg"):
            self.children(el, node, tag_end, greek, in_supplied, dotted)
        else:
            self.walk(el, greek, in_supplied, dotted)

    def children(self, el: Any, node: str, tag_end: int, greek: bool, in_supplied: bool, dotted: bool) -> None:
        """Read the content of ``el``: its text, each child and each child's tail."""
        source = self.loaded.source
        # inside a word (<expan>, <w>) whitespace between the parts is indentation
        word = _local(el) in _WORDS
        if greek and not (word and _blank(el.text)):
            self.text(el.text, node, tag_end, in_supplied, dotted)
        cursor = tag_end
        for child in el.iterchildren():
            if _local(child):
                self.walk(child, greek, in_supplied, dotted)
                cursor = self.loaded.spans[self.loaded.index[child]][2]
            else:  # comment, processing instruction or entity reference: find where it ends
                closer = _closer(child)
                found = source.find(closer, cursor)
                cursor = found + len(closer) if found >= 0 else cursor
            if greek and not (word and _blank(child.tail)):
                self.text(child.tail, node, cursor, in_supplied, dotted)

    def bracketed(self, opener: str, closer: str, el: Any, node: str, start: int, tag_end: int, end: int,
                  greek: bool, in_supplied: bool, dotted: bool) -> None:
        first = len(self.chars)
        self.content(opener, node, start, in_supplied)
        mark = len(self.chars)
        self.children(el, node, tag_end, greek, in_supplied, dotted)
        if len(self.chars) == mark:  # nothing inside: drop the opener
            del self.chars[first:], self.nodes[first:], self.src[first:]
            return
        self.content(closer, node, max(start, end - 1), in_supplied)

    def choose(self, el: Any) -> Any | None:
        kids = [c for c in el.iterchildren() if _local(c)]
        if not kids:
            return None
        order = (("reg", "corr", "expan", "orig", "sic", "abbr") if self.regularised == "reg"
                 else ("orig", "sic", "expan", "reg", "corr", "abbr"))
        for want in order:
            for kid in kids:
                if _local(kid) == want:
                    return kid
        return kids[0]

    # --- gaps --------------------------------------------------------------------------
    def add_gap(self, el: Any, gap: EpiDocGap) -> None:
        start, _, end = self.loaded.spans[self.loaded.index[el]]
        self.gaps.append(replace(gap, source_start=start, source_end=end))

    def gap(self, el: Any, node: str, src: int) -> None:
        reason = (el.get("reason") or "lost").strip().lower() or "lost"
        unit = (el.get("unit") or "character").strip().lower()
        quantity = _int_attr(el, "quantity", "gap")
        if quantity is None and re.fullmatch(r"\s*\d+\s*", el.get("extent") or ""):
            quantity = _int_attr(el, "extent", "gap")  # TEI P4 EpiDoc: the width is the extent
        at_least = _int_attr(el, "atLeast", "gap")
        at_most = _int_attr(el, "atMost", "gap")
        low = quantity if quantity is not None else at_least
        high = quantity if quantity is not None else at_most
        if quantity is None and low is None and high is not None:
            low = 1
        if low is not None and high is not None and low > high:
            raise EpiDocError(f"<gap> at {node} has atLeast={low} > atMost={high}")
        if low is not None and low < 1:
            if quantity is not None or (high is not None and high < 1):
                raise EpiDocError(f"<gap> at {node} has a width of {low}: at least 1 is needed")
            low = 1
        approximate = (el.get("precision") or "").lower() == "low"
        if unit in ("line", "lines"):
            limit = MAX_LINES
            for value in (low, high):
                if value is not None and value > limit:
                    raise EpiDocError(f"<gap> at {node} loses {value} lines: more than {limit} is not believable")
            lines = low if low is not None and low == high else None
            leiden = format_gap(Gap(0, 1, None, LINES, 0, 0, lines=lines))
            start, end = self.markup(leiden, node, src)
            self.add_gap(el, EpiDocGap(start, end, None, None, node, reason, "line", lines=lines,
                                       approximate=approximate))
            return
        for value in (low, high):
            if value is not None and value > MAX_QUANTITY:
                raise EpiDocError(f"<gap> at {node} is {value} characters wide: more than {MAX_QUANTITY} "
                                  f"is not believable")
        if unit not in ("character", "characters", "char", "letter", "letters"):
            low, high = None, None  # a width in cm, words...: unknown letters
        if low is None or high is None:
            leiden = format_gap(Gap(0, 1, None, LACUNA, 0, 0))
            min_width = low if low is not None else 1
            start, end = self.markup(leiden, node, src)
            self.add_gap(el, EpiDocGap(start, end, min_width, None, node, reason, "character",
                                       approximate=approximate))
            return
        leiden = format_gap(Gap(0, low, high, LACUNA, 0, 0, approximate=approximate))
        start, end = self.markup(leiden, node, src)
        self.add_gap(el, EpiDocGap(start, end, low, high, node, reason, "character", approximate=approximate))

    def supplied_gap(self, el: Any, node: str, src: int) -> bool:
        """``<supplied reason="lost">`` as a gap of its width (evaluation view); False when it
        holds a gap itself or no letter (then it is read as text)."""
        inner = _Reader(self.loaded, "text", self.regularised)
        inner.children(el, node, self.loaded.spans[self.loaded.index[el]][1], True, False, False)
        if inner.gaps:
            return False
        gold = "".join(ch for ch in inner.chars if ch not in _MARKUP_CHARS and ch not in "⟨⟩⟦⟧{}").strip()
        width = sum(1 for ch in gold if not unicodedata.combining(ch))
        if width == 0:
            return False
        leiden = format_gap(Gap(0, width, width, LACUNA, 0, 0))
        start, end = self.markup(leiden, node, src)
        self.add_gap(el, EpiDocGap(start, end, width, width, node, "lost", "character", kind="supplied",
                                   gold=gold))
        return True


def _subtype(el: Any) -> str:
    return (el.get("subtype") or "").strip().lower()


def _editions(root: Any) -> list[Any]:
    """The edition divs read: all of them but a diplomatic or transliterated repeat of another,
    and but a word-segmented repeat (subtype ``X_segmented``, as in IIP) of an edition ``X``."""
    found = [el for el in root.iter(f"{{{TEI_NS}}}div", "div") if (el.get("type") or "").strip() == "edition"]
    main = [el for el in found if _subtype(el) not in _SECONDARY]
    subtypes = {_subtype(el) for el in main}
    main = [el for el in main if not (_subtype(el).endswith(_SEGMENTED)
                                      and _subtype(el).removesuffix(_SEGMENTED) in subtypes)]
    return main or found


def _declared_language(edition: Any, root: Any) -> str | None:
    """xml:lang of the edition or of an ancestor below the root, else the header's main language."""
    el = edition
    while el is not None and el is not root:
        lang = _lang(el)
        if lang:
            return lang
        el = el.getparent()
    for text_lang in root.iter(f"{{{TEI_NS}}}textLang", "textLang"):
        main = text_lang.get("mainLang")
        if main:
            return str(main)
    return None


def _read(loaded: _Loaded, supplied: Supplied, regularised: Regularised) -> EpiDocText:
    if supplied not in ("text", "gap"):
        raise ConfigError(f"supplied must be 'text' or 'gap', got {supplied!r}")
    if regularised not in ("reg", "orig"):
        raise ConfigError(f"regularised must be 'reg' or 'orig', got {regularised!r}")
    root = loaded.root
    editions = _editions(root)
    if not editions:
        return EpiDocText("", (), (), (), (loaded.paths[root],), None,
                          'no <div type="edition">: nothing to read, passed through', (0,))
    reader = _Reader(loaded, supplied, regularised)
    languages = []
    for edition in editions:
        lang = _declared_language(edition, root)
        languages.append(lang)
        greek = _is_greek(lang)
        reader.space(loaded.paths[edition], loaded.spans[loaded.index[edition]][0])
        node = loaded.paths[edition]
        tag_end = loaded.spans[loaded.index[edition]][1]
        # undeclared: read it and decide by its script below; a non-Greek edition is still
        # walked, for the Greek blocks it may hold
        reader.children(edition, node, tag_end, greek is not False, False, False)
    reader.close()
    first_edition = loaded.paths[editions[0]]
    text = "".join(reader.chars)
    nodes = reader.nodes
    src = reader.src
    # trailing space never emitted (pending); leading space never emitted (needs chars)
    declared = next((lang for lang in languages if lang), None)
    language: str | None = declared
    message: str | None = None
    if declared is not None and _is_greek(declared) is False and reader.greek_letters == 0:
        message = f"the edition is in {declared!r}, not Greek: passed through"
        return EpiDocText("", (), (), (), (first_edition,), declared, message, (0,))
    if declared is None and reader.latin_letters > reader.greek_letters:
        message = "the edition declares no language and is not written in Greek letters: passed through"
        return EpiDocText("", (), (), (), (first_edition,), None, message, (0,))
    if declared is None or _is_greek(declared) is False:
        language = "grc" if reader.greek_letters else declared
    gaps = tuple(reader.gaps)
    _check_leiden(text, gaps)
    if not text.strip():
        message = "the edition holds no text: passed through"
    elif not any(gap.restorable for gap in gaps):
        message = "no lost gap to restore: passed through"
    return EpiDocText(
        text=text,
        gaps=gaps,
        unclear=tuple(reader.unclear),
        expansions=tuple(reader.expansions),
        offsets=(*nodes, first_edition),
        language=language,
        message=message,
        source_offsets=(*src, loaded.spans[loaded.index[editions[0]]][2]),
        supplied=tuple(reader.supplied_spans),
    )


def _check_leiden(text: str, gaps: tuple[EpiDocGap, ...]) -> None:
    """The Leiden parser must find exactly the gaps read, where they were written."""
    try:
        parsed = parse_leiden(text)
    except StoicheiaError as exc:
        raise EpiDocError(f"the edition's text does not read back as Leiden: {exc}") from exc
    if [(g.source_start, g.source_end) for g in parsed.gaps] != [(g.start, g.end) for g in gaps]:
        raise EpiDocError("the edition's text does not read back as Leiden with the same gaps")


def read_epidoc(source: bytes | str | Path, *, supplied: Supplied = "text", regularised: Regularised = "reg",
                max_bytes: int = DEFAULT_MAX_BYTES) -> EpiDocText:
    """Read the edition of an EpiDoc TEI file as Leiden text (see the module docstring).

    ``source`` is the file's bytes, its XML as a str, or a path. ``supplied="gap"`` turns
    every ``<supplied reason="lost">`` into a gap (the evaluation view); ``regularised``
    picks ``reg``/``corr`` or ``orig``/``sic`` readings. Raises
    :class:`~stoicheia_spacy.errors.EpiDocError` for unreadable, oversize, malformed,
    non-TEI or hostile files and impossible gap widths.
    """
    return _read(_load(source, max_bytes), supplied, regularised)


def read_epidoc_bytes(source: bytes | str | Path, *, supplied: Supplied = "text", regularised: Regularised = "reg",
                      max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, EpiDocText]:
    """:func:`read_epidoc`, with the file's bytes as read (what a file that passes through
    unchanged comes back as), from one parse."""
    loaded = _load(source, max_bytes)
    return loaded.data, _read(loaded, supplied, regularised)


# ----------------------------------------------------------------------------- writing
def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _get(item: Any, *names: str) -> Any:
    for name in names:
        if isinstance(item, Mapping):
            if name in item:
                return item[name]
        elif hasattr(item, name):
            return getattr(item, name)
    return None


def _candidates(item: Any) -> list[tuple[str, float | None]]:
    """``(text, probability)`` of a restoration: a restorer record
    (:class:`~stoicheia_spacy.restore.results.Restoration`, whose candidates have ``text`` and
    ``share``), a dict or object with ``candidates`` (``(text, logprob, probability)`` tuples or
    ``{"text", "probability"}``), or a plain sequence."""
    if item is None:
        return []
    if isinstance(item, str):
        return [(item, None)]
    if _get(item, "abstain") is True or _get(item, "status") == "too_wide":
        return []  # the restorer abstained (or could not decode): the gap stays
    raw = _get(item, "candidates")
    if raw is None:
        raw = item if isinstance(item, Sequence) else []
    out: list[tuple[str, float | None]] = []
    for cand in raw:
        if isinstance(cand, str):
            out.append((cand, None))
            continue
        if isinstance(cand, Sequence):
            if not cand:
                continue
            text = cand[0]
            prob = cand[2] if len(cand) >= 3 else cand[1] if len(cand) == 2 else None
        else:
            text = _get(cand, "accented") or _get(cand, "text", "candidate")  # accented when the accentuator ran
            prob = _get(cand, "share", "probability", "prob", "p")
        if not isinstance(text, str):
            raise EpiDocError(f"a restoration candidate has no text: {cand!r}")
        if text.strip():  # a space at an edge is a word break the restorer chose: kept
            out.append((text, None if prob is None else float(prob)))
    return out


def _prob(p: float | None) -> str:
    return "" if p is None else f' cert="{min(max(p, 0.0), 1.0):.3f}"'


def _apparatus(prefix: str, reason: str, cands: list[tuple[str, float | None]]) -> str:
    def tag(name: str) -> str:
        return f"{prefix}:{name}" if prefix else name

    top, p_top = cands[0]
    supplied = (f'<{tag("supplied")} reason="{reason}" cert="low" resp="{RESP}">{_escape(top)}'
                f'</{tag("supplied")}>')
    if len(cands) == 1:
        return supplied
    parts = [f'<{tag("app")} type="alternative" resp="{RESP}">',
             f'<{tag("lem")} resp="{RESP}"{_prob(p_top)}>{supplied}</{tag("lem")}>']
    for text, p in cands[1:]:
        parts.append(f'<{tag("rdg")} resp="{RESP}"{_prob(p)}><{tag("supplied")} reason="{reason}">'
                     f'{_escape(text)}</{tag("supplied")}></{tag("rdg")}>')
    parts.append(f"</{tag('app')}>")
    return "".join(parts)


def _candidate_note(prefix: str, cands: list[tuple[str, float | None]]) -> str:
    """A ``<note>`` after a gap of unknown extent: the restorer's candidates, the gap kept."""
    tag = f"{prefix}:note" if prefix else "note"
    listed = "; ".join(text if p is None else f"{text} ({p:.3f})" for text, p in cands)
    return (f'<{tag} type="restoration" resp="{RESP}">gap of unknown extent; candidates: '
            f"{_escape(listed)}</{tag}>")


def _align(gaps: Sequence[EpiDocGap], restorations: Sequence[Any] | Mapping[int, Any]) -> list[tuple[int, Any]]:
    """(gap index, restoration) pairs: by ``start``/``end`` when the restorations carry them
    (the restorer's dicts), by a mapping's keys, else by position."""
    if isinstance(restorations, Mapping):
        pairs = []
        for key, value in restorations.items():
            if not isinstance(key, int) or not 0 <= key < len(gaps):
                raise EpiDocError(f"restoration for gap {key!r}, but the file has {len(gaps)} gaps")
            pairs.append((key, value))
        return pairs
    if isinstance(restorations, str | bytes):
        raise EpiDocError("restorations must be a sequence, not a string")
    items = list(restorations)
    by_span = {(g.start, g.end): i for i, g in enumerate(gaps)}
    if items and all(_get(it, "start") is not None and _get(it, "end") is not None for it in items if it is not None):
        pairs = []
        for item in items:
            if item is None:
                continue
            span = (int(_get(item, "start")), int(_get(item, "end")))
            if span not in by_span:
                raise EpiDocError(f"a restoration at text {span[0]}..{span[1]} matches no gap of the file "
                                  f"(was it made from read_epidoc(...).text with the same options?)")
            pairs.append((by_span[span], item))
        return pairs
    if len(items) != len(gaps):
        raise EpiDocError(f"{len(items)} restorations given for {len(gaps)} gaps (use None to keep a gap)")
    return [(i, item) for i, item in enumerate(items) if item is not None]


def write_epidoc(source: bytes | str | Path, restorations: Sequence[Any] | Mapping[int, Any], *,
                 supplied: Supplied = "text", regularised: Regularised = "reg",
                 max_bytes: int = DEFAULT_MAX_BYTES, reasons: Iterable[str] = ("lost",),
                 top: int | None = None) -> bytes:
    """The bytes of ``source`` with each restored gap replaced (see the module docstring).

    ``restorations`` are aligned with ``read_epidoc(source, supplied=..., regularised=...)
    .gaps``: the restorer's ``doc._.restorations`` records (matched by ``start``/``end``), a
    sequence of the same length as the gaps (None keeps a gap), or a mapping gap index ->
    restoration. A restoration is a restorer record, an object or mapping with ``candidates``
    (``(text, logprob, probability)`` tuples or ``{"text", "probability"}``), or a plain
    string. Only gaps whose ``reason`` is in ``reasons`` are written; ``top`` caps the
    candidates written per gap. Every other byte stays as it was.
    """
    loaded = _load(source, max_bytes)
    view = _read(loaded, supplied, regularised)
    wanted = set(reasons)
    by_path = {path: el for el, path in loaded.paths.items()}
    edits: list[tuple[int, int, str]] = []
    for index, item in _align(view.gaps, restorations):
        gap = view.gaps[index]
        if gap.reason not in wanted:
            continue
        cands = _candidates(item)
        if top is not None:
            cands = cands[: max(int(top), 1)]
        if not cands:
            continue
        el = by_path[gap.node_path]
        start, _, end = loaded.spans[loaded.index[el]]
        if gap.kind == "supplied" and any(_local(c) in _BREAKS for c in el.iter()):
            continue  # a restoration across a line break: rewriting it would lose the <lb/>
        reason = gap.reason if gap.reason in ("lost", "illegible") else "lost"
        if gap.kind == "gap" and gap.unit == "character" and gap.max_width is None:
            # an unknown extent is never fixed at the candidates' width: the gap stays, they go in a note
            edits.append((end, end, _candidate_note(el.prefix or "", cands)))
            continue
        edits.append((start, end, _apparatus(el.prefix or "", reason, cands)))
    if not edits:
        return loaded.data
    edits.sort()
    out: list[str] = []
    cursor = 0
    for start, end, markup in edits:
        if start < cursor:
            raise EpiDocError("two restorations replace the same element")
        out.append(loaded.source[cursor:start])
        out.append(markup)
        cursor = end
    out.append(loaded.source[cursor:])
    return loaded.bom + "".join(out).encode(loaded.codec, errors="xmlcharrefreplace")


def epidoc_gapped(xml: str | bytes | Path, *, strip_restorations: bool = False,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> GappedText:
    """``parse_gaps(xml, notation="epidoc")``: the edition read as Leiden text and parsed,
    with ``source_offsets`` and the gaps' and spans' ``source_start``/``source_end`` leading
    back into ``xml`` (decoded): a gap's are its element's; a character's is the character
    itself when it can be pinned down, else its element's start. With
    ``strip_restorations`` every ``<supplied reason="lost">`` is a ``restored`` gap whose
    ``gold`` is its text (the evaluation view). A file that passes through (another
    language, no edition) gives an empty text."""
    loaded = _load(xml, max_bytes)
    view = _read(loaded, "text", "reg")
    gapped = parse_leiden(view.text, strip_restorations=strip_restorations)
    shift = 1 if isinstance(xml, str) and xml.startswith("\ufeff") else 0
    src = np.asarray(view.source_offsets, dtype=np.int64) + shift
    end_of_input = len(loaded.source) + shift
    offsets = np.empty(len(gapped.text) + 1, dtype=np.int64)
    offsets[:-1] = src[gapped.source_offsets[:-1]]
    offsets[-1] = end_of_input
    by_start = {g.start: g for g in view.gaps}

    def source_span(start: int, end: int) -> tuple[int, int]:
        if start >= len(view.text):
            return end_of_input, end_of_input
        first = int(src[start])
        last = int(src[max(start, end - 1)]) + 1 if end > start else first
        return first, max(first, last)

    gaps = []
    for gap in gapped.gaps:
        element = by_start.get(gap.source_start)
        if element is not None and not gap.gold:
            span = (element.source_start + shift, element.source_end + shift)
        else:
            span = source_span(gap.source_start, gap.source_end)
        gaps.append(replace(gap, source_start=span[0], source_end=span[1]))
    spans = []
    for item in gapped.spans:
        first, last = source_span(item.source_start, item.source_end)
        spans.append(replace(item, source_start=first, source_end=last))
    return GappedText(text=gapped.text, gaps=gaps, source_offsets=offsets, spans=spans)
