"""The shipped zone index of our ten folds (``assets/which_model/folds.npz``, built from the full
corpus run): its metadata and measured rate, and the Iliad's first line, which the run's fold test
sets hold in zone 7 (Iliad 1) and zone 1 (quoted by Aelius Aristides and a glaux text): found
there (no false negative) and claimed firmly for exactly the folds holding those zones out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stoicheia_spacy.provenance import which_model
from stoicheia_spacy.provenance.which import default_zone_index

ILIAD = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"


@pytest.fixture(scope="module")
def zone_index() -> Path:
    path = default_zone_index()
    assert path is not None, "the zone index ships in assets/which_model/folds.npz"
    return path


def test_fold_index_metadata(zone_index: Path) -> None:
    meta = json.loads((zone_index.parent / "folds.json").read_text(encoding="utf-8"))
    assert meta["kind"] == "zones" and meta["n"] == 5 and meta["zones"] == 10
    assert meta["records"] == 2771 and meta["words"] == 18_830_341
    assert zone_index.stat().st_size <= 16_000_000
    assert sum(p.stat().st_size for p in zone_index.parent.iterdir()) <= 24_000_000
    assert meta["fp_rate"] < 0.01
    measured = json.loads((zone_index.parent / "folds_fp.json").read_text(encoding="utf-8"))
    assert measured["stated_fp_rate"] == pytest.approx(meta["fp_rate"])
    assert abs(measured["measured_fp_rate"] - meta["fp_rate"]) < 0.15 * meta["fp_rate"]


def test_iliad_opening_is_found_in_its_zones(zone_index: Path) -> None:
    answer = which_model(ILIAD, zones=zone_index)
    assert answer.folds is not None
    assert {"1", "7"} <= set(answer.folds["zones"])  # a Bloom filter has no false negatives
    fp = answer.folds["fp_rate"]
    assert fp < 0.01
    folds = {f["fold"]: f for f in answer.folds["never_read"]}
    true_folds = {0, 1, 6, 7}  # test or dev zone 1 or 7
    assert true_folds <= set(folds)
    for k in true_folds:
        assert folds[k]["claim"] == "never read" and folds[k]["p_false"] <= fp
    # a fold that only a false-positive zone would name is never claimed firmly at p false > 1 %
    assert all(f["claim"] != "never read" or f["p_false"] <= 0.01 for f in folds.values())
    firm = {k for k, f in folds.items() if f["claim"] == "never read"}
    assert firm == true_folds, f"false zones claimed: {sorted(set(answer.folds['zones']) - {'1', '7'})}"


def test_a_longer_passage_narrows_the_claim_to_iliad_1(zone_index: Path) -> None:
    """Seven 5-grams: only zone 7 (Iliad 1) holds all of them; the quotation in zone 1 holds the
    first, so folds 0 and 1 are only partly held out."""
    answer = which_model(ILIAD + " οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε", zones=zone_index)
    folds = {f["fold"]: f for f in answer.folds["never_read"]}
    assert {k for k, f in folds.items() if f["claim"] == "never read"} == {6, 7}
    assert folds[7]["p_false"] < 1e-12
    assert folds[0]["claim"] == folds[1]["claim"] == "partly held out"
