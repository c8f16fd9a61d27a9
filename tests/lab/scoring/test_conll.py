"""CoNLL-2018-style scorer on hand-made and real UD Ancient Greek sentences."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from stoicheia_lab.scoring.conll import METRICS, format_scores, read_conllu, score_conll

from stoicheia_spacy.errors import ScoringError


def word(form: str, upos: str, xpos: str, feats: str, lemma: str, head: int, deprel: str) -> dict:
    return {
        "form": form,
        "upos": upos,
        "xpos": xpos,
        "feats": feats,
        "lemma": lemma,
        "head": head,
        "deprel": deprel,
    }


# ὁ ἄνθρωπος λέγει τὸν λόγον .
GOLD = [
    [
        word("ὁ", "DET", "l-s---mn-", "Case=Nom|Gender=Masc|Number=Sing", "ὁ", 2, "det"),
        word(
            "ἄνθρωπος",
            "NOUN",
            "n-s---mn-",
            "Case=Nom|Gender=Masc|Number=Sing",
            "ἄνθρωπος",
            3,
            "nsubj",
        ),
        word(
            "λέγει",
            "VERB",
            "v3spia---",
            "Mood=Ind|Number=Sing|Person=3|Tense=Pres|Voice=Act",
            "λέγω",
            0,
            "root",
        ),
        word("τὸν", "DET", "l-s---ma-", "Case=Acc|Gender=Masc|Number=Sing", "ὁ", 5, "det"),
        word("λόγον", "NOUN", "n-s---ma-", "Case=Acc|Gender=Masc|Number=Sing", "λόγος", 3, "obj"),
        word(".", "PUNCT", "u--------", "_", ".", 3, "punct"),
    ]
]


def test_perfect_prediction() -> None:
    scores = score_conll(GOLD, copy.deepcopy(GOLD))
    assert set(scores) == set(METRICS)
    assert all(s.accuracy == 1.0 for s in scores.values())
    assert scores["UAS"].total == 6 and scores["CLAS"].total == 3  # nsubj, root, obj


def test_counted_errors() -> None:
    pred = copy.deepcopy(GOLD)
    pred[0][1]["feats"] = "Number=Sing|Gender=Masc|Case=Nom"  # same set, other order: right
    pred[0][4]["head"] = 2  # λόγον attached to the noun: UAS, LAS, CLAS wrong
    pred[0][3]["deprel"] = "det:poss"  # subtype ignored: LAS still right
    pred[0][2]["lemma"] = "λέγει"  # lemma wrong
    pred[0][0]["xpos"] = "p-s---mn-"  # XPOS and AllTags wrong
    pred[0][5]["upos"] = "X"  # punctuation UPOS wrong
    scores = score_conll(GOLD, pred)
    assert scores["UFeats"].correct == 6
    assert scores["UAS"].correct == 5 and scores["LAS"].correct == 5
    assert scores["CLAS"].correct == 2 and scores["CLAS"].total == 3
    assert scores["Lemma"].correct == 5
    assert scores["XPOS"].correct == 5 and scores["UPOS"].correct == 5
    assert scores["AllTags"].correct == 4
    strict = score_conll(GOLD, pred, strip_subtypes=False)
    assert strict["LAS"].correct == 4
    no_punct = score_conll(GOLD, pred, exclude_punct=True)
    assert no_punct["UPOS"].total == 5 and no_punct["UPOS"].correct == 5
    assert "UAS" in format_scores(scores)


def test_gold_underscore_lemma_counts_as_matched() -> None:
    gold = copy.deepcopy(GOLD)
    gold[0][2]["lemma"] = "_"
    pred = copy.deepcopy(GOLD)
    pred[0][2]["lemma"] = "λεγ"
    assert score_conll(gold, pred)["Lemma"].correct == 6


def test_mismatched_tokenisation_raises() -> None:
    pred = copy.deepcopy(GOLD)
    pred[0][1]["form"] = "ἄνθρωπον"
    with pytest.raises(ScoringError):
        score_conll(GOLD, pred)
    with pytest.raises(ScoringError):
        score_conll(GOLD, [GOLD[0][:-1]])
    with pytest.raises(ScoringError):
        score_conll(GOLD, GOLD * 2)
    bad = copy.deepcopy(GOLD)
    bad[0][0]["head"] = "_"
    with pytest.raises(ScoringError):
        score_conll(GOLD, bad)


def test_real_ud_perseus_sentences(shared_data: Path) -> None:
    path = shared_data / "ud" / "UD_Ancient_Greek-Perseus" / "grc_perseus-ud-test.conllu.xz"
    gold = read_conllu(path)[:200]
    assert len(gold) == 200 and any("ἐ" in w["form"] for s in gold for w in s)
    n_words = sum(len(s) for s in gold)
    assert score_conll(gold, gold)["LAS"].correct == n_words
    # shift every head of non-root words: UAS drops by exactly the changed words
    pred = copy.deepcopy(gold)
    changed = 0
    for sent in pred:
        for w in sent:
            if w["head"] not in (0, len(sent)):
                w["head"] += 1
                changed += 1
    scores = score_conll(gold, pred)
    assert scores["UAS"].correct == n_words - changed
    assert scores["UPOS"].correct == n_words
    # feats arrive as dicts from conllu; as strings they score the same
    as_text = copy.deepcopy(gold)
    for sent in as_text:
        for w in sent:
            w["feats"] = "|".join(f"{k}={v}" for k, v in (w["feats"] or {}).items()) or "_"
    assert score_conll(gold, as_text)["UFeats"].correct == n_words


def test_unreadable_file_raises(tmp_path: Path) -> None:
    with pytest.raises(ScoringError):
        read_conllu(tmp_path / "missing.conllu")
