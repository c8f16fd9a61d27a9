"""The scanner's typed results on real Greek: one shape for both decoders, frozen, JSON by
``to_dict``, kept by ``DocBin``."""

from __future__ import annotations

import dataclasses
import json
import unicodedata

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from stoicheia_spacy.scan.results import Macron, Meter, Scansion

VERSE = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"


@pytest.fixture(scope="module")
def nlp(default_nlp: spacy.Language) -> spacy.Language:
    return default_nlp


def test_scansion_meter_and_macrons_are_frozen_records(nlp: spacy.Language) -> None:
    doc = nlp(VERSE)
    [verse] = doc._.verses
    scan, meter = verse._.scansion, verse._.meter
    assert isinstance(scan, Scansion) and isinstance(meter, Meter)
    assert scan.decoder == meter.decoder == "lattice"
    assert len(scan.syllables) == len(scan.pattern) and set(scan.pattern) <= {"–", "⏑"}
    assert meter.name == "dactylic_hexameter" and meter.used and meter.cost is not None
    # the research strings hold the lattice's own quantities (issue 41: they agree with the pattern)
    assert len(scan.labels) == len(doc._.stoicheia.planes) and scan.bracketed and scan.macronized
    assert "".join("–" if lab == 1 else "⏑" for lab in scan.labels if lab) == scan.pattern
    assert doc._.macrons and all(isinstance(m, Macron) for m in doc._.macrons)
    assert {unicodedata.normalize("NFD", doc.text[m.offset])[0].lower() for m in doc._.macrons} <= set("αιυ")
    with pytest.raises(dataclasses.FrozenInstanceError):
        scan.pattern = ""  # type: ignore[misc]
    data = json.loads(json.dumps({"scansion": scan.to_dict(), "meter": meter.to_dict()}, ensure_ascii=False))
    assert set(data["scansion"]) == {"syllables", "pattern", "decoder", "synizesis", "labels", "bracketed",
                                     "macronized"}
    assert Scansion.from_dict(data["scansion"]) == scan and Meter.from_dict(data["meter"]) == meter
    assert Macron.from_dict(doc._.macrons[0].to_dict()) == doc._.macrons[0]


def test_a_doc_with_scan_records_round_trips_through_docbin(nlp: spacy.Language) -> None:
    doc = nlp(VERSE)
    copy = Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
    copy._.macrons = doc._.macrons
    copy[:]._.scansion, copy[:]._.meter = doc._.verses[0]._.scansion, doc._.verses[0]._.meter
    [back] = DocBin(store_user_data=True, docs=[copy]).get_docs(nlp.vocab)
    assert back._.macrons == doc._.macrons
    assert back[:]._.scansion == doc._.verses[0]._.scansion and back[:]._.meter == doc._.verses[0]._.meter
