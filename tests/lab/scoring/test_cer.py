"""Restoration scoring: CER with sigma folding, top-1/top-k, per-length breakdown."""

from __future__ import annotations

import unicodedata

import pytest
from stoicheia_lab.scoring.cer import RestorationSample, cer, fold_sigma, score_restorations

from stoicheia_spacy.errors import ScoringError


def test_sigma_folding() -> None:
    assert fold_sigma("λόγος ϲωτῆρϲ ΚΛΕΟϹ") == "λόγοσ σωτῆρσ ΚΛΕΟΣ"
    assert cer("λογοϲ", "λογος") == 0.0
    assert cer("λογοσ", "λογος") == 0.0


def test_cer_is_levenshtein_over_gold_length() -> None:
    assert cer("θεοῖς", "θεοῖσιν") == pytest.approx(2 / 7)  # two deletions
    assert cer("καὶ", "καὶ") == 0.0
    assert cer("", "δῆμος") == 1.0
    assert cer("ἡ βουλὴ καὶ", "βουλή") == pytest.approx(7 / 5)  # can exceed 1
    # accents count; spaces count
    assert cer("τον", "τὸν") == pytest.approx(1 / 3)
    assert cer("καιτο", "καὶ τὸ") > 0


def test_nfc_and_nfd_inputs_agree() -> None:
    gold = "ἀνέθηκεν"
    assert cer(unicodedata.normalize("NFD", gold), gold) == 0.0


def test_corpus_scores_and_per_length() -> None:
    samples: list[RestorationSample | tuple[str, list[str]]] = [
        RestorationSample("ἀνέθηκε", ["ἀνέθηκε", "ἀνέθηκεν"]),  # top-1 hit
        RestorationSample("δῆμος", ["δῆμον", "δῆμοϲ"]),  # top-2 hit after sigma folding
        RestorationSample("καὶ", ["τοῦ", "τῆς", "καί"]),  # acute != grave: no hit
        ("ἡ βουλὴ", ["ἡ βουλή", "ἡ βουλὴ"]),  # plain tuples work
    ]
    scores = score_restorations(samples, k=20)
    assert scores.n == 4
    assert scores.top1 == pytest.approx(1 / 4)
    assert scores.topk == pytest.approx(3 / 4)
    per_gap = [0.0, 1 / 5, 3 / 3, 1 / 7]
    assert scores.cer == pytest.approx(sum(per_gap) / 4)
    assert scores.cer_micro == pytest.approx((0 + 1 + 3 + 1) / (7 + 5 + 3 + 7))
    assert set(scores.per_length) == {3, 5, 7}
    assert scores.per_length[7].n == 2 and scores.per_length[7].top1 == pytest.approx(0.5)
    assert scores.per_length[5].topk == 1.0 and scores.per_length[5].top1 == 0.0
    # k truncates the candidate lists
    assert score_restorations(samples, k=1).topk == pytest.approx(1 / 4)
    assert scores.as_dict()["top20"] == pytest.approx(75.0)


def test_explicit_gap_length_and_empty_candidates() -> None:
    scores = score_restorations([RestorationSample("ος", [], length=10)])
    assert scores.cer == 1.0 and scores.top1 == 0.0 and set(scores.per_length) == {10}


def test_bad_inputs_raise() -> None:
    with pytest.raises(ScoringError):
        cer("α", "")
    with pytest.raises(ScoringError):
        score_restorations([])
    with pytest.raises(ScoringError):
        score_restorations([("λόγος", "λόγος")])  # a string, not a list of candidates
    with pytest.raises(ScoringError):
        score_restorations([("λόγος", ["λόγος"])], k=0)
    with pytest.raises(ScoringError):
        fold_sigma(b"logos")  # type: ignore[arg-type]
