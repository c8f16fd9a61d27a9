"""The restorer's typed results on real Greek through the default pipeline: frozen records, one
JSON shape (``to_dict``), rebuilt by ``from_dict`` and kept by ``DocBin`` / ``Doc.to_bytes``."""

from __future__ import annotations

import dataclasses
import json

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from stoicheia_spacy.records import RECORD_KEY
from stoicheia_spacy.restore.results import Candidate, Restoration

BOND = "ἐὰν δὲ μὴ ἀποδῶ, ἀποτείσω [.3] ἐπίτιμον"


@pytest.fixture(scope="module")
def nlp(default_nlp: spacy.Language) -> spacy.Language:
    return default_nlp  # installed by make test (make default-package)


@pytest.fixture(scope="module")
def bond(nlp: spacy.Language) -> Doc:
    return nlp(BOND)


def test_a_gap_is_a_frozen_restoration_of_frozen_candidates(bond: Doc) -> None:
    [gap] = bond._.restorations
    assert isinstance(gap, Restoration) and all(isinstance(c, Candidate) for c in gap.candidates)
    assert bond.text[gap.start:gap.end] == "[.3]" and gap.gap_index == 0
    assert (gap.min_width, gap.max_width, gap.width, gap.status) == (3, 3, 3, "restored")
    assert gap.top is gap.candidates[0] and gap.top.text == "σοι"
    assert [c.accented for c in gap.candidates[:3]] == ["σοι", "καὶ", "μὲν"]  # the accenting service
    assert all(c.accented is None for c in gap.candidates[5:])  # the accentuator's `candidates` = 5
    assert isinstance(gap.candidates, tuple) and gap.top.parallels == ()
    shares = [c.share for c in gap.candidates]
    assert shares == sorted(shares, reverse=True) and sum(shares) == pytest.approx(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        gap.confidence = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        gap.top.text = "και"  # type: ignore[misc]
    assert not hasattr(gap, "__dict__")  # slots


def test_to_dict_is_json_and_from_dict_rebuilds_the_record(bond: Doc) -> None:
    [gap] = bond._.restorations
    data = json.loads(json.dumps(gap.to_dict(), ensure_ascii=False))
    assert list(data) == ["start", "end", "gap_index", "min_width", "max_width", "kind", "status", "abstain",
                          "confidence", "confident", "candidates"]
    assert data["candidates"][0] == {"text": "σοι", "score": gap.top.score, "share": gap.top.share,
                                     "accented": "σοι", "parallels": []}
    assert Restoration.from_dict(data) == gap


def test_a_doc_with_restorations_round_trips_through_docbin_and_to_bytes(nlp: spacy.Language, bond: Doc) -> None:
    doc = Doc(nlp.vocab, words=[t.text for t in bond], spaces=[bool(t.whitespace_) for t in bond])
    doc._.restorations = bond._.restorations
    blob = doc.to_bytes()
    assert RECORD_KEY.encode() in blob  # written as tagged dicts by the msgpack encoder
    assert Doc(nlp.vocab).from_bytes(blob)._.restorations == bond._.restorations
    docbin = DocBin(store_user_data=True, docs=[doc])
    [back] = DocBin().from_bytes(docbin.to_bytes()).get_docs(nlp.vocab)
    assert back._.restorations == bond._.restorations
    assert isinstance(back._.restorations[0].candidates, tuple)
    assert back._.restored == bond._.restored
