"""parse_gaps: Leiden, Ithaca and DDbDP notation, offsets, malformed markup."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.errors import ConfigError, EpiDocError, InvalidTextError, LeidenSyntaxError
from stoicheia_spacy.leiden import GappedText, parse_gaps


def widths(gapped: GappedText) -> list[tuple[int, int, int | None, str]]:
    return [(g.start, g.min_width, g.max_width, g.kind) for g in gapped.gaps]


def kinds(gapped: GappedText) -> list[tuple[str, int, int]]:
    return [(s.kind, s.start, s.end) for s in gapped.spans]


def check_offsets(source: str, gapped: GappedText) -> None:
    """Every cleaned character is the input character its offset points at."""
    offsets = gapped.source_offsets
    assert offsets.dtype == np.int64 and offsets.shape == (len(gapped.text) + 1,)
    assert offsets[-1] == len(source)
    assert "".join(source[i] for i in offsets[:-1]) == gapped.text
    assert np.all(np.diff(offsets) > 0)


def test_unknown_lacuna_is_an_insertion_point() -> None:
    source = "ἔδοξεν τῆι βουλῆι [---] δήμωι"
    gapped = parse_gaps(source)
    assert gapped.text == "ἔδοξεν τῆι βουλῆι  δήμωι"
    (gap,) = gapped.gaps
    assert (gap.start, gap.min_width, gap.max_width, gap.kind) == (18, 1, None, "lacuna")
    assert source[gap.source_start : gap.source_end] == "[---]"
    assert gapped.source_offsets[gap.start] == gap.source_end  # the space after "]"
    check_offsets(source, gapped)


def test_restorations_are_kept_and_flagged() -> None:
    source = "[ἔδοξε]ν τῶι δ[ήμωι]"
    gapped = parse_gaps(source)
    assert gapped.text == "ἔδοξεν τῶι δήμωι"
    assert gapped.gaps == []
    assert [gapped.text[s.start : s.end] for s in gapped.restorations] == ["ἔδοξε", "ήμωι"]
    mask = gapped.mask("restored")
    assert mask.tolist() == [True] * 5 + [False] * 7 + [True] * 4
    check_offsets(source, gapped)


def test_mixed_line_with_widths_line_break_and_dot_below() -> None:
    source = "Ἀθη[ν]αῖοι [.5] | καὶ [c. 5-8] ἐ̣πὶ"
    gapped = parse_gaps(source)
    assert gapped.text == "Ἀθηναῖοι  καὶ  ἐπὶ"
    assert widths(gapped) == [(9, 5, 5, "lacuna"), (14, 5, 8, "lacuna")]
    assert [g.approximate for g in gapped.gaps] == [False, True]
    assert gapped.line_breaks.tolist() == [10]
    (uncertain,) = gapped.spans_of("uncertain")
    assert gapped.text[uncertain.start : uncertain.end] == "ἐ"
    check_offsets(source, gapped)


@pytest.mark.parametrize(
    ("markup", "low", "high", "approximate"),
    [
        ("[---]", 1, None, False),
        ("[ - - - ]", 1, None, False),
        ("[–––]", 1, None, False),
        ("[...]", 1, None, False),
        ("[…]", 1, None, False),
        ("[....]", 4, 4, False),
        ("[..]", 2, 2, False),
        ("[.5]", 5, 5, False),
        ("[--5--]", 5, 5, False),
        ("[- 12 -]", 12, 12, False),
        ("[ca. 5]", 5, 5, True),
        ("[c.5]", 5, 5, True),
        ("[5±3]", 2, 8, False),
        ("[5 +/- 2]", 3, 7, False),
        ("[c. 5-8]", 5, 8, True),
        ("[5-8]", 5, 8, False),
        ("|gap=7|", 7, 7, False),
        ("|gap=3-4|", 3, 4, False),
        ("|gap=unknown|", 1, None, False),
    ],
)
def test_lacuna_widths(markup: str, low: int, high: int | None, approximate: bool) -> None:
    gapped = parse_gaps(f"τῶι {markup} δήμωι")
    assert gapped.text == "τῶι  δήμωι"
    (gap,) = gapped.gaps
    assert (gap.start, gap.min_width, gap.max_width, gap.approximate) == (4, low, high, approximate)
    assert gap.kind == "lacuna"


def test_ithaca_notation() -> None:
    gapped = parse_gaps("τῶι δήμωι ---- ἀνέθηκεν ??? τῆς")
    assert gapped.text == "τῶι δήμωι  ἀνέθηκεν  τῆς"
    assert widths(gapped) == [(10, 4, 4, "lost"), (20, 3, 3, "target")]
    assert parse_gaps("ἔδ?ξεν").gaps[0].start == 2


def test_partial_restoration_with_dots() -> None:
    gapped = parse_gaps("[αβ . .] γ")
    assert gapped.text == "αβ γ"
    assert widths(gapped) == [(2, 2, 2, "lacuna")]
    assert kinds(gapped) == [("restored", 0, 2)]
    inner = parse_gaps("[τῶι . . δήμωι]")
    assert inner.text == "τῶι δήμωι"
    assert widths(inner) == [(4, 2, 2, "lacuna")]
    assert kinds(inner) == [("restored", 0, 9)]


def test_editorial_brackets_keep_content() -> None:
    source = "⟦μετ[ὰ]⟧ {ε} ⟨ν⟩ δρ(αχμὰς) <τῆς>"
    gapped = parse_gaps(source)
    assert gapped.text == "μετὰ ε ν δραχμὰς τῆς"
    assert kinds(gapped) == [
        ("erased", 0, 4),
        ("restored", 3, 4),
        ("superfluous", 5, 6),
        ("added", 7, 8),
        ("expansion", 11, 16),
        ("added", 17, 20),
    ]
    check_offsets(source, gapped)


def test_line_breaks_join_words_and_keep_one_space() -> None:
    gapped = parse_gaps("ἐ|πὶ καὶ | τῶι / δήμωι||ἀνέθηκεν")
    assert gapped.text == "ἐπὶ καὶ τῶι δήμωιἀνέθηκεν"
    assert gapped.line_breaks.tolist() == [1, 8, 12, 17]


def test_dot_below_letters_merge_into_one_uncertain_span() -> None:
    source = "π̣α̣τ̣ήρ καὶ ἐ̣"
    gapped = parse_gaps(source)
    assert gapped.text == "πατήρ καὶ ἐ"
    assert kinds(gapped) == [("uncertain", 0, 3), ("uncertain", 10, 11)]
    check_offsets(source, gapped)


def test_dot_below_without_base_letter_stays_text() -> None:
    for source in ["\u0323αβ", " \u0323 ", "\u0301ἔδοξεν"]:
        gapped = parse_gaps(source)
        assert gapped.text == source and gapped.spans == [] and gapped.gaps == []


def test_ddbdp_notation() -> None:
    source = "ὁμολογῶ @^inline^πε-πρακέν\\ε/@⟦πε-πρακεναι⟧* σοι κεχαραγμένο[ν] - ὀγδοήκο[ν]-τα|num=780| κ|gap=2| ἐὰν?"
    gapped = parse_gaps(source, notation="ddbdp")
    assert gapped.text == "ὁμολογῶ πεπρακένεπεπρακεναι σοι κεχαραγμένον - ὀγδοήκοντα κ ἐὰν"
    assert widths(gapped) == [(gapped.text.index(" ἐὰν"), 2, 2, "lacuna")]
    found = {s.kind for s in gapped.spans}
    assert found == {
        "correction",
        "insertion",
        "erased",
        "irregular",
        "restored",
        "line_break",
        "tag",
        "query",
    }
    (tag,) = gapped.spans_of("tag")
    assert tag.note == "num=780"
    check_offsets(source, gapped)
    # the same "?" is an Ithaca target in Leiden notation
    assert parse_gaps("ἐὰν?").gaps[0].kind == "target"


def test_ddbdp_line_gaps() -> None:
    gapped = parse_gaps("|gap=unknown_lines| [καί] |gap=3_lines|")
    assert [(g.kind, g.lines, g.max_width) for g in gapped.gaps] == [
        ("lines", None, None),
        ("lines", 3, None),
    ]


def test_strip_restorations_is_the_evaluation_view() -> None:
    source = "[ἔδοξε]ν τῆι [βουλῆι καὶ] τῶι δ[ήμωι] [.3] ἐ̣πὶ"
    full = parse_gaps(source)
    hidden = parse_gaps(source, strip_restorations=True)
    assert hidden.text == "ν τῆι  τῶι δ  ἐπὶ"
    assert [(g.start, g.min_width, g.kind, g.gold) for g in hidden.gaps] == [
        (0, 5, "restored", "ἔδοξε"),
        (6, 10, "restored", "βουλῆι καὶ"),
        (12, 4, "restored", "ήμωι"),
        (13, 3, "lacuna", None),
    ]
    assert hidden.restorations == []
    assert kinds(hidden) == [("uncertain", 14, 15)]
    check_offsets(source, hidden)
    assert full.strip_restorations() == hidden


def test_gap_spans_array() -> None:
    gapped = parse_gaps("τῶι [---] δήμωι [.4] καὶ [5±2]")
    assert gapped.gap_spans().tolist() == [[4, 1, -1], [11, 4, 4], [16, 3, 7]]
    assert gapped.gap_spans().dtype == np.int64
    assert list(gapped.gaps[2].widths()) == [3, 4, 5, 6, 7]
    assert list(gapped.gaps[0].widths(limit=3)) == [1, 2, 3]


@pytest.mark.parametrize(
    ("source", "offset"),
    [
        ("τῶι [δήμωι", 4),
        ("τῶι δήμωι]", 9),
        ("τῶι [δή[μ]ωι]", 7),
        ("τῶι [ca. x] δήμωι", 4),
        ("τῶι [5±] δήμωι", 4),
        ("τῶι [8-5] δήμωι", 4),
        ("τῶι [2±3] δήμωι", 4),
        ("τῶι [δή⟦μ]ωι⟧", 9),
        ("τῶι ⟦δήμωι", 4),
        ("τῶι ⟨δήμωι)", 10),
        ("κ|gap=abc|", 1),
    ],
)
def test_malformed_markup_names_the_offset(source: str, offset: int) -> None:
    with pytest.raises(LeidenSyntaxError) as info:
        parse_gaps(source)
    assert info.value.offset == offset
    assert f"offset {offset}" in str(info.value)


@pytest.mark.parametrize(("source", "offset"), [("τῶι\x00δήμωι", 3), ("δήμ\ud800ωι", 3)])
def test_invalid_text(source: str, offset: int) -> None:
    with pytest.raises(InvalidTextError, match=f"offset {offset}"):
        parse_gaps(source)


def test_wrong_type_and_notation() -> None:
    with pytest.raises(InvalidTextError):
        parse_gaps(b"\xce\xb1")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        parse_gaps("τῶι", notation="tei")  # type: ignore[arg-type]
    with pytest.raises(EpiDocError):  # "epidoc" reads an EpiDoc file: plain text is none
        parse_gaps("<p>τῶι</p>", notation="epidoc")


@pytest.mark.parametrize(
    "source",
    [
        "",
        "Senatus populusque Romanus",
        "Съешь же ещё этих мягких французских булок",
        "שלום עולם مرحبا بالعالم",
        "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι· Κεκροπὶς ἐπρυτάνευε",
    ],
)
def test_text_without_markup_is_unchanged(source: str) -> None:
    gapped = parse_gaps(source)
    assert gapped.text == source and gapped.gaps == [] and gapped.spans == []
    assert gapped.source_offsets.tolist() == list(range(len(source) + 1))


def test_five_megabyte_document() -> None:
    unit = "[ἔδοξε]ν τῆι βουλῆι [---] δ[ήμωι] Ἀθη[ν]αῖοι [.5] | καὶ ἐ̣πὶ ---- ?? τοῦ ἄρχοντος. "
    plain = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι "
    source = unit * 2000 + plain * (5_000_000 // len(plain))
    gapped = parse_gaps(source)
    assert len(source) > 5_000_000
    assert len(gapped.gaps) == 4 * 2000 and len(gapped.restorations) == 3 * 2000
    assert gapped.text.endswith(plain * 10)
    assert gapped.source_offsets[-1] == len(source)


def test_fixture_samples_parse(fixtures_dir: Path) -> None:
    lines = [
        line.rstrip("\n").split("\t")
        for line in (fixtures_dir / "leiden_samples.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert len(lines) >= 10
    for notation, source in lines:
        gapped = parse_gaps(source, notation=notation)  # type: ignore[arg-type]
        check_offsets(source, gapped)
        assert not any(ch in gapped.text for ch in "[]⟦⟧|\u0323")


def test_ddbdp_corpus_sample(shared_data: Path) -> None:
    """The first sentences of the DDbDP token file parse; malformed ones raise cleanly."""
    path = shared_data / "papyri" / "duke_nlp_2018_ddbdp_tokens.tsv.xz"
    sentences: list[str] = []
    tokens: list[str] = []
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                if tokens:
                    sentences.append(" ".join(tokens))
                    tokens = []
                    if len(sentences) == 400:
                        break
                continue
            tokens.append(line.split("\t")[3])
    parsed = errors = gaps = 0
    for sentence in sentences:
        try:
            gapped = parse_gaps(sentence, notation="ddbdp")
        except LeidenSyntaxError as error:
            assert 0 <= error.offset < len(sentence)
            errors += 1
            continue
        parsed += 1
        gaps += len(gapped.gaps)
        check_offsets(sentence, gapped)
    assert parsed >= 0.98 * len(sentences)
    assert gaps > 100


@pytest.mark.parametrize(("markup", "low", "high"), [("[ca. 100000]", 100000, 100000), ("[c. 5-100000]", 5, 100000),
                                                ("|gap=5000|", 5000, 5000), ("[5000±3]", 4997, 5003)])
def test_huge_widths_are_reported_as_stated(markup: str, low: int, high: int) -> None:
    """The parser reports what the editor wrote (bounding the work is the encoder's and the
    restorer's job: MAX_GAP_WIDTH MASK letters, ``too_wide``); it allocates nothing per letter."""
    gapped = parse_gaps(f"ἔδοξε {markup} τῷ δήμῳ")
    [gap] = gapped.gaps
    assert (gap.min_width, gap.max_width, gap.kind) == (low, high, "lacuna")
    assert gapped.text == "ἔδοξε  τῷ δήμῳ"
