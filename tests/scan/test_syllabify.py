"""Rule syllabification, weights and dichrona on real lines."""

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.syllabify import HEAVY, LIGHT, dichrona_mask, macronize_text, syllabify


def _sylls(text: str, **kw) -> list[str]:
    p = encode_planes(text)
    s = syllabify(p, text=text, **kw)
    return [text[p.offsets[a] : p.offsets[b] + 1] for a, b in zip(s.starts, s.ends, strict=True)]


@pytest.mark.parametrize(("line", "hypotactic"), [
    ("οὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,", "-uu- - -u u-- -u u--"),  # Il. 1.2
    ("πολλὰς δ’ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν", "-- --- -- uu- uu--"),  # Il. 1.3
])
def test_iliad_syllable_counts_and_rule_weights_agree_with_hypotactic(line: str, hypotactic: str) -> None:
    p = encode_planes(line)
    s = syllabify(p, text=line)
    gold = hypotactic.replace(" ", "")
    assert len(s) == len(gold)
    known = s.weights >= 0
    known[-1] = False  # brevis in longo: the metre, not the rule, makes the last syllable heavy
    expect = np.array([HEAVY if c == "-" else LIGHT for c in gold])
    assert known.sum() >= 6
    assert np.array_equal(s.weights[known], expect[known])


def test_iliad_1_1_boundaries_and_synizesis_is_not_a_rule() -> None:
    line = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"
    assert _sylls(line) == ["μῆ", "νι", "ν ἄ", "ει", "δε", "θε", "ὰ", "Πη", "λη", "ϊ", "ά", "δε", "ω",
                            "Ἀ", "χι", "λῆ", "ος"]  # 17: -εω- synizesis (16 in the metre) is left to the model


def test_norma_boundary_conventions_thucydides() -> None:
    # Norma: [Θου][κυ]{δί}[δη]{ς Ἀ}[θη][ναῖ][ος ξ]{υ}[νέγ][ραψ]{ε }
    assert _sylls("Θουκυδίδης Ἀθηναῖος ξυνέγραψε") == [
        "Θου", "κυ", "δί", "δη", "ς Ἀ", "θη", "ναῖ", "ος ξ", "υ", "νέγ", "ραψ", "ε"]


def test_light_muta_cum_liquida_keeps_the_cluster_in_the_onset() -> None:
    text = "ἐπεὶ οὐδὲ Κλεομένης"
    p = encode_planes(text)
    s = syllabify(p, text=text)
    i = [k for k, e in enumerate(s.nucleus) if text[p.offsets[e]] == "ὲ"][0]
    assert s.muta_cum_liquida[i] and s.weights[i] == -1
    w = s.weights.copy()
    w[w < 0] = LIGHT
    assert "δὲ Κ" not in _sylls(text, weights=w) and "Κλε" in _sylls(text, weights=w)


def test_dichrona_exclude_diphthongs_circumflex_and_subscript() -> None:
    text = "αἰεὶ πᾶσι τῇ θεὰ Ἄϊδι"
    p = encode_planes(text)
    marked = "".join(text[o] for o in np.asarray(p.offsets)[dichrona_mask(p)])
    assert marked == "ιὰἌϊι"  # πᾶ circumflex, αἰ diphthong, ῇ subscript excluded


def test_macronize_inserts_combining_marks_after_the_vowel() -> None:
    text = "θεὰ"
    p = encode_planes(text)
    lengths = np.where(dichrona_mask(p), 1, -1)
    assert macronize_text(text, p, lengths) == "θεᾱ̀"
    assert macronize_text(text, p, np.where(dichrona_mask(p), 0, -1)) == "θεᾰ̀"
