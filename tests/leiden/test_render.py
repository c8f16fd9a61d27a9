"""render_restorations: canonical notation, filled gaps, parse/render round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from stoicheia_spacy.errors import InvalidTextError
from stoicheia_spacy.leiden import GappedText, format_gap, parse_gaps, render_restorations
from stoicheia_spacy.leiden.model import Gap


def structure(gapped: GappedText) -> tuple[object, ...]:
    gaps = [
        (g.start, g.min_width, g.max_width, g.kind, g.approximate, g.lines) for g in gapped.gaps
    ]
    spans = [(s.kind, s.start, s.end, s.note) for s in gapped.spans]
    return gapped.text, gaps, spans


@pytest.mark.parametrize(
    ("markup", "canonical"),
    [
        ("[---]", "[---]"),
        ("[...]", "[---]"),
        ("[....]", "[.4]"),
        ("[--5--]", "[.5]"),
        ("[c. 5]", "[ca. 5]"),
        ("[5±3]", "[5±3]"),
        ("[3-6]", "[3-6]"),
        ("[c. 5-8]", "[ca. 5-8]"),
        ("---", "---"),
        ("??", "??"),
        ("|gap=2_lines|", "|gap=2_lines|"),
    ],
)
def test_canonical_notation(markup: str, canonical: str) -> None:
    gapped = parse_gaps(f"καὶ {markup} τῶι")
    assert render_restorations(gapped) == f"καὶ {canonical} τῶι"


def test_fill_gaps_by_mapping_and_sequence() -> None:
    gapped = parse_gaps("ἔδοξεν τῆι [.6] καὶ τῶι [---]")
    assert render_restorations(gapped, {0: "βουλῆι"}) == "ἔδοξεν τῆι [βουλῆι] καὶ τῶι [---]"
    rendered = render_restorations(gapped, ["βουλῆι", "δήμωι"])
    assert rendered == "ἔδοξεν τῆι [βουλῆι] καὶ τῶι [δήμωι]"
    again = parse_gaps(rendered)
    assert again.text == "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι"
    assert again.gaps == []
    assert [again.text[s.start : s.end] for s in again.restorations] == ["βουλῆι", "δήμωι"]


def test_fill_gap_inside_restoration() -> None:
    gapped = parse_gaps("[αβ . .] γ")
    assert render_restorations(gapped, {0: "γδ"}) == "[αβγδ] γ"
    assert render_restorations(gapped) == "[αβ..] γ"


def test_bad_restorations() -> None:
    gapped = parse_gaps("ἔδοξεν [.6] καὶ")
    with pytest.raises(InvalidTextError):
        render_restorations(gapped, {1: "βουλῆι"})
    with pytest.raises(InvalidTextError):
        render_restorations(gapped, ["βουλῆι", "δήμωι"])
    with pytest.raises(InvalidTextError, match="markup"):
        render_restorations(gapped, {0: "βου]λῆι"})
    with pytest.raises(InvalidTextError, match="offset 2"):
        render_restorations(gapped, {0: "βο\x00υ"})


@pytest.mark.parametrize(
    "source",
    [
        "ἔδοξεν τῆι βουλῆι [---] δήμωι",
        "[ἔδοξε]ν τῶι δ[ήμωι]",
        "Ἀθη[ν]αῖοι [.5] | καὶ [c. 5-8] ἐ̣πὶ",
        "[τῶι . . δήμωι] [αβ . .] γ [.. δήμωι]",
        "⟦μετ[ὰ]⟧ {ε} ⟨ν⟩ δρ(αχμὰς) [5±3] ---- ??",
        "π̣α̣τ̣ήρ [ἐ̣πὶ] τ|ῶι [?] ⟦⟧",
        "καὶ [ἔδοξε] [ca. 7] [ήμωι] |gap=3-4| [τῆι --- καὶ]",
    ],
)
def test_round_trip_leiden(source: str) -> None:
    gapped = parse_gaps(source)
    assert structure(parse_gaps(render_restorations(gapped))) == structure(gapped)


def test_round_trip_with_stripped_restorations() -> None:
    hidden = parse_gaps("[ἔδοξε]ν τῆι [βουλῆι καὶ] τῶι", strip_restorations=True)
    golds = [gap.gold for gap in hidden.gaps]
    restored = parse_gaps(render_restorations(hidden, golds))
    assert restored.text == "ἔδοξεν τῆι βουλῆι καὶ τῶι"
    assert structure(restored) == structure(parse_gaps("[ἔδοξε]ν τῆι [βουλῆι καὶ] τῶι"))
    assert render_restorations(hidden) == "[.5]ν τῆι [.10] τῶι"


def test_round_trip_fixture_samples(fixtures_dir: Path) -> None:
    for line in (fixtures_dir / "leiden_samples.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        notation, source = line.split("\t")
        gapped = parse_gaps(source, notation=notation)  # type: ignore[arg-type]
        rendered = render_restorations(gapped, notation=notation)  # type: ignore[arg-type]
        assert structure(parse_gaps(rendered, notation=notation)) == structure(gapped), source  # type: ignore[arg-type]


def test_format_gap_of_hand_made_gaps() -> None:
    assert format_gap(Gap(0, 4, 4, "lacuna", 0, 0, approximate=True)) == "[ca. 4]"
    assert format_gap(Gap(0, 3, 8, "lacuna", 0, 0)) == "[3-8]"
    assert format_gap(Gap(0, 2, None, "lines", 0, 0, lines=None)) == "|gap=unknown_lines|"
