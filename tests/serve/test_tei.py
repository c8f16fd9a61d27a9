"""Pasted Leiden text as an EpiDoc edition: the file's gaps are the text's, in order."""

from __future__ import annotations

from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.leiden.epidoc import read_epidoc, write_epidoc
from stoicheia_spacy.restore.results import Candidate, Restoration
from stoicheia_spacy.serve.tei import by_gap_index, leiden_to_tei

TEXT = "ἔδοξεν τῆι [βουλῆι] καὶ τῶι [.4]ωι· Κεκροπὶς [ca. 6] ἐπρυτάνευε, [.2-5] ἐγραμμάτευε [---] ἐπεστάτει"


def test_gaps_and_restorations_become_tei() -> None:
    data = leiden_to_tei(TEXT)
    view = read_epidoc(data)
    gaps = parse_gaps(TEXT).gaps
    assert [(g.min_width, g.max_width) for g in view.gaps] == [(g.min_width, g.max_width) for g in gaps]
    assert view.restorable == tuple(range(len(gaps)))
    assert b'<supplied reason="lost">\xce\xb2\xce\xbf\xcf\x85\xce\xbb\xe1\xbf\x86\xce\xb9</supplied>' in data
    assert "[βουλῆι]" in view.text and "Κεκροπὶς" in view.text


def test_restorer_items_are_written_by_gap_index() -> None:
    data = leiden_to_tei(TEXT)
    items = [Restoration(start=28, end=32, gap_index=0, min_width=3, max_width=3, kind="lacuna",
                         candidates=(Candidate("δημ", -1.0, 0.7), Candidate("βουλ", -2.0, 0.3)),
                         confidence=0.7, confident=True, abstain=False),
             Restoration(start=0, end=1, gap_index=None, min_width=1, max_width=1, kind="lacuna",
                         candidates=(), confidence=0.0, confident=False, abstain=True)]
    out = write_epidoc(data, by_gap_index(items))
    assert out.count(b'resp="#stoicheia"') >= 1 and "δημ".encode() in out
    assert len(read_epidoc(out).restorable) == len(parse_gaps(TEXT).gaps) - 1
