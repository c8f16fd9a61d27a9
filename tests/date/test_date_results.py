"""The dater's and attributor's results are frozen records with one JSON shape."""

from __future__ import annotations

import dataclasses
import json

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from stoicheia_spacy.date.dating import DateEstimate as ReExported
from stoicheia_spacy.date.results import DateEstimate, LabelEstimate

#: BGU I 100, a camel sale dated AD 159 (the README's example).
SALE = ("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν. "
        "ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ κυρίου Τῦβι η.")


def test_the_date_of_a_papyrus_is_a_frozen_record_that_round_trips() -> None:
    from stoicheia_spacy.date.dater import packaged_weights

    nlp = spacy.load("grc_stoicheia_doc_clean", exclude=["stoicheia_restorer", "stoicheia_scanner"])
    nlp.get_pipe("stoicheia_dater").from_disk(packaged_weights())  # the checkout's fit (with its register)
    date = nlp(SALE)._.date
    assert isinstance(date, DateEstimate) and DateEstimate is ReExported
    assert str(date) == "150 CE (90% interval 0 CE – 380 CE, widened x2.0 for a short text)"
    assert date.applicable and date.estimator == "weighted median" and date.widened == 2.0
    assert isinstance(date.histogram, tuple) and sum(p for _, p in date.histogram) == pytest.approx(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        date.mean = 0.0  # type: ignore[misc]
    data = json.loads(json.dumps(date.to_dict()))
    assert set(data) == {"weighted_median", "low", "high", "level", "histogram", "estimator", "applicable",
                         "reason", "documentary", "widened"} and DateEstimate.from_dict(data) == date
    doc = Doc(nlp.vocab, words=["ἔτους"])
    doc._.date = date
    [back] = DocBin(store_user_data=True, docs=[doc]).get_docs(nlp.vocab)
    assert back._.date == date and str(back._.date) == str(date)


def test_a_label_estimate_is_frozen_and_json() -> None:
    label = LabelEstimate("Attic", 0.75, {"Attic": 0.75, "Ionic": 0.25})
    with pytest.raises(dataclasses.FrozenInstanceError):
        label.label = "Ionic"  # type: ignore[misc]
    assert json.loads(json.dumps(label.to_dict())) == {"label": "Attic", "probability": 0.75,
                                                       "probabilities": {"Attic": 0.75, "Ionic": 0.25}}
    assert LabelEstimate.from_dict(label.to_dict()) == label and str(label) == "Attic (75%)"
