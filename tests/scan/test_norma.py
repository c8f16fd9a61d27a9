"""Norma reader and protocol scorer on real lines."""

import numpy as np

from stoicheia_spacy.scan.norma import (
    mark_letters,
    parse_macron_line,
    parse_syllable_line,
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
