"""Leiden gaps in the segmenter: MASK letters in, markup tokens out, restored in the same pass."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import spacy

from stoicheia_spacy.accent.predict import PlaneControl, model_inputs
from stoicheia_spacy.accent.segment import StoicheiaSegmenter, gap_width, gapped_planes
from stoicheia_spacy.alphabet import BND_UNKNOWN, BND_WORD_END, DIA_UNKNOWN, MASK_ID, PUNCT_UNKNOWN
from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.backbone import StoicheiaEncoder
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import ConfigError, LeidenSyntaxError
from stoicheia_spacy.leiden import parse_gaps
from tests.conftest import TINY

DECREE = "ΕΔΟΞΕΤΗΙΒΟΥΛΗΙ[.4]ΤΩΙΔΗΜΩΙ"


def _segmenter(model: StoicheiaEncoder, **kw: Any) -> StoicheiaSegmenter:
    return StoicheiaSegmenter(spacy.blank("grc").vocab, model=model, **{"lexicon": None, **kw})


def _letters_outside_gaps(text: str) -> list[int]:
    return encode_planes(parse_gaps(text).text).letters.tolist()


def test_gapped_planes_masks_known_ranged_and_unknown_widths() -> None:
    planes, runs = gapped_planes("ΒΟΥΛΗΙ[.4]ΤΩΙ [5-8] ΚΑΙ[---]")
    assert [(r.start, r.width, r.markup) for r in runs] == [(6, 4, "[.4]"), (13, 6, "[5-8]"), (22, 5, "[---]")]
    masked = np.flatnonzero(planes.letters == MASK_ID).tolist()
    assert masked == [*range(6, 10), *range(13, 19), *range(22, 27)]
    assert (planes.offsets[planes.letters == MASK_ID] == -1).all()
    # real letters keep their offsets in the SOURCE (not the cleaned text)
    real = planes.letters != MASK_ID
    assert planes.offsets[real].tolist()[6:9] == [10, 11, 12]
    # gap letters: boundary unknown, except a word end before whitespace in the source ("[5-8] ")
    assert planes.boundary[planes.letters == MASK_ID].tolist() == [BND_UNKNOWN] * 9 + [BND_WORD_END] + \
        [BND_UNKNOWN] * 5
    # the letter before a final gap is no longer the end of the text
    assert planes.boundary[21] == BND_UNKNOWN
    assert gap_width(parse_gaps("[ca. 7]").gaps[0]) == 7
    ithaca, runs = gapped_planes("τῶι ???? δήμωι")
    assert runs[0].markup == "????" and (ithaca.letters == MASK_ID).sum() == 4
    ddbdp, runs = gapped_planes("βουληι|gap=3|δημωι", notation="ddbdp")
    assert runs[0].markup == "|gap=3|" and (ddbdp.letters == MASK_ID).sum() == 3


@pytest.mark.parametrize("mode", ["keep", "copy", "predict"])
def test_gap_letters_are_hidden_and_predicted_in_every_mode(mode: str) -> None:
    planes, _ = gapped_planes("καὶ τῶι δ[.3]ῷ")  # a marked word: kept whole, but not its gap
    control = PlaneControl(boundary=mode, diacritics=mode, punctuation=mode)
    seen, fixed = model_inputs(planes, control)
    gap = planes.letters == MASK_ID
    assert (seen.diacritics[gap] == DIA_UNKNOWN).all() and (seen.boundary[gap] == BND_UNKNOWN).all()
    assert (seen.punctuation[gap] == PUNCT_UNKNOWN).all()
    assert not any(f[gap].any() for f in fixed.values())


def test_segmenter_renders_gap_as_its_own_token(tiny_model: StoicheiaEncoder) -> None:
    seg = _segmenter(tiny_model)
    for source in (DECREE, "[---]ΤΩΙΔΗΜΩΙ", "ΕΔΟΞΕ ΤΗΙ ΒΟΥΛΗΙ [.5]", "ἔδοξε τῇ βουλῇ ???? τῷ δήμῳ"):
        doc = seg(source)
        assert doc._.source_text == source
        src_gaps, out_gaps = parse_gaps(source).gaps, parse_gaps(doc.text).gaps
        assert [(g.min_width, g.max_width, g.kind) for g in out_gaps] == \
            [(g.min_width, g.max_width, g.kind) for g in src_gaps]
        assert _letters_outside_gaps(doc.text) == _letters_outside_gaps(source)
        al = doc._.source_alignment
        assert len(al.rendered_to_source) == len(doc.text) and len(al.source_to_rendered) == len(source)
        for sg, og in zip(src_gaps, out_gaps, strict=True):
            token = next(t for t in doc if t.idx == og.source_start)
            assert token.text == doc.text[og.source_start:og.source_end]  # one token per gap
            assert al.source_span(token.idx, token.idx + len(token)) == (sg.source_start, sg.source_end)
            assert al.source_to_rendered[sg.source_start] == og.source_start
            assert al.source_to_rendered[sg.source_end - 1] == og.source_end - 1
        # letters still correspond in both directions
        cleaned = parse_gaps(source)
        src = encode_planes(cleaned.text)
        src_off = cleaned.source_offsets[src.offsets]
        out = encode_planes(parse_gaps(doc.text).text)
        out_off = parse_gaps(doc.text).source_offsets[out.offsets]
        assert np.array_equal(al.source_to_rendered[src_off], out_off)
        assert np.array_equal(al.rendered_to_source[out_off], src_off)
    assert [t.text for t in seg(DECREE)].count("[.4]") == 1
    # spaces around the markup in the source are word ends the model keeps
    spaced = _segmenter(tiny_model, control=PlaneControl(punctuation="drop"))("ΕΔΟΞΕ ΤΗΙ ΒΟΥΛΗΙ [.5] ΤΩΙ ΔΗΜΩΙ")
    assert " [.5] " in spaced.text and spaced[[t.text for t in spaced].index("[.5]")].whitespace_ == " "


def test_notation_none_keeps_the_old_behaviour_and_bad_markup_raises(tiny_model: StoicheiaEncoder) -> None:
    doc = _segmenter(tiny_model, notation=None)(DECREE)
    assert "[" not in doc.text and "◌" not in doc.text
    assert _letters_outside_gaps(doc.text) == _letters_outside_gaps(DECREE)
    with pytest.raises(LeidenSyntaxError):
        _segmenter(tiny_model)("ΒΟΥΛΗΙ[.4")
    with pytest.raises(ConfigError):
        _segmenter(tiny_model, notation="epidoc")
    seg = _segmenter(tiny_model, notation="ddbdp", unknown_slots=3)
    back = _segmenter(tiny_model).from_bytes(seg.to_bytes())
    assert (back.notation, back.unknown_slots) == ("ddbdp", 3)
    assert "|gap=4|" in [t.text for t in back("βουληι|gap=4|δημωι")]


def _gap_pipeline(source: str, model: StoicheiaEncoder | None = None) -> spacy.Language:
    nlp = build_pipeline(source, components=False)
    nlp.tokenizer = StoicheiaSegmenter(nlp.vocab, model_source=source, model=model, lexicon=None)
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 4, "n_candidates": 4, "context": 64}})
    return nlp


def test_pipeline_accentuates_and_restores_in_one_pass() -> None:
    nlp = _gap_pipeline(str(TINY))
    doc = nlp(DECREE)
    (item,) = doc._.restorations
    assert doc.text[item.start:item.end] == "[.4]"
    assert item.min_width == item.max_width == 4 and len(item.candidates) == 4
    best = item.candidates[0].text
    assert len(best) == 4
    assert doc._.restored == doc.text[:item.start] + f"[{best}]" + doc.text[item.end:]
    assert doc._.source_text == DECREE


def test_default_model_accentuates_around_a_gap_and_restores_it(default_model: StoicheiaEncoder) -> None:
    from stoicheia_spacy.assets import default_model_dir

    source = "ΕΔΟΞΕΝΤΗΙΒΟΥΛΗΙΚΑΙΤΩΙΔ[.3]ΩΙ"
    nlp = _gap_pipeline(str(default_model_dir()), default_model)  # share the session's loaded backbone
    doc = nlp(source)
    words = [t.text for t in doc]
    assert "[.3]" in words and len(words) >= 6  # divided, the gap is one token
    assert _letters_outside_gaps(doc.text) == _letters_outside_gaps(source)
    assert doc._.accent_planes.planes.diacritics[doc._.accent_planes.planes.letters != MASK_ID].any()
    (item,) = doc._.restorations
    assert doc.text[item.start:item.end] == "[.3]"
    assert item.candidates and all(len(c.text) == 3 for c in item.candidates)
    probs = [c.share for c in item.candidates]
    assert probs == sorted(probs, reverse=True)


def test_cli_accentuate_restores_gaps() -> None:
    import json

    from typer.testing import CliRunner

    from stoicheia_spacy.cli import app

    res = CliRunner().invoke(app, ["accentuate", DECREE, "--model", str(TINY), "--restore", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert "[.4]" in out["tokens"] and len(out["restorations"]) == 1
    assert out["restored"].count("[") == 1 and "[.4]" not in out["restored"]
    bad = CliRunner().invoke(app, ["accentuate", DECREE, "--model", str(TINY), "--notation", "tei"])
    assert bad.exit_code == 2 and "--notation" in bad.output  # not one of leiden, ddbdp, epidoc, none
    not_xml = CliRunner().invoke(app, ["accentuate", "<p>" + DECREE + "</p>", "--model", str(TINY),
                                       "--notation", "epidoc"])
    assert not_xml.exit_code == 1 and "not a TEI file" in not_xml.output  # epidoc: TEXT is an EpiDoc file
