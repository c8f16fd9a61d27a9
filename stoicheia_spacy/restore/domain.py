"""The text domain a restoration is scored for: ``papyrus``, ``inscription`` or ``literary``.

The restorer's ``domain`` setting picks the combination weights (``kn_domain_weights``, fitted on
each domain's dev gaps by ``restore-eval``); ``auto`` (the default) takes ``doc._.domain`` when
it is set (``restore_epidoc`` sets it from the file's TEI header, :func:`header_domain`), else
reads the text (:func:`text_domain`).

Header rules (:func:`header_domain`): a DDbDP identifier (``<idno type="ddb-hybrid">``) or a
an inscription corpus's identifier (IOSPE, IIP, PHI, ...) is ``inscription``; a
papyrus support (``<objectType>`` / ``<material>``) is ``papyrus``; a physical description (``<msDesc>`` with ``<objectType>`` or ``<support>``) is
``inscription``; anything else says nothing. Text rules (:func:`text_domain`): editorial marks
beside the gaps (supplements ``[αβ]``, resolutions ``(αβ)``, dotted letters, ``⟦ ⟧``, ``{ }``)
make a documentary text, ``papyrus``; a text without them whose words are
literary often enough (particles and forms rare in documents, :data:`LITERARY_WORDS`) is
``literary``; otherwise ``papyrus``, the domain most training text comes from.
"""

from __future__ import annotations

import re
from typing import Literal, cast

from lxml import etree
from spacy.tokens import Doc

from ..errors import ConfigError
from .formats import bare

Domain = Literal["papyrus", "inscription", "literary"]
#: the domains with their own combination weights, and the setting's automatic choice
DOMAINS: tuple[str, ...] = ("papyrus", "inscription", "literary")
AUTO = "auto"

if not Doc.has_extension("domain"):
    Doc.set_extension("domain", default=None)

#: ``<idno type=...>`` values of the inscription corpora (lower case)
INSCRIPTION_IDNOS = frozenset({"iip", "iospe", "pe", "ai2015", "phi", "ig", "seg", "igcyr", "gvcyr", "iaph",
                               "irt", "ircyr", "insaph", "edh", "edr"})
#: ``<idno type=...>`` values of the papyri (DDbDP)
PAPYRUS_IDNOS = frozenset({"ddb-hybrid", "ddb-perseus-style"})
_PAPYRUS_SUPPORT = re.compile(r"papyr|πάπυρ", re.IGNORECASE)

#: bare words (no diacritics, final sigma folded) frequent in literary Greek and rare in documents
LITERARY_WORDS = frozenset(bare(w) for w in (
    "γάρ", "μέν", "τε", "οὖν", "ἄρα", "ἀλλά", "δή", "γε", "περ", "ἠδέ", "αὐτάρ", "ἀτάρ", "μάλα", "ὦ",
    "οὐδέ", "μηδέ", "ἐπεί", "ὅτε", "ἔνθα", "κεν", "κε", "ἄν", "τοι", "μιν", "νιν",
    "ὡς", "οὕτως", "μοῦσα", "θεά", "ἄειδε", "ἔννεπε", "πολλά", "πάντων", "λόγος", "ἐστιν", "ἦν", "φησί",
))
_EDITORIAL = re.compile(r"\[[^\]]*[^\W\d_][^\]]*\]|\([^)]*[^\W\d_][^)]*\)|\u0323|[⟦⟧{}⸢⸣]")
_WORD = re.compile(r"[^\W\d_]+")


def check_domain(value: str) -> str:
    """``value`` when it is ``auto`` or one of :data:`DOMAINS`, else a ``ConfigError``."""
    if value != AUTO and value not in DOMAINS:
        raise ConfigError(f"domain must be {AUTO!r} or one of {list(DOMAINS)}, got {value!r}")
    return value


def header_domain(source: bytes | str) -> Domain | None:
    """The domain a TEI/EpiDoc file's header states (see the module doc), or None."""
    data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    header = next(iter(root.iter("{*}teiHeader")), None)
    if header is None:
        return None

    def texts(tag: str) -> str:
        return " ".join("".join(el.itertext()) for el in header.iter(f"{{*}}{tag}"))

    idnos = {(el.get("type") or "").strip().lower() for el in header.iter("{*}idno")}
    if idnos & PAPYRUS_IDNOS or "duke databank" in texts("availability").lower():
        return "papyrus"
    if idnos & INSCRIPTION_IDNOS:
        return "inscription"
    if _PAPYRUS_SUPPORT.search(texts("objectType") + " " + texts("material")):
        return "papyrus"
    for ms in header.iter("{*}msDesc"):
        if next(iter(ms.iter("{*}objectType", "{*}support")), None) is not None:
            return "inscription"
    return None


def text_domain(text: str) -> Domain:
    """The domain a text's own marks and words suggest (see the module doc)."""
    if _EDITORIAL.search(text):
        return "papyrus"
    words = [bare(w) for w in _WORD.findall(text)]
    hits = sum(w in LITERARY_WORDS for w in words)
    return "literary" if hits and hits * 8 >= len(words) else "papyrus"


def doc_domain(doc: Doc, setting: str = AUTO) -> Domain:
    """The domain a Doc is restored as: ``setting`` unless it is ``auto``, then ``doc._.domain``
    when set (a domain of :data:`DOMAINS`), else :func:`text_domain` of its text."""
    if setting != AUTO:
        return cast(Domain, check_domain(setting))
    given = doc._.domain
    if given is not None:
        return cast(Domain, check_domain(str(given)))
    return text_domain(doc.text)


__all__ = ["AUTO", "DOMAINS", "INSCRIPTION_IDNOS", "LITERARY_WORDS", "PAPYRUS_IDNOS", "Domain", "check_domain",
           "doc_domain", "header_domain", "text_domain"]
