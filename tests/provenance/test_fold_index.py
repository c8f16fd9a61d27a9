"""The shipped zone index of our ten folds (``assets/which_model/folds.npz``, built from the full
corpus run): its metadata, and no false negative for the Iliad's first line, which the run's
fold test sets hold in zone 7 (Iliad 1) and zone 1 (quoted by Aelius Aristides and a glaux text)."""

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
    if path is None:
        pytest.skip("no shipped zone index (assets/which_model/folds.npz)")
    return path


def test_fold_index_metadata(zone_index: Path) -> None:
    meta = json.loads((zone_index.parent / "folds.json").read_text(encoding="utf-8"))
    assert meta["kind"] == "zones" and meta["n"] == 5 and meta["zones"] == 10
    assert meta["records"] == 2771 and meta["words"] == 18_830_341
    assert zone_index.stat().st_size < 8_000_000
    measured = json.loads((zone_index.parent / "folds_fp.json").read_text(encoding="utf-8"))
    assert abs(measured["measured_fp_rate"] - meta["fp_rate"]) < 0.005


def test_iliad_opening_is_found_in_its_zones(zone_index: Path) -> None:
    answer = which_model(ILIAD, zones=zone_index)
    assert answer.folds is not None
    assert {"1", "7"} <= set(answer.folds["zones"])  # a Bloom filter has no false negatives
    never = {f["fold"] for f in answer.folds["never_read"]}
    assert {0, 1, 6, 7} <= never  # test or dev zone 1 or 7
    assert answer.folds["fp_rate"] < 0.08
