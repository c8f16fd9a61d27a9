"""projects/restore/scripts/insc_eval.py: the strongest pure n-gram arm (``ngram8_pair``, Run 16)
ranks only the two 8-gram pairs' own beams by their scores, weights fitted per bucket; the
done-when compares the default with it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "projects" / "restore" / "scripts"


@pytest.fixture(scope="module")
def ev():
    sys.path.insert(0, str(SCRIPTS))
    try:
        return __import__("insc_eval")
    finally:
        sys.path.remove(str(SCRIPTS))


def _row(ev, gold: str, texts: list[str], feats: list[dict], beam: list[bool], pair: list[bool]) -> dict:
    F = np.array([[f.get(k, 0.0) for k in ev.FEATURES] for f in feats])
    return {"L": len(gold), "texts": texts, "F": F, "cer": np.array([0.0 if t == gold else 1.0 for t in texts]),
            "ok": np.array([t == gold for t in texts]), "run13": np.array(beam), "beam": np.array(beam),
            "pair": np.array(pair)}


def test_pair_arm_weighs_the_inscription_8gram_and_ranks_the_beams_only(ev) -> None:
    # βουλῇ [καὶ] τῷ δήμῳ: the general 8-gram prefers ἐπὶ, the inscriptions' own prefers καὶ;
    # a third text only the index proposes (outside both beams) scores best on context
    records, rows = [], []
    for gold in ("καὶ", "τῷ", "ὁ"):
        wrong = {"καὶ": "ἐπὶ", "τῷ": "τοῦ", "ὁ": "ἡ"}[gold]
        texts = [wrong, gold, "δήμου"]
        feats = [{"fwd": -5.0, "rev": -5.0, "ifwd": -9.0, "irev": -9.0},
                 {"fwd": -6.0, "rev": -6.0, "ifwd": -2.0, "irev": -2.5},
                 {"fwd": -1.0, "rev": -1.0, "ifwd": -1.0, "irev": -1.0, "ctx": 20.0}]
        rows.append(_row(ev, gold, texts, feats, [True, False, False], [True, True, False]))
        records.append({"L": len(gold), "gold": gold, "id": gold, "start": 0, "text": gold})
    w = ev.fit_pair(rows)
    assert set(w) == {"rev", "ifwd", "irev"} and w["ifwd"] + w["irev"] > 0
    tops = ev.arm_tops(records, rows, {"default": w}, "pair")
    assert [t[0] for t in tops] == ["καὶ", "τῷ", "ὁ"]
    assert all("δήμου" not in t for t in tops)  # never a candidate outside the two beams
    # the general pair alone keeps the wrong readings
    assert [t[0] for t in ev.arm_tops(records, rows, {"default": {"rev": 1.0}}, "beam")] == ["ἐπὶ", "τοῦ", "ἡ"]


def test_done_when_against_each_ngram_arm(ev) -> None:
    def o(cer: float, top1: float, top20: float) -> dict:
        return {"overall": {"cer": cer, "top1": top1, "top20": top20}}

    split = {"run14": o(40.0, 43.0, 59.0), "ngram8": o(52.0, 31.0, 45.0), "ngram8_pair": o(43.0, 40.0, 57.0),
             "mcnemar_top1": {"run14_vs_ngram8": {"run14_only": 117, "other_only": 6, "p": 1e-28},
                              "run14_vs_ngram8_pair": {"run14_only": 40, "other_only": 12, "p": 1e-4}}}
    d = ev.done_when(split)
    assert d["ngram8"]["met"] and not d["ngram8_pair"]["met"]
    assert d["ngram8_pair"]["cer_below"] == pytest.approx(3.0) and d["ngram8_pair"]["top20_above"] == pytest.approx(2.0)


def test_hidden_eval_fits_the_word_check_beside_run15s_weights() -> None:
    sys.path.insert(0, str(SCRIPTS))
    try:
        hidden = __import__("hidden_eval")
    finally:
        sys.path.remove(str(SCRIPTS))

    def cand(text: str, fwd: float, gold: str, oov: int, known: int) -> dict:
        return {"text": text, "w": len(text), "fwd": fwd, "rev": fwd, "beam": True, "ctx": 0, "docs": 0,
                "cer": 0.0 if text == gold else 1.0, "ok": text == gold, "oov": oov, "known": known}

    # ὁμολογῶ πεπρα[...] σοι: the n-gram prefers a fill that leaves πεπρα... no word; the word check does not
    rows = [{"cands": [cand("καμεν", -10.0, "κεναι", 1, 0), cand("κεναι", -11.0, "κεναι", 0, 1)]} for _ in range(3)]
    table = hidden.Table(rows)
    wt = {"rev": 1.0, "a": 0.0, "b": 0.0, "n": 0.0, "bias": [0.0] * hidden.MAX_LETTERS}
    assert table.top1(table.keys(1.0, 0.0, 0.0, 0.0))[1] == 0.0
    ww = hidden.fit_words(table, wt)
    assert ww["oov"] < 0 or ww["known"] > 0
    assert table.top1(table.keys(1.0, 0.0, 0.0, ww["n"], None, ww["oov"], ww["known"]))[1] == 100.0
