"""Match UD Perseus sentences to their AGDT 2.1 source sentences, so that a parser trained on
the harmonised AGDT folds can be scored on the UD Perseus dev/test sentences with its own
tree convention and labels (UD Perseus keeps UD relations and trees, which share no label
with AGDT's).

UD_Ancient_Greek-Perseus was converted from AGDT: its ``newdoc id`` is the AGDT file name
(``tlg0008.tlg001.perseus-grc1.12.tb.xml``) and its ``sent_id`` is ``<file>@<AGDT sentence
id>``. A UD sentence is matched to the harmonised AGDT sentence of that document and id when
their :func:`.splits.sentence_key` agree (``by_id``), else to the first sentence of the same
document with the same key (``by_key``); otherwise it is unmatched. The matched sentences keep
their AGDT 2.1 annotation as :func:`.harmonise.harmonise` makes it for training (tree, relations,
2.1 tags and lemmas), in UD order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .harmonise import Sentence, harmonise
from .readers import SOURCES, RawSentence, document_id, iter_source, list_documents, source_path
from .splits import sentence_key


def _ud_address(raw: RawSentence) -> tuple[str, str]:
    """(AGDT doc_id, AGDT sentence id) named by a UD sentence (``sent_id`` = ``file@id``)."""
    doc, sep, sid = raw.sent_id.rpartition("@")
    if not sep:
        return document_id(raw.doc_id), raw.sent_id
    return document_id(doc or raw.doc_id), sid


@dataclass
class UDMatch:
    """AGDT sentences matched to UD sentences (UD order) and how they were matched."""

    sentences: list[Sentence] = field(default_factory=list)
    ud_ids: list[str] = field(default_factory=list)
    by_id: int = 0
    by_key: int = 0
    unmatched: list[str] = field(default_factory=list)
    forms_differ: int = 0

    def counts(self) -> dict[str, int]:
        """Counts for ``corpus/stats.json``."""
        return {
            "ud_sentences": len(self.sentences) + len(self.unmatched),
            "matched": len(self.sentences),
            "matched_by_id": self.by_id,
            "matched_by_key": self.by_key,
            "unmatched": len(self.unmatched),
            "forms_differ": self.forms_differ,
            "words": sum(len(s) for s in self.sentences),
        }


def match_ud_to_agdt(ud: Iterable[RawSentence], agdt: Iterable[Sentence]) -> UDMatch:
    """Harmonised AGDT 2.1 sentences (``source`` ``agdt``) of the UD sentences ``ud`` (module
    docstring). ``forms_differ`` counts matches whose words differ from UD's (same key)."""
    by_address: dict[tuple[str, str], Sentence] = {}
    by_doc_key: dict[tuple[str, str], Sentence] = {}
    for s in agdt:
        by_address.setdefault((s.doc_id, s.sent_id), s)
        by_doc_key.setdefault((s.doc_id, sentence_key(s.forms)), s)
    result = UDMatch()
    for raw in ud:
        doc, sid = _ud_address(raw)
        key = sentence_key(raw.forms)
        hit = by_address.get((doc, sid))
        if hit is not None and sentence_key(hit.forms) == key:
            result.by_id += 1
        else:
            hit = by_doc_key.get((doc, key))
            if hit is None:
                result.unmatched.append(raw.sent_id)
                continue
            result.by_key += 1
        result.forms_differ += hit.forms != raw.forms
        result.sentences.append(hit)
        result.ud_ids.append(raw.sent_id)
    return result


def agdt_members(root: str | Path, ud: Sequence[RawSentence]) -> list[str]:
    """AGDT 2.1 member names (under the mirror or assets folder ``root``) of the documents the
    UD sentences come from."""
    docs = {document_id(r.doc_id) for r in ud} | {_ud_address(r)[0] for r in ud}
    spec = SOURCES["agdt"]
    return [m for m in list_documents(source_path(root, "agdt"), spec.pattern) if document_id(m) in docs]


def match_ud_from_source(root: str | Path, ud: Sequence[RawSentence]) -> UDMatch:
    """:func:`match_ud_to_agdt` reading and harmonising only the AGDT 2.1 documents that the UD
    sentences name (seconds instead of the full conversion)."""
    raws = iter_source(root, "agdt", documents=agdt_members(root, ud))
    return match_ud_to_agdt(ud, (h for r in raws if (h := harmonise(r)) is not None))
