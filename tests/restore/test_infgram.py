"""The parallels index's own candidates (the "∞-gram", Run 13): letters read between the longest
matches of a gap's context, on real papyri (skipped where the lexicon data package with its
parallels index is not installed), and the settings that turn it on."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.parallels.index import ParallelIndex, letters_of, query_letters
from stoicheia_spacy.parallels.search import leave_out
from stoicheia_spacy.restore import build_queries
from stoicheia_spacy.restore.combine import restore_combined
from stoicheia_spacy.restore.infgram import (
    Evidence,
    final_sigma,
    gap_evidence,
    infgram_features,
    occurrences,
)
from stoicheia_spacy.restore.parallels import CandidateParallels
from stoicheia_spacy.restore.results import Candidate, Restoration
from stoicheia_spacy.restore.settings import RestorerSettings
from stoicheia_spacy.restore.widths import WidthPrior

SALE = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"
# a bank receipt (bgu.6.1374, a dev sample): the 8-gram alone reads "το βασιλι"
BANK = "τέτακται ἐπὶ τὴν ἐν Ἀπόλλωνος πόλει τῇ μεγάλῃ τράπε[.9]κῆς τοῦ αὐτοῦ ἔτους Ποῆρις Ἁρθώτου"
WEIGHTS = {"default": [0.8, 8.0], "1-3": [0.3, 8.0], "4-6": [1.6, 4.0], "7-10": [1.2, 4.0]}


def query(text: str):
    [target] = build_queries(parse_gaps(text))
    return target.query


def test_the_perfect_infinitive_is_read_from_other_sales(index: ParallelIndex) -> None:
    found = gap_evidence(Evidence(index, WEIGHTS), query(SALE))
    best = max(found, key=lambda t: (found[t].context, found[t].docs))
    assert best == "κεναι"
    assert found["κεναι"].docs >= 3 and found["κεναι"].context >= 20  # a whole formula, in many papyri
    assert all(len(t) == 5 for t in found)  # every candidate fills the known width exactly


def test_a_left_out_document_is_never_read(index: ParallelIndex) -> None:
    left, right = letters_of("ὁμολογῶ πεπρα"), letters_of("σοι κάμηλον θήλειαν")
    texts, lm, rm, docs = occurrences(index, left, right, 5, space_before=True, space_after=False)
    holders = {int(d) for t, d in zip(texts, docs.tolist(), strict=True) if t == "κεναι"}
    assert holders
    again, _, _, kept = occurrences(index, left, right, 5, space_before=True, space_after=False,
                                    exclude=holders)
    assert "κεναι" not in again and not set(kept.tolist()) & holders


def test_word_breaks_count_in_the_width_and_sigma_is_final_before_one() -> None:
    assert final_sigma("νοσ αυτοσ", True) == "νος αυτος"
    assert final_sigma("ροσ", False) == "ροσ"  # a gap that ends inside a word keeps σ
    feats = infgram_features(["και", "και", "μεν"], np.array([9, 3, 2]), np.array([4, 8, 1]), np.array([1, 2, 3]))
    assert feats["και"].context == 13 and feats["και"].docs == 1 and feats["και"].occurrences == 2
    assert feats["μεν"].docs == 0


def test_the_index_restores_a_bank_formula_the_8gram_misses(index: ParallelIndex, kn) -> None:
    settings = RestorerSettings(kn_weights={"default": [0.0, 1.0, 1.0, 0.0]})
    q = query(BANK)
    prior = WidthPrior("total", -0.7, ())
    [plain] = restore_combined(None, [q], settings, kn, prior=prior, temperature=5.0)
    [better] = restore_combined(None, [q], settings, kn, prior=prior, temperature=5.0,
                                evidence=[Evidence(index, WEIGHTS)])
    assert plain[0].text != "ζαν νιτρι"  # τράπεζαν νιτρικῆς: the bank of the natron tax
    assert better[0].text == "ζαν νιτρι"


def test_infgram_weights_are_validated() -> None:
    ok = RestorerSettings(infgram_weights={"papyrus": WEIGHTS})
    assert ok.to_dict()["infgram_weights"]["papyrus"]["4-6"] == [1.6, 4.0]
    for bad in ({"papyri": WEIGHTS}, {"papyrus": {"default": [1.0]}}, {"papyrus": {"default": [-1.0, 0.0]}}):
        with pytest.raises(ConfigError):
            dataclasses.replace(ok, infgram_weights=bad)


def test_the_rerank_leaves_a_gap_the_index_already_scored_in_its_order(index: ParallelIndex) -> None:
    line = SALE
    start = line.index("[.5]")
    # καμεν first, as a combination put it; κεναι, attested in other sales, would win the rerank
    cands = (Candidate("καμεν", -22.6, 0.9), Candidate("κεναι", -35.5, 0.03), Candidate("γμενα", -38.9, 0.01))
    gap = Restoration(start=start, end=start + 4, gap_index=0, min_width=5, max_width=5, kind="lost",
                      candidates=cands, confidence=0.9, confident=True, abstain=False)
    service = CandidateParallels(rerank=1000.0, candidates=3)
    [[kept]] = service([line], [[gap]], scored=[True])
    assert [c.text for c in kept.candidates] == ["καμεν", "κεναι", "γμενα"] and kept.confident
    exclude = leave_out(index, query_letters(line))
    counts = [a.attested for a in service.attestations(index, line, gap, exclude)]
    assert counts[1] > counts[0]  # πεπρακέναι σοι κάμηλον: attested in other sales
    [[moved]] = service([line], [[gap]], scored=[False])
    order = sorted(range(3), key=lambda i: -(cands[i].score + 1000.0 * np.log1p(counts[i])))
    assert [c.text for c in moved.candidates] == [cands[i].text for i in order] and order[0] == 1
