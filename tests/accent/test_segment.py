"""Segmenter tokenizer, alignment, lexicon baseline and the CLI command."""

from __future__ import annotations

import numpy as np
import spacy
from typer.testing import CliRunner

from stoicheia_spacy.accent.align import align
from stoicheia_spacy.accent.lexicon import LexiconAccentuator
from stoicheia_spacy.accent.predict import PlaneControl, strip_planes
from stoicheia_spacy.accent.segment import StoicheiaSegmenter
from stoicheia_spacy.codec import PUNCT_OUT, decode_planes, encode_planes, word_spans
from tests.conftest import TINY


def _nlp(**cfg: object) -> spacy.Language:
    return spacy.blank("grc", config={"nlp": {"tokenizer": {
        "@tokenizers": "stoicheia.Segmenter.v1", "model_source": str(TINY), "lexicon": None, **cfg}}})


def _check_doc(doc, source: str) -> None:  # type: ignore[no-untyped-def]
    assert doc._.source_text == source
    words = [t.text for t in doc if t.text not in PUNCT_OUT]
    assert words == doc.text.replace("·", " ").replace(",", " ").replace(".", " ").replace(";", " ") \
        .replace(":", " ").split()
    al = doc._.source_alignment
    assert len(al.rendered_to_source) == len(doc.text) and len(al.source_to_rendered) == len(source)
    src, out = encode_planes(source), encode_planes(doc.text)
    assert np.array_equal(src.letters, out.letters)
    # letter k of the source <-> letter k of the rendered text, both directions
    assert np.array_equal(al.rendered_to_source[out.offsets], src.offsets)
    assert np.array_equal(al.source_to_rendered[src.offsets], out.offsets)


def test_segmenter_doc_text_tokens_alignment(ud_texts) -> None:  # type: ignore[no-untyped-def]
    nlp = _nlp(boundary="predict")
    sources = ["ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ"] + [decode_planes(strip_planes(encode_planes(t))) for t in ud_texts[:6]]
    for source, doc in zip(sources, nlp.pipe(sources), strict=True):
        _check_doc(doc, source)
        assert " " not in source


def test_segmenter_keeps_given_accents_and_spaces(ud_texts) -> None:  # type: ignore[no-untyped-def]
    nlp = _nlp(boundary="copy", punctuation="copy", capitals="copy")
    text = ud_texts[3]
    doc = nlp(text)
    _check_doc(doc, text)
    assert doc.text == decode_planes(encode_planes(text))  # everything given: nothing changes


def test_segmenter_round_trip_to_disk(tmp_path, ud_texts) -> None:  # type: ignore[no-untyped-def]
    nlp = _nlp(boundary="predict", capitals="drop")
    source = decode_planes(strip_planes(encode_planes(ud_texts[7])))
    before = nlp(source).text
    nlp.to_disk(tmp_path / "nlp")
    assert (tmp_path / "nlp" / "tokenizer" / "model.safetensors").is_file()
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.tokenizer.control.capitals == "drop"
    assert loaded(source).text == before


def test_align_with_mask_and_non_greek() -> None:
    source = "λογ◌ς 12 καὶ"
    planes = encode_planes("λογος καὶ")
    planes.letters[3] = 24  # MASK
    planes.offsets[:] = [0, 1, 2, 3, 4, 9, 10, 11]
    rendered = decode_planes(planes)
    al = align(source, planes, rendered)
    assert rendered == "λογ◌ς καὶ"
    assert al.rendered_to_source.tolist() == [0, 1, 2, 3, 4, -1, 9, 10, 11]
    assert al.source_to_rendered[6] == -1 and al.source_to_rendered[11] == 8


def test_lexicon_dp_segments_and_accents(ud_texts) -> None:  # type: ignore[no-untyped-def]
    lex = LexiconAccentuator.from_texts(ud_texts[:150], exclude=ud_texts[100:150])
    assert lex.counts and encode_planes("καὶ").letters.tobytes() in lex.counts
    gold = encode_planes("καὶ τὸν ἄνθρωπον")
    pred = lex.predict(strip_planes(gold))
    assert decode_planes(pred) == "καὶ τὸν ἄνθρωπον" or "ἄνθρωπον" not in " ".join(ud_texts[:100])
    # held-out sentences are excluded
    held = encode_planes(ud_texts[120])
    long = max((held.letters[s:e].tobytes() for s, e in word_spans(held).tolist()), key=len)
    only_held = all(long not in encode_planes(t).letters.tobytes() for t in ud_texts[:100])
    assert not only_held or long not in lex.counts


def test_lexicon_round_trip(tmp_path, ud_texts) -> None:  # type: ignore[no-untyped-def]
    lex = LexiconAccentuator.from_texts(ud_texts[:20])
    lex.to_disk(tmp_path / "lex.json.gz")
    back = LexiconAccentuator.from_disk(tmp_path / "lex.json.gz")
    bare = strip_planes(encode_planes(ud_texts[5]))
    assert back.predict(bare) == lex.predict(bare)
    assert [tuple(s) for s in back.segment(bare.letters)] == lex.segment(bare.letters)


def test_cli_accentuate() -> None:
    from stoicheia_spacy.cli import app

    res = CliRunner().invoke(app, ["accentuate", "εναρχηηνολογος", "--model", str(TINY), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert '"source": "εναρχηηνολογος"' in res.output
    bad = CliRunner().invoke(app, ["accentuate", "λογος", "--model", str(TINY), "--boundary", "guess"])
    assert bad.exit_code == 2 and "--boundary" in bad.output  # not one of keep, copy, predict, drop


def test_segmenter_control_object() -> None:
    seg = StoicheiaSegmenter(spacy.blank("grc").vocab, model_source=str(TINY),
                             control=PlaneControl(diacritics="drop", boundary="copy", punctuation="drop",
                                                  capitals="drop"))
    doc = seg("ἐν ἀρχῇ")
    assert doc.text == "εν αρχη"
