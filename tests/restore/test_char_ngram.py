"""Interpolated Kneser-Ney character LM: proper distributions and real predictive power."""

from __future__ import annotations

import numpy as np
import pytest
from stoicheia_lab.bench.quality import symbols

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.restore.char_ngram import N_SYMBOLS, SPACE, UNK, CharNgramLM

TRAIN = (
    "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη, ἐπεὶ Τροίης ἱερὸν πτολίεθρον ἔπερσε· "
    "πολλῶν δ’ ἀνθρώπων ἴδεν ἄστεα καὶ νόον ἔγνω, πολλὰ δ’ ὅ γ’ ἐν πόντῳ πάθεν ἄλγεα ὃν κατὰ θυμόν, "
    "ἀρνύμενος ἥν τε ψυχὴν καὶ νόστον ἑταίρων. ἀλλ’ οὐδ’ ὣς ἑτάρους ἐρρύσατο, ἱέμενός περ· "
) * 20


@pytest.fixture(scope="module")
def lm() -> CharNgramLM:
    return CharNgramLM(order=5).fit([symbols(encode_planes(TRAIN))[0]])


def test_conditionals_sum_to_one(lm: CharNgramLM) -> None:
    hist = np.array([[A.ALPHABET.index(c) for c in "πολλ"], [SPACE, SPACE, 0, 1], [5, 5, 5, 5]])
    for row in hist:
        p = np.exp(lm.logprob(np.repeat(row[None], N_SYMBOLS - 1, 0), np.arange(N_SYMBOLS - 1)))
        assert p.sum() == pytest.approx(1.0, abs=1e-9)


def test_seen_context_predicts_the_next_letter(lm: CharNgramLM) -> None:
    hist = np.array([[A.ALPHABET.index(c) for c in "πολλ"]])
    p = np.exp(lm.logprob(np.repeat(hist, N_SYMBOLS - 1, 0), np.arange(N_SYMBOLS - 1)))
    assert int(np.argmax(p)) == A.ALPHABET.index("α")


def test_masked_letters_are_recovered_from_both_sides(lm: CharNgramLM) -> None:
    planes = encode_planes("πολλὰ δ’ ὅ γ’ ἐν πόντῳ πάθεν ἄλγεα ὃν κατὰ θυμόν")
    masked = np.zeros(len(planes), dtype=bool)
    masked[[2, 9, 15, 22]] = True
    seq, pos = symbols(planes, masked)
    assert (seq[pos[masked]] == UNK).all()
    logp = lm.masked_logprobs(seq, pos[masked])
    assert np.allclose(np.exp(logp).sum(axis=1), 1.0)
    assert (logp.argmax(axis=1) == planes.letters[masked]).mean() >= 0.75


def test_unknown_history_backs_off_instead_of_failing(lm: CharNgramLM) -> None:
    hist = np.array([[UNK, UNK, UNK, UNK]])
    p = np.exp(lm.logprob(np.where(hist == UNK, SPACE, hist), np.array([0]), np.array([0])))
    assert 0.0 < float(p[0]) < 1.0
