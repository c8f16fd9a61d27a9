"""Norma reader and protocol scorer on real lines."""

import numpy as np
from stoicheia_lab.scan.norma import (
    mark_letters,
    open_dichronic_syllables,
    parse_macron_line,
    parse_syllable_line,
    position_counts,
    read_norma,
    score_macrons,
    score_syllables,
    syllable_ends,
)


def test_macron_line_marks_point_at_their_vowels() -> None:
    line = parse_macron_line("Εὖθ᾽ ὑ^πὸ Πηλείωνι δά^μη θεοείκελος Ἕκτωρ", "quintus")
    assert line.text == "Εὖθ᾽ ὑπὸ Πηλείωνι δάμη θεοείκελος Ἕκτωρ"
    assert [(line.text[p], g) for p, g in line.marks] == [("ὑ", False), ("ά", False)]
    assert mark_letters(line).tolist() == [3, 15]


def test_syllable_line_and_scorer() -> None:
    line = parse_syllable_line("[δὴ ]{τό}{τε }[Τρῶ]{ε}{ς ἔ}[μιμ]{νο}", "quintus")
    ends, heavy = syllable_ends(line)
    assert heavy.tolist() == [True, False, False, True, False, False, True, False]
    perfect = score_syllables([(ends, heavy)], [(ends, heavy)])
    assert perfect["boundary_f1"] == 1.0 and perfect["exact_line"] == 1.0
    wrong = heavy.copy()
    wrong[1] = True
    s = score_syllables([(ends, heavy)], [(ends, wrong)])
    assert s["exact_line"] == 0.0 and s["weight_accuracy"] == 7 / 8


def test_balanced_accuracy_punishes_the_majority_guess() -> None:
    gold = np.array([0, 0, 0, 1], dtype=bool)
    s = score_macrons(gold, [0, 0, 0, 0])
    assert s["accuracy"] == 0.75 and s["balanced_accuracy"] == 0.5


def test_read_norma_counts(shared_data) -> None:
    n = read_norma(shared_data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    assert len(n.macron) == 932 and len(n.syllables) == 932
    assert n.n_marks == 2966
    assert "Δεξίθεος" in n.stoplist


def test_open_dichronic_syllables_select_open_alpha_iota_upsilon() -> None:
    # [Ἠ][ῶ ][τε ]{ῥο}{δό}[πη]{χυ^}{ν ἐ}[ϋπ]{λό}{κα^}[μόν ]{τε }{Σε}[λή][νην] (In Solem 6, README)
    line = parse_syllable_line("[Ἠ][ῶ ][τε ]{ῥο}{δό}[πη]{χυ}{ν ἐ}[ϋπ]{λό}{κα}[μόν ]{τε }{Σε}[λή][νην]", "insolem")
    mask = open_dichronic_syllables(line)
    picked = [line.text[a:b] for (a, b, _), m in zip(line.syllables, mask, strict=True) if m]
    assert picked == ["χυ", "κα"]  # ϋπ is closed, μόν closed, diphthongs and η/ω are not dichrona


def test_position_counts_document_why_not_1916(shared_data) -> None:
    c = position_counts(read_norma(shared_data / "scansion" / "norma_syllabarum_graecarum.tar.xz"))
    assert c["marks"] == 2966 and c["marks_stoplist"] == 9
    # one unaccented mark fewer is open since the iota adscript joined its long nucleus (2912 / 1951 before)
    assert c["marks_open"] == 2911 and c["marks_open_unaccented"] == 1950
    assert c["open_dichronic_syllables"] == c["open_dichronic_syllables_heavy"] + c["open_dichronic_syllables_light"]
    assert 1916 not in c.values()


def test_protocol_mask_counts_open_gold_syllables_only() -> None:
    from stoicheia_lab.scan.norma import protocol_mask

    # Posthomerica 10 (README): σι^ and Σκα^ open, ἀ^ in a closed gold syllable [ἀμ] does not count
    mac = "ῇσι^ Σκα^μάνδρου ἀ^μφὶ"
    syl = "[ῇ]{σι }{Σκα}[μάν][δρου ][ἀμ]{φὶ}"
    assert protocol_mask(mac, syl).tolist() == [True, True, False]
    # stray punctuation outside brackets joins the syllable before it: {κα}, is still open
    assert protocol_mask("κα^, ἀ^", "{κα}, {ἀ}").tolist() == [True, True]


def test_published_protocol_reproduces_1916_positions_and_all_short_83_14(shared_data) -> None:
    from stoicheia_lab.scan.norma import PUBLISHED_ALL_SHORT, PUBLISHED_POSITIONS, score_protocol

    n = read_norma(shared_data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    gold = [g for line, m in zip(n.macron, n.protocol, strict=True) for (_, g), k in zip(line.marks, m, strict=True) if k]
    s = score_protocol(gold, [0] * len(gold))
    assert s["n"] == PUBLISHED_POSITIONS and s["n_long"] == 323
    assert round(s["all_short"], 2) == PUBLISHED_ALL_SHORT
    abstain = score_protocol(gold, [-1] * len(gold))
    assert abstain["accuracy"] == 0.0 and abstain["unmarked_to_short"] == s["all_short"]
    assert len(n.dev) == 764 and not {x.source for x in n.macron} & {"dev"}
