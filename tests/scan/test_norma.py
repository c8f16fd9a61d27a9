"""Norma reader and protocol scorer on real lines."""

import numpy as np

from stoicheia_spacy.scan.norma import (
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
    assert c["marks_open"] == 2912 and c["marks_open_unaccented"] == 1951
    assert c["open_dichronic_syllables"] == c["open_dichronic_syllables_heavy"] + c["open_dichronic_syllables_light"]
    assert 1916 not in c.values()
