"""Viterbi over metre automata: exact against brute-force enumeration; gating; detection."""

from __future__ import annotations

import numpy as np
import pytest

from stoicheia_spacy.errors import DecodingError
from stoicheia_spacy.scan.meters import Meter, load_meters, meter_from_dict
from stoicheia_spacy.scan.viterbi import (
    _viterbi_padded,
    detect_meter,
    gated_decode,
    scannable,
    syllable_scores,
    viterbi,
    viterbi_batch,
)


@pytest.fixture(scope="module")
def meters() -> dict[str, Meter]:
    return load_meters()


def log_softmax(x: np.ndarray) -> np.ndarray:
    return x - np.logaddexp(x[:, :1], x[:, 1:])


def brute_force(logp: np.ndarray, meter: Meter) -> float:
    n = logp.shape[0]
    strings = (np.arange(2**n)[:, None] >> np.arange(n - 1, -1, -1)) & 1
    ok = meter.accepts_batch(strings)
    if not ok.any():
        return float("inf")
    costs = -logp[np.arange(n), strings[ok]].sum(axis=1)
    return float(costs.min())


def weights_logp(weights: str, confidence: float = 0.9) -> np.ndarray:
    p = np.array(
        [
            [confidence, 1 - confidence] if w == "H" else [1 - confidence, confidence]
            for w in weights
        ]
    )
    return np.log(p)


@pytest.mark.parametrize(
    "name",
    [
        "dactylic_hexameter",
        "iambic_trimeter_resolved",
        "anapaestic_tetrameter_catalectic",
        "elegiac_pentameter",
    ],
)
def test_exact_against_brute_force(meters: dict[str, Meter], name: str) -> None:
    rng = np.random.default_rng(7)
    meter = meters[name]
    for n in (12, 13, 14, 15, 16):
        for _ in range(3):
            logp = log_softmax(rng.normal(scale=2.0, size=(n, 2)))
            result = viterbi(logp, meter)
            expected = brute_force(logp, meter)
            if np.isinf(expected):
                assert result.path is None and np.isinf(result.cost)
                continue
            assert result.path is not None and len(result.path) == n
            assert meter.accepts(result.path)
            assert result.cost == pytest.approx(expected, abs=1e-9)
            path_cost = -sum(logp[i, "HL".index(w)] for i, w in enumerate(result.path))
            assert result.cost == pytest.approx(path_cost, abs=1e-9)
            assert result.excess >= -1e-12


def test_forbidden_weights_are_respected() -> None:
    meter = meter_from_dict({"name": "t", "pattern": "(HL|LH)X"})
    logp = np.log(np.array([[0.9, 0.1], [0.9, 0.1], [0.5, 0.5]]))
    logp[0, 0] = -np.inf  # the first syllable cannot be heavy
    result = viterbi(logp, meter)
    assert result.path == "LHH"
    assert result.argmax_path == "LHH"  # argmax also avoids -inf


def test_iliad_1_1_recovered_from_noisy_scores(meters: dict[str, Meter]) -> None:
    gold = "HLLHLLHHHLLHLLHH"  # μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος
    logp = weights_logp(gold)
    noisy = logp.copy()
    noisy[7] = np.log([0.4, 0.6])  # Πη misread as light, mildly
    result = viterbi(noisy, meters["dactylic_hexameter"])
    assert result.argmax_path != gold
    assert result.path == gold
    gated = gated_decode(noisy, meters["dactylic_hexameter"], theta=0.1)
    assert gated.used_viterbi and gated.path == gold


def test_gate_keeps_argmax_when_metre_costs_too_much(meters: dict[str, Meter]) -> None:
    # a confidently non-hexametric line: the Viterbi path is far more expensive
    logp = weights_logp("LHLHLHLHLHLHLHLH", confidence=0.99)
    gated = gated_decode(logp, meters["dactylic_hexameter"], theta=0.1)
    assert not gated.used_viterbi
    assert gated.path == "LHLHLHLHLHLHLHLH"
    assert gated.viterbi.path is not None and gated.viterbi.excess > 0.1 * 16
    # a huge theta always accepts the metre; counting per letter widens the gate
    assert gated_decode(logp, meters["dactylic_hexameter"], theta=100.0).used_viterbi
    per_syllable = gated.viterbi.excess / 16
    theta = per_syllable * 0.5
    assert not gated_decode(logp, meters["dactylic_hexameter"], theta=theta).used_viterbi
    assert gated_decode(logp, meters["dactylic_hexameter"], theta=theta, n_units=40).used_viterbi


def test_gate_when_no_path_of_that_length(meters: dict[str, Meter]) -> None:
    logp = weights_logp("HLH")
    gated = gated_decode(logp, meters["dactylic_hexameter"])
    assert gated.viterbi.path is None and not gated.used_viterbi and gated.path == "HLH"


def test_detect_meter_ranks_the_right_metre_first(meters: dict[str, Meter]) -> None:
    lines = {
        "dactylic_hexameter": "HLLHLLHLLHLLHLLHH",  # Od. 1.1
        "iambic_trimeter": "LHLHHHLHLHLH",  # Aesch. Ag. 1 (ties with the resolved automaton)
        "trochaic_tetrameter_catalectic": "HLHLHLHLHLHLHLL",  # Archil. fr. 128
        "elegiac_pentameter": "HLLHHHHLLHLLH",  # Simonides
    }
    for name, weights in lines.items():
        ranking = detect_meter(weights_logp(weights), meters)
        best_cost = ranking[0][1]
        best = {n for n, c in ranking if c == pytest.approx(best_cost)}
        assert name in best, (name, ranking[:3])
        assert ranking[-1][1] >= best_cost
        assert [n for n, _ in ranking] and len(ranking) == len(meters)


def test_syllable_scores_from_letters() -> None:
    letter = np.log(np.full((10, 2), 0.5))
    letter[[2, 5, 9]] = np.log([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    out = syllable_scores(letter, np.array([2, 5, 9]))
    assert np.allclose(np.exp(out[:, 0]), [0.9, 0.2, 0.6])
    with pytest.raises(DecodingError):
        syllable_scores(letter, np.array([5, 2]))
    with pytest.raises(DecodingError):
        syllable_scores(letter, np.array([10]))


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((0, 2)),
        np.zeros((3, 3)),
        np.array([[np.nan, 0.0]]),
        np.array([[np.inf, 0.0]]),
        np.array([[-np.inf, -np.inf]]),
    ],
)
def test_bad_scores_raise(meters: dict[str, Meter], bad: np.ndarray) -> None:
    with pytest.raises(DecodingError):
        viterbi(bad, meters["choliamb"])
    with pytest.raises(DecodingError):
        gated_decode(np.zeros((12, 2)), meters["choliamb"], theta=-1.0)


def test_batch_equals_single_lines(meters: dict[str, Meter]) -> None:
    rng = np.random.default_rng(9)
    lines = [log_softmax(rng.normal(size=(n, 2))) for n in (16, 13, 16, 17, 5, 13)]
    meter = meters["dactylic_hexameter"]
    batch = viterbi_batch(lines, meter)
    assert len(batch) == len(lines)
    for line, result in zip(lines, batch, strict=True):
        single = viterbi(line, meter)
        assert result.path == single.path and result.argmax_path == single.argmax_path
        assert result.cost == pytest.approx(single.cost) or (
            np.isinf(result.cost) and np.isinf(single.cost)
        )
        assert result.cost == pytest.approx(brute_force(line, meter))
    assert batch[4].path is None  # five syllables cannot be a hexameter


def test_lines_of_any_lengths_share_a_pass_and_match_each_line_alone(meters: dict[str, Meter],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    module = importlib.import_module("stoicheia_spacy.scan.viterbi")

    rng = np.random.default_rng(3)
    lines = [log_softmax(rng.normal(size=(n, 2)) * 2) for n in (17, 5, 12, 16, 13, 30, 12, 1, 14)]
    lines.append(np.log(np.full((12, 2), 0.5)))  # every path ties: heavy first, lowest state
    lines.append(np.array([[0.0, -np.inf]] * 6 + [[-np.inf, 0.0]] * 6))  # one string only
    for name in ("iambic_trimeter", "iambic_trimeter_resolved", "dactylic_hexameter"):
        meter = meters[name]
        alone = [viterbi(x, meter) for x in lines]
        assert viterbi_batch(lines, meter) == alone  # paths and costs equal, not approximately
        monkeypatch.setattr(module, "MAX_PASS_CELLS", 50)  # many small passes: still the same
        assert viterbi_batch(lines, meter) == alone
        monkeypatch.undo()
        for x, res in zip(lines, alone, strict=True):
            if x.shape[0] <= 16:
                assert res.cost == pytest.approx(brute_force(x, meter)) or res.cost == brute_force(x, meter)


def test_scannable_lengths_are_the_lengths_with_a_path() -> None:
    """A line is sent to the Viterbi only when its metre has a path of its length: the shipped
    metres (finite) and a repeating one, every length from 1 to 59, against the recursion itself."""
    meters = {**load_meters(), "repeating": Meter(name="repeating", pattern="(H L)+ H")}
    rng = np.random.default_rng(0)
    lengths = np.arange(1, 60)
    for name, meter in meters.items():
        lines = [np.log(rng.dirichlet([1, 1], size=n)) for n in lengths]
        _, found = _viterbi_padded(lines, meter)
        assert (scannable(meter, lengths) == found).all(), name
    assert scannable(meters["dactylic_hexameter"], np.array([12, 17, 18, 400])).tolist() == [True, True, False, False]
    assert scannable(meters["repeating"], np.array([399, 400])).tolist() == [True, False]
