"""Synizesis candidates, epic correption and the lattice decoder on real Greek verse."""

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.lattice import (
    correption_mask,
    decode_lattice,
    decode_lattices,
    expand_weights,
    merge_logp,
    synizesis_candidates,
    weight_margins,
    weight_margins_batch,
)
from stoicheia_spacy.scan.meters import load_meters
from stoicheia_spacy.scan.syllabify import HEAVY, LIGHT, syllabify

ILIAD_1_1 = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"


def _syl(text):
    planes = encode_planes(text)
    return syllabify(planes, text=text), planes


def _texts(text, syl, planes, idx):
    off = np.asarray(planes.offsets)
    return [text[off[syl.starts[k]] : off[syl.ends[k + 1]] + 1] for k in idx.tolist()]


def test_synizesis_candidates_find_hiatus_after_epsilon() -> None:
    syl, planes = _syl(ILIAD_1_1)
    cands = synizesis_candidates(syl, planes, ILIAD_1_1)
    assert "δεω" in _texts(ILIAD_1_1, syl, planes, cands)  # Πηληϊά-δεω
    assert "θεὰ" in _texts(ILIAD_1_1, syl, planes, cands)  # θε-ά (possible, not chosen)
    # no hiatus, no candidate: ἔννεπε, μάλα; ει is a diphthong, not two syllables
    syl2, planes2 = _syl("ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπον, ὃς μάλα πολλὰ")
    assert synizesis_candidates(syl2, planes2).size == 0


def test_synizesis_across_words_only_before_ou_au() -> None:
    text = "μὴ οὐ φάναι"
    syl, planes = _syl(text)
    assert _texts(text, syl, planes, synizesis_candidates(syl, planes, text)) == ["μὴ οὐ"]
    text = "μὴ ἔχε"
    syl, planes = _syl(text)
    assert synizesis_candidates(syl, planes, text).size == 0


def test_correption_marks_word_final_long_before_vowel() -> None:
    text = "ἄνδρα μοι ἔννεπε"
    syl, planes = _syl(text)
    mask = correption_mask(syl, planes, text)
    off = np.asarray(planes.offsets)
    marked = [text[off[syl.starts[k]] : off[syl.ends[k]] + 1] for k in np.nonzero(mask)[0]]
    assert marked == ["μοι"]


def test_merge_and_expand_are_inverse_on_weights() -> None:
    logp = np.log(np.full((5, 2), 0.5))
    red = merge_logp(logp, (1, 3), (-0.01, -4.0))
    assert red.shape == (3, 2) and red[1, 0] == pytest.approx(-0.01)
    full = expand_weights(np.array([LIGHT, HEAVY, HEAVY]), (1,), 4)
    assert full.tolist() == [LIGHT, HEAVY, HEAVY, HEAVY]


def _rule_logp(syl, eps=0.02):
    p = np.where(syl.weights == HEAVY, 1 - eps, np.where(syl.weights == LIGHT, eps, 0.5))
    return np.log(np.stack([p, 1 - p], axis=1))


def test_iliad_1_1_scans_as_hexameter_only_with_synizesis() -> None:
    # rule weights alone (dichrona 0.5) also fit anapaests; the trained heads decide that (CLI test)
    meters = {k: v for k, v in load_meters().items() if k in ("dactylic_hexameter", "iambic_trimeter")}
    syl, planes = _syl(ILIAD_1_1)
    assert len(syl) == 17 and syl.weights[7] == HEAVY  # Πη is long: 17 syllables cannot be dactylic
    logp = _rule_logp(syl)
    cands = synizesis_candidates(syl, planes, ILIAD_1_1)
    res = decode_lattice(logp, cands, meters, theta=0.1, n_units=len(planes))
    assert res is not None and res.used_viterbi
    assert res.meter == "dactylic_hexameter"
    k = int(np.nonzero(np.isin(cands, res.merged))[0][0])
    assert _texts(ILIAD_1_1, syl, planes, cands[[k]]) == ["δεω"]
    assert res.path == "HLLHLLHHHLLHLLHH"
    # without the lattice the best hexameter needs long syllables read light: far costlier
    plain = decode_lattice(logp, np.zeros(0, dtype=np.int64), {"h": meters["dactylic_hexameter"]},
                           theta=0.1, n_units=len(planes))
    assert plain is not None and plain.cost > res.cost + 0.1


def test_no_merge_when_the_line_scans_without_one() -> None:
    meters = load_meters()
    text = "ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
    syl, planes = _syl(text)
    gold = "HLLHLLHLLHLLHLLHH"
    assert len(syl) == len(gold)
    p = np.array([0.9 if c == "H" else 0.1 for c in gold])  # a fairly confident model
    logp = np.log(np.stack([p, 1 - p], axis=1))
    res = decode_lattice(logp, np.array([2, 9]), meters, theta=0.1, n_units=len(planes))  # forced candidates
    assert res is not None and res.merged == () and res.meter == "dactylic_hexameter"
    assert res.path == gold


def test_weight_margins_show_what_the_hexameter_forces() -> None:
    meters = load_meters()
    text = "ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
    gold = "HLLHLLHLLHLLHLLHH"  # Odyssey 1.1
    assert len(_syl(text)[0]) == len(gold)
    p = np.array([0.9 if c == "H" else 0.1 for c in gold])
    logp = np.log(np.stack([p, 1 - p], axis=1))
    margins = weight_margins(logp, (), meters["dactylic_hexameter"], np.arange(len(gold)))
    # 17 syllables: five dactyls, every weight forced; only the final anceps may flip, at its own cost
    assert margins[:-1].tolist() == [20.0] * 16
    assert margins[-1] == pytest.approx(np.log(0.9 / 0.1))
    # a metre that cannot take the line says nothing
    assert not weight_margins(logp, (), meters["iambic_trimeter"], np.arange(len(gold))).any()


def test_weight_margins_leave_merged_syllables_out() -> None:
    meters = load_meters()
    syl, planes = _syl(ILIAD_1_1)
    logp = _rule_logp(syl)
    cands = synizesis_candidates(syl, planes, ILIAD_1_1)
    res = decode_lattice(logp, cands, {"h": meters["dactylic_hexameter"]}, theta=0.1, n_units=len(planes))
    assert res is not None and res.merged
    k = res.merged[0]
    margins = weight_margins(logp, res.merged, meters["dactylic_hexameter"], np.array([k, k + 1, 0]))
    assert margins[0] == 0.0 and margins[1] == 0.0 and margins[2] > 0.0


ODYSSEY_1_1_5 = [
    "ἄνδρα μοι ἔννεπε, Μοῦσα, πολύτροπον, ὃς μάλα πολλὰ",
    "πλάγχθη, ἐπεὶ Τροίης ἱερὸν πτολίεθρον ἔπερσε·",
    "πολλῶν δʼ ἀνθρώπων ἴδεν ἄστεα καὶ νόον ἔγνω,",
    "πολλὰ δʼ ὅ γʼ ἐν πόντῳ πάθεν ἄλγεα ὃν κατὰ θυμόν,",
    ILIAD_1_1,
]


def test_a_batch_of_lines_decodes_as_each_line_alone() -> None:
    meters = {k: v for k, v in load_meters().items() if k in ("dactylic_hexameter", "iambic_trimeter")}
    lines = []
    for text in ODYSSEY_1_1_5:
        syl, planes = _syl(text)
        lines.append((_rule_logp(syl), synizesis_candidates(syl, planes, text), len(planes)))
    alone = [decode_lattice(logp, cands, meters, theta=0.1, n_units=n) for logp, cands, n in lines]
    assert decode_lattices(lines, meters, theta=0.1) == alone
    assert alone[-1] is not None and alone[-1].merged  # Iliad 1.1 needs its synizesis in the batch too
    found = [(logp, res.merged, meters[res.meter], np.arange(logp.shape[0]))
             for (logp, _, _), res in zip(lines, alone, strict=True) if res is not None]
    batch = weight_margins_batch(found)
    for (logp, merged, meter, syllables), margins in zip(found, batch, strict=True):
        assert margins.tolist() == weight_margins(logp, merged, meter, syllables).tolist()
    assert any(m.any() for m in batch)
