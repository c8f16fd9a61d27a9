"""Issue 41, EpiDoc gaps keep their nature: a ``<gap extent="unknown">`` is never written back as
a definite one-letter ``<supplied>``, and supplied letters carry the accentuator's accents."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from stoicheia_spacy.leiden.epidoc import TEI_NS, read_epidoc, write_epidoc
from stoicheia_spacy.restore.results import Candidate, Restoration
from tests.leiden.test_epidoc import tei

NS = {"t": TEI_NS}
# P.Oxy. I 119 l. 12 (DDbDP): the reading of the papyrus breaks off in a gap of unknown extent
OXY_119 = tei('<lb n="12"/>μεγάλα ἀράκια πεπλανηκανη<unclear>μω</unclear>σεκε'
              '<gap reason="lost" extent="unknown" unit="character"/> καὶ <gap reason="lost" quantity="3" '
              'unit="character"/> αὐτοῦ')


def restorations(source, cands_of):  # type: ignore[no-untyped-def]
    view = read_epidoc(source)
    return [Restoration(start=g.start, end=g.end, gap_index=i, kind="lacuna", min_width=g.min_width,
                        max_width=g.max_width, abstain=False, status="restored", candidates=cands_of(g),
                        confidence=0.6, confident=False) for i, g in enumerate(view.gaps)]


def test_unknown_extent_gap_is_not_written_as_a_one_letter_supplied() -> None:
    cands = lambda g: (Candidate("ι", -0.4, 0.7), Candidate("ν", -1.6, 0.3))  # noqa: E731
    out = write_epidoc(OXY_119, restorations(OXY_119, cands)).decode("utf-8")
    root = etree.fromstring(out.encode("utf-8"))
    gaps = root.findall(".//t:gap", NS)
    assert [g.get("extent") for g in gaps] == ["unknown"]  # the unknown gap stays, as it was
    note = root.find(".//t:note[@type='restoration']", NS)
    assert note is not None and "ι (0.700)" in note.text and "ν (0.300)" in note.text
    assert gaps[0].getnext() is note
    # the gap of known width is restored as before: three letters, not the unknown one
    ours = root.findall(".//t:supplied[@resp='#stoicheia']", NS)
    assert len(ours) == 1
    again = read_epidoc(out)
    assert [again.gaps[i].max_width for i in again.restorable] == [None]
    assert "[---]" in again.text


def test_unknown_extent_gaps_of_a_real_papyrus_stay_gaps(epidoc_ddbdp: list[Path]) -> None:
    path = next((p for p in epidoc_ddbdp if p.name == "p.tebt.1.33.xml"), None)
    if path is None:
        pytest.skip("p.tebt.1.33.xml is not in the mirror")
    view = read_epidoc(path)
    unknown = [g for g in view.gaps if g.reason == "lost" and g.unit == "character" and g.max_width is None]
    assert unknown
    out = write_epidoc(path, restorations(path, lambda g: (Candidate("α", -0.1, 0.9),)))
    again = read_epidoc(out)
    left = [g for g in again.gaps if g.reason == "lost" and g.unit == "character" and g.max_width is None]
    assert len(left) == len(unknown)
    assert out.decode("utf-8").count('type="restoration" resp="#stoicheia"') == len(unknown)


def test_supplied_letters_carry_accents_when_the_accentuator_ran() -> None:
    decree = tei('<lb n="1"/>ἔδοξεν τῆι <gap reason="lost" quantity="6" unit="character"/> τῶι δήμωι')
    plain = write_epidoc(decree, restorations(decree, lambda g: (Candidate("βουληι", -0.2, 1.0),)))
    assert ">βουληι</supplied>" in plain.decode("utf-8")  # no accentuator: the scored letters
    accented = write_epidoc(decree, restorations(
        decree, lambda g: (Candidate("βουληι", -0.2, 0.8, accented="βουλῆι"), Candidate("κοινωι", -1.0, 0.2,
                                                                                      accented="κοινῶι"))))
    text = accented.decode("utf-8")
    assert ">βουλῆι</supplied>" in text and ">κοινῶι</supplied>" in text
    assert read_epidoc(accented).text == "ἔδοξεν τῆι [βουλῆι] τῶι δήμωι"
