"""EpiDoc TEI in and out: the reader's Leiden text, the writer's byte-exact splice, hostile XML,
and the real restorer (golden tiny checkpoint) on two short DDbDP files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from stoicheia_spacy.errors import ConfigError, EpiDocError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.leiden.epidoc import (
    MAX_QUANTITY,
    TEI_NS,
    EpiDocText,
    read_epidoc,
    write_epidoc,
)
from stoicheia_spacy.restore.epidoc import restore_epidoc
from stoicheia_spacy.restore.results import Candidate, Restoration

NS = {"t": TEI_NS}
#: what the writer puts in place of a gap element (one per restored gap)
WRITTEN = re.compile(
    r'<(?:(\w+):)?app type="alternative" resp="#stoicheia">.*?</(?:\w+:)?app>'
    r'|<(?:\w+:)?supplied reason="(?:lost|illegible)" cert="low" resp="#stoicheia">[^<]*</(?:\w+:)?supplied>',
    re.S,
)


def tei(edition: str, *, lang: str = ' xml:lang="grc"', root: str = f'<TEI xmlns="{TEI_NS}">',
        close: str = "</TEI>", prolog: str = '<?xml version="1.0" encoding="UTF-8"?>\n') -> str:
    """A small TEI file around the content of its edition div."""
    return (f"{prolog}{root}\n<teiHeader><fileDesc><titleStmt><title>t</title></titleStmt></fileDesc>"
            f"</teiHeader>\n<text><body>\n<div type=\"edition\"{lang} xml:space=\"preserve\"><ab>\n"
            f"{edition}\n</ab></div>\n</body></text>\n{close}\n")


SAMPLE = tei(
    '<lb n="1"/>ἔδοξεν τῆι <gap reason="lost" quantity="4" unit="character"/> δήμωι\n'
    '<lb n="2"/><supplied reason="lost">ἐπ</supplied>ὶ <unclear>τῆ</unclear>ς ἀρ<lb n="3" break="no"/>χῆς\n'
    '<lb n="4"/><expan>Αὐρ<ex>ήλιος</ex></expan> <choice><reg>εἰδέναι</reg><orig>ἰδέναι</orig></choice>\n'
    '<gap reason="lost" atLeast="2" atMost="5" unit="character"/><note>a note [x] - ?</note>\n'
    '<app type="alternative"><lem>καλῶς</lem><rdg>κακῶς</rdg></app> '
    '<subst><add>ἔγραψα</add><del>ἔγραψε</del></subst> <!-- a comment -->\n'
    '<lb n="5"/><gap reason="lost" quantity="6" unit="character" precision="low"/> '
    '<gap reason="lost" extent="unknown" unit="character"/>\n'
    '<foreign xml:lang="la">et</foreign> <gap reason="illegible" quantity="2" unit="character"/>ος &#x3b1;&amp;\n'
    '<lb n="6"/><gap reason="lost" quantity="2" unit="line"/>\n'
    '</ab><div type="textpart" xml:lang="la"><ab>Latin <gap reason="lost" quantity="3" unit="character"/> text'
    '</ab></div><ab>'
)
SAMPLE_TEXT = ("ἔδοξεν τῆι [.4] δήμωι [ἐπ]ὶ τ\u0323ῆ\u0323ς ἀρχῆς Αὐρ(ήλιος) εἰδέναι [2-5] καλῶς ἔγραψα "
               "[ca. 6] [---] et [.2]ος α& |gap=2_lines|")


def fake_restorations(view: EpiDocText) -> list[Restoration]:
    """Restorer records (``doc._.restorations``) for every gap of ``view``, no model."""
    words = ["καὶ", "τοῦ δήμου", "ἐπὶ"]
    out = []
    for number, gap in enumerate(view.gaps):
        top = words[number % len(words)]
        cands = tuple(Candidate(t, s, p) for t, s, p in ((top, -0.5, 0.6), ("τῶν", -1.5, 0.3), ("ὡς", -2.5, 0.1)))
        out.append(Restoration(start=gap.start, end=gap.end, gap_index=number, kind="lacuna",
                               min_width=gap.min_width, max_width=gap.max_width, abstain=False,
                               status="restored", candidates=cands, confidence=0.6, confident=False))
    return out


#: the note the writer adds after a gap of unknown extent (the gap itself stays)
NOTE = re.compile(r'<(?:\w+:)?note type="restoration" resp="#stoicheia">[^<]*</(?:\w+:)?note>')


def unknown_extent(gap) -> bool:  # type: ignore[no-untyped-def]
    """A ``<gap extent="unknown">``: kept, its candidates in a note, never a fixed-width ``<supplied>``."""
    return gap.kind == "gap" and gap.unit == "character" and gap.max_width is None


def outside_touched(original: str, written: str, spans: list[tuple[int, int]]) -> tuple[str, str]:
    """Both files with the touched elements cut out (a NUL each) and our notes after unknown-extent
    gaps dropped, for a byte-exact comparison."""
    written = NOTE.sub("", written)
    pieces, cursor = [], 0
    for start, end in sorted(spans):
        pieces.append(original[cursor:start])
        pieces.append("\0")
        cursor = end
    pieces.append(original[cursor:])
    return "".join(pieces), WRITTEN.sub("\0", written)


# ---------------------------------------------------------------------------- reading
def test_reader_follows_the_epidoc_guidelines() -> None:
    view = read_epidoc(SAMPLE)
    assert view.text == SAMPLE_TEXT
    assert view.message is None and view.language == "grc"
    # every gap of the Leiden text is one of the file's, in order, at the same place
    parsed = parse_gaps(view.text)
    assert [(g.source_start, g.source_end) for g in parsed.gaps] == [(g.start, g.end) for g in view.gaps]
    assert [(g.min_width, g.max_width, g.reason, g.unit) for g in view.gaps] == [
        (4, 4, "lost", "character"), (2, 5, "lost", "character"), (6, 6, "lost", "character"),
        (1, None, "lost", "character"), (2, 2, "illegible", "character"), (None, None, "lost", "line")]
    assert view.gaps[2].approximate and parsed.gaps[2].approximate
    assert view.gaps[5].lines == 2
    assert view.restorable == (0, 1, 2, 3)  # lost letters; illegible and lost lines stay context
    assert [view.text[a:b] for a, b in view.unclear] == ["τ\u0323ῆ\u0323"]
    assert [view.text[a:b] for a, b in view.expansions] == ["ήλιος"]
    assert [view.text[a:b] for a, b in view.supplied] == ["ἐπ"]
    # the Latin textpart, the note, the rdg, the del and the translation are not read
    assert "Latin" not in view.text and "κακῶς" not in view.text and "note" not in view.text
    # the offset map leads back to the nodes
    assert len(view.offsets) == len(view.text) + 1
    assert view.node_at(view.text.index("ήλιος")).endswith("/expan[1]/ex[1]")
    assert view.node_at(view.gaps[0].start) == view.gaps[0].node_path == "/TEI[1]/text[1]/body[1]/div[1]/ab[1]/gap[1]"
    source = SAMPLE
    at = view.source_offsets[view.text.index("δήμωι")]
    assert source[at:at + 5] == "δήμωι"
    assert source[view.gaps[0].source_start:view.gaps[0].source_end] == \
        '<gap reason="lost" quantity="4" unit="character"/>'


def test_reader_options_evaluation_view_and_orig() -> None:
    view = read_epidoc(SAMPLE.encode("utf-8"), supplied="gap", regularised="orig")
    assert view.text.startswith("ἔδοξεν τῆι [.4] δήμωι [.2]ὶ τ\u0323ῆ\u0323ς ἀρχῆς Αὐρ(ήλιος) ἰδέναι [2-5]")
    supplied = [g for g in view.gaps if g.kind == "supplied"]
    assert [(g.gold, g.min_width, g.reason) for g in supplied] == [("ἐπ", 2, "lost")]
    assert supplied[0].node_path.endswith("/supplied[1]")
    with pytest.raises(ConfigError):
        read_epidoc(SAMPLE, supplied="both")  # type: ignore[arg-type]


def test_parse_gaps_reads_epidoc_with_offsets_into_the_xml() -> None:
    gapped = parse_gaps(SAMPLE, notation="epidoc")
    assert gapped.text == parse_gaps(SAMPLE_TEXT).text
    first = gapped.gaps[0]
    assert SAMPLE[first.source_start:first.source_end] == '<gap reason="lost" quantity="4" unit="character"/>'
    at = int(gapped.source_offsets[gapped.text.index("χῆς")])
    assert SAMPLE[at:at + 3] == "χῆς"
    stripped = parse_gaps(SAMPLE, notation="epidoc", strip_restorations=True)
    restored = [g for g in stripped.gaps if g.kind == "restored"]
    assert [g.gold for g in restored] == ["ἐπ"]
    assert SAMPLE[restored[0].source_start:restored[0].source_end] == "ἐπ"


def test_other_languages_no_edition_no_gaps_pass_through() -> None:
    latin = read_epidoc(tei('<lb n="1"/>Imp(erator) <gap reason="lost" quantity="3" unit="character"/>',
                            lang=' xml:lang="la"'))
    assert latin.text == "" and latin.gaps == () and "'la'" in (latin.message or "")
    translit = read_epidoc(tei("<lb/>edoxen", lang=' xml:lang="grc-Latn"'))
    assert translit.text == "" and "not Greek" in (translit.message or "")
    undeclared_latin = read_epidoc(tei("<lb/>senatus populusque", lang=""))
    assert undeclared_latin.text == "" and "not written in Greek" in (undeclared_latin.message or "")
    undeclared_greek = read_epidoc(tei('<lb/>ἔδοξεν <gap reason="lost" quantity="2" unit="character"/>', lang=""))
    assert undeclared_greek.message is None and undeclared_greek.language == "grc"
    no_edition = read_epidoc(f'<TEI xmlns="{TEI_NS}"><text><body><div type="translation"><p>x</p></div>'
                             "</body></text></TEI>")
    assert no_edition.text == "" and "edition" in (no_edition.message or "")
    no_gaps = read_epidoc(tei('<lb n="1"/>ἔδοξεν τῆι βουλῆι <gap reason="illegible" quantity="1" unit="character"/>'))
    assert no_gaps.text == "ἔδοξεν τῆι βουλῆι [.1]" and no_gaps.message is not None
    # nothing to restore: the file comes back as it is, without touching the pipeline
    data = tei("<lb/>ἔδοξεν τῆι βουλῆι").encode("utf-8")
    assert restore_epidoc(None, data) == data  # type: ignore[arg-type]


def test_ddbdp_mirror_reads_with_a_message_or_lost_gaps(epidoc_ddbdp: list[Path]) -> None:
    seen = {"latin": 0, "restorable": 0, "no gap": 0}
    for path in epidoc_ddbdp:
        view = read_epidoc(path)
        parsed = parse_gaps(view.text)
        assert [(g.source_start, g.source_end) for g in parsed.gaps] == [(g.start, g.end) for g in view.gaps], path
        assert len(view.offsets) == len(view.text) + 1
        if view.language == "la":
            seen["latin"] += 1
            assert view.text == "" and view.message is not None
        elif view.restorable:
            seen["restorable"] += 1
            assert view.message is None and re.search("[α-ω]", view.text)
        else:
            seen["no gap"] += 1
            assert view.message == "no lost gap to restore: passed through"
    assert seen == {"latin": 1, "restorable": 11, "no gap": 8}
    papyrus = read_epidoc(next(p for p in epidoc_ddbdp if p.name == "sb.28.16890.xml"))
    # lb break="no" joins inside the word; unclear letters carry a dot below
    assert "Ἁρπαγάθου [ἔγραψα ὑπὲρ α]ὐτοῦ μὴ εἰδέναι α[ὐ]τὸ\u0323[ν γράμματα]" in papyrus.text


# ---------------------------------------------------------------------------- writing
@pytest.mark.parametrize("supplied", ["text", "gap"])
def test_every_ddbdp_file_writes_back_byte_exact(epidoc_ddbdp: list[Path], supplied: str) -> None:
    touched_files = 0
    for path in epidoc_ddbdp:
        original_bytes = path.read_bytes()
        view = read_epidoc(path, supplied=supplied)  # type: ignore[arg-type]
        written_bytes = write_epidoc(path, fake_restorations(view), supplied=supplied)  # type: ignore[arg-type]
        restored = [g for g in view.gaps if g.reason == "lost" and not unknown_extent(g)
                    and not (g.kind == "supplied" and "<lb" in original_bytes.decode()[g.source_start:g.source_end])]
        noted = [g for g in view.gaps if g.reason == "lost" and unknown_extent(g)]
        assert len(NOTE.findall(written_bytes.decode("utf-8"))) == len(noted), path
        if not restored and not noted:
            assert written_bytes == original_bytes, path
            continue
        touched_files += 1
        original, written = original_bytes.decode("utf-8"), written_bytes.decode("utf-8")
        before, after = outside_touched(original, written, [(g.source_start, g.source_end) for g in restored])
        assert before == after, path  # every byte outside the touched gap nodes is unchanged
        # well-formed TEI with the same namespaces, every restored gap replaced
        old_root, new_root = etree.fromstring(original_bytes), etree.fromstring(written_bytes)
        assert new_root.tag == old_root.tag and new_root.nsmap == old_root.nsmap
        ours = new_root.findall(".//t:supplied[@resp='#stoicheia']", NS)
        assert len(ours) == len(restored), path
        assert all(el.get("reason") == "lost" and el.get("cert") == "low" for el in ours)
        readings = new_root.findall(".//t:app[@resp='#stoicheia']/t:rdg", NS)
        assert len(readings) == 2 * len(restored)
        assert {r.get("cert") for r in readings} == ({"0.300", "0.100"} if restored else set())
        # re-read: no lost gap is left where one was restored; the top candidates are text now
        again = read_epidoc(written_bytes, supplied="text")
        assert len([g for g in again.gaps if g.reason == "lost" and g.unit == "character"]) == \
            len([g for g in view.gaps if g.reason == "lost" and g.unit == "character" and g.kind == "gap"]) - \
            len([g for g in restored if g.kind == "gap" and g.unit == "character"])
        assert any(w in again.text for w in ("καὶ", "τοῦ δήμου", "ἐπὶ")) or not restored
    assert touched_files >= 10


def test_writer_keeps_prefixes_encodings_and_escapes() -> None:
    prefixed = tei('<tei:lb/>ἔδοξεν <tei:gap reason="lost" quantity="3" unit="character"/> δήμωι',
                   root=f'<tei:TEI xmlns:tei="{TEI_NS}">', close="</tei:TEI>")
    prefixed = prefixed.replace("<teiHeader>", "<tei:teiHeader>").replace("</teiHeader>", "</tei:teiHeader>")
    for name in ("fileDesc", "titleStmt", "title", "text", "body", "div", "ab"):
        prefixed = prefixed.replace(f"<{name}>", f"<tei:{name}>").replace(f"</{name}>", f"</tei:{name}>")
        prefixed = prefixed.replace(f"<{name} ", f"<tei:{name} ")
    view = read_epidoc(prefixed)
    assert view.text == "ἔδοξεν [.3] δήμωι"
    out = write_epidoc(prefixed, [{"start": view.gaps[0].start, "end": view.gaps[0].end,
                                   "candidates": [("τ&ῶ", -1.0, 0.7), ("ὧν", -2.0, 0.3)]}])
    root = etree.fromstring(out)
    top = root.find(".//tei:app/tei:lem/tei:supplied", {"tei": TEI_NS})
    assert top is not None and top.text == "τ&ῶ" and b"<tei:app " in out and b"&amp;" in out
    # a declared single-byte encoding and a UTF-16 file with its BOM come back in kind
    greek = tei('<lb/>έδοξε <gap reason="lost" quantity="2" unit="character"/>',
                prolog='<?xml version="1.0" encoding="ISO-8859-7"?>\n')
    data = greek.encode("iso-8859-7")
    out = write_epidoc(data, ["δὲ"])  # ὲ is not in ISO-8859-7: a character reference
    assert out.startswith(b'<?xml version="1.0" encoding="ISO-8859-7"?>') and b"&#8050;" in out
    assert out.replace(b'<supplied reason="lost" cert="low" resp="#stoicheia">\xe4&#8050;</supplied>',
                       b'<gap reason="lost" quantity="2" unit="character"/>') == data
    assert read_epidoc(out).text == "έδοξε [δὲ]"
    utf16 = "\ufeff" + tei('<lb/>ἔδοξεν <gap reason="lost" quantity="2" unit="character"/>',
                            prolog='<?xml version="1.0" encoding="UTF-16"?>\n')
    out = write_epidoc(utf16.encode("utf-16-le"), ["δὲ"])
    assert out[:2] == b"\xff\xfe" and read_epidoc(out).text == "ἔδοξεν [δὲ]"


def test_writer_alignment_errors() -> None:
    view = read_epidoc(SAMPLE)
    with pytest.raises(EpiDocError, match="matches no gap"):
        write_epidoc(SAMPLE, [{"start": 0, "end": 1, "candidates": [("α", 0.0, 1.0)]}])
    with pytest.raises(EpiDocError, match="restorations given"):
        write_epidoc(SAMPLE, ["α"])
    # None keeps a gap; only lost gaps are written unless asked
    kept = write_epidoc(SAMPLE, [None] * len(view.gaps))
    assert kept == SAMPLE.encode("utf-8")
    illegible = {4: "αβ"}
    assert write_epidoc(SAMPLE, illegible) == SAMPLE.encode("utf-8")
    written = write_epidoc(SAMPLE, illegible, reasons=("lost", "illegible"))
    assert b'<supplied reason="illegible" cert="low" resp="#stoicheia">\xce\xb1\xce\xb2</supplied>' in written


# ---------------------------------------------------------------------------- hostile input
BOMB = ('<?xml version="1.0"?>\n<!DOCTYPE TEI [\n<!ENTITY a "aaaaaaaaaa">\n<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">\n'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">\n]>\n'
        f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition" xml:lang="grc"><ab>&c;</ab></div></body></text></TEI>')
EXTERNAL = ('<?xml version="1.0"?>\n<!DOCTYPE TEI [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
            f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition" xml:lang="grc"><ab>&xxe;</ab></div></body></text></TEI>')
PARAMETER = ('<?xml version="1.0"?>\n<!DOCTYPE TEI [<!ENTITY % remote SYSTEM "http://example.org/x.dtd"> %remote;]>\n'
             f'<TEI xmlns="{TEI_NS}"/>')


@pytest.mark.parametrize(("source", "message"), [
    (BOMB, "entities"),
    (EXTERNAL, "entities"),
    (PARAMETER, "entities"),
    ("<html><body><p>not TEI</p></body></html>", "not a TEI file"),
    (f'<TEI xmlns="{TEI_NS}"><text><body><div type="edition">', "malformed XML"),
    (b"\x00\x01 not xml at all", "malformed XML"),
    (b"", "empty"),
    (tei(f'<gap reason="lost" quantity="{MAX_QUANTITY + 1}" unit="character"/>'), "not believable"),
    (tei('<gap reason="lost" quantity="99999999999999999999999" unit="character"/>'), "not a whole number"),
    (tei('<gap reason="lost" quantity="-3" unit="character"/>'), "not a whole number"),
    (tei('<gap reason="lost" quantity="0" unit="character"/>'), "at least 1"),
    (tei('<gap reason="lost" atLeast="5" atMost="2" unit="character"/>'), "atLeast=5 > atMost=2"),
    (tei('<gap reason="lost" quantity="5000" unit="line"/>'), "lines"),
    ("<" + "a>" * 300 + "x", "malformed XML"),
])
def test_hostile_or_broken_xml_raises_epidoc_error(source: str | bytes, message: str) -> None:
    with pytest.raises(EpiDocError, match=message):
        read_epidoc(source)
    with pytest.raises(EpiDocError):
        write_epidoc(source, [])


def test_size_is_bounded(tmp_path: Path) -> None:
    data = SAMPLE.encode("utf-8")
    with pytest.raises(EpiDocError, match="larger than max_bytes"):
        read_epidoc(data, max_bytes=len(data) - 1)
    path = tmp_path / "big.xml"
    path.write_bytes(data)
    with pytest.raises(EpiDocError, match="larger than max_bytes"):
        read_epidoc(path, max_bytes=100)
    assert read_epidoc(path).text == SAMPLE_TEXT
    with pytest.raises(EpiDocError, match="cannot read"):
        read_epidoc(tmp_path / "missing.xml")
    # a DTD named by the file is never fetched nor loaded
    remote = SAMPLE.replace('<?xml version="1.0" encoding="UTF-8"?>\n',
                            '<?xml version="1.0" encoding="UTF-8"?>\n'
                            '<!DOCTYPE TEI SYSTEM "http://127.0.0.1:9/tei.dtd">\n')
    assert read_epidoc(remote).text == SAMPLE_TEXT


# ---------------------------------------------------------------------------- the real restorer
@pytest.fixture(scope="module")
def tiny_restorer(tiny_checkpoint: Path):  # type: ignore[no-untyped-def]
    import spacy
    import torch

    from tests.conftest import TINY_MODEL

    torch.set_num_threads(1)
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"model": dict(TINY_MODEL)})
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
        "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(tiny_checkpoint)}}
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 4, "n_candidates": 3, "max_letters": 4}})
    nlp.initialize()
    return nlp


@pytest.mark.parametrize("name", ["sb.28.16843.xml", "o.claud.1.100.xml"])
def test_restore_epidoc_with_the_tiny_restorer(tiny_restorer, epidoc_ddbdp: list[Path], name: str) -> None:  # type: ignore[no-untyped-def]
    path = next(p for p in epidoc_ddbdp if p.name == name)
    view = read_epidoc(path)
    out = restore_epidoc(tiny_restorer, path)
    root = etree.fromstring(out)
    ours = root.findall(".//t:supplied[@resp='#stoicheia']", NS)
    # the same restorations as the pipe gives on the Leiden text
    doc = tiny_restorer(view.text)
    by_start = {item.start: item for item in doc._.restorations}
    expected = [by_start[view.gaps[i].start].candidates[0].text for i in view.restorable
                if by_start[view.gaps[i].start].candidates and not unknown_extent(view.gaps[i])]
    assert [el.text for el in ours] == expected
    noted = [i for i in view.restorable if unknown_extent(view.gaps[i]) and by_start[view.gaps[i].start].candidates]
    assert len(NOTE.findall(out.decode("utf-8"))) == len(noted) and (expected or noted)
    assert all(re.fullmatch(r"[\w\s]+", text) for text in expected)
    original = path.read_text(encoding="utf-8")
    before, after = outside_touched(original, out.decode("utf-8"),
                                    [(view.gaps[i].source_start, view.gaps[i].source_end) for i in view.restorable
                                     if not unknown_extent(view.gaps[i])])
    assert before == after
    again = read_epidoc(out)  # only the gaps of unknown extent are left to restore
    assert [again.gaps[i].max_width for i in again.restorable] == [None] * len(noted)


# ---------------------------------------------------------------------------- other corpora's styles
def test_pretty_printed_inscription_with_a_diplomatic_edition() -> None:
    """I.Sicily / IOSPE style: indented markup, a diplomatic repeat, words split over elements."""
    source = tei(
        '<lb n="1"/><gap reason="lost" extent="unknown" unit="line"/>\n'
        '    <lb n="2"/><supplied reason="lost">Αὐ</supplied>ρ\n'
        "    <expan>\n       <abbr>ἀρχ</abbr>\n       <ex cert=\"low\">ιερεύς</ex>\n    </expan>\n"
        '    <w>ἐ<supplied reason="lost">πὶ</supplied></w> <g ref="#interpunct">·</g>\n'
        '    <lb n="3" break="no"/>τοῦ <gap reason="lost" quantity="3" unit="character" precision="low"/>\n'
        "    <persName type=\"attested\"><name>Κίνωλις</name></persName>",
        lang=' subtype="editorial" xml:lang="grc"',
    ).replace("<text><body>\n", '<text><body>\n<div type="edition" subtype="diplomatic" xml:lang="grc">'
                                  "<ab>ΑΥΡΗΛΙΟΣ</ab></div>\n")
    view = read_epidoc(source)
    assert view.text == "|gap=unknown_lines| [Αὐ]ρ ἀρχ(ιερεύς) ἐ[πὶ] ·τοῦ [ca. 3] Κίνωλις"
    assert [view.text[a:b] for a, b in view.expansions] == ["ιερεύς"]
    out = write_epidoc(source, {1: "τῶν"})
    assert out.decode("utf-8").replace(
        '<supplied reason="lost" cert="low" resp="#stoicheia">τῶν</supplied>',
        '<gap reason="lost" quantity="3" unit="character" precision="low"/>') == source


def test_tei_p4_crlf_and_non_greek_scripts() -> None:
    p4 = ('<?xml version="1.0" encoding="UTF-8"?>\r\n'
          '<!DOCTYPE TEI.2 SYSTEM "http://www.stoa.org/epidoc/dtd/6/tei-epidoc.dtd">\r\n'
          '<TEI.2 id="x"><text lang="en"><body><div type="edition" lang="grc"><ab>\r\n'
          '<lb/>ἔδοξεν <gap reason="lost" extent="3" unit="character"/> δήμωι &foo; καὶ\r\n'
          "</ab></div></body></text></TEI.2>\r\n")
    view = read_epidoc(p4)
    assert view.text == "ἔδοξεν [.3] δήμωι καὶ" and view.gaps[0].min_width == 3
    out = write_epidoc(p4, ["τῶι"]).decode("utf-8")
    assert out == p4.replace('<gap reason="lost" extent="3" unit="character"/>',
                             '<supplied reason="lost" cert="low" resp="#stoicheia">τῶι</supplied>')
    # Elymian written in Greek letters, Greek transliterated into Latin letters: not Greek
    elymian = read_epidoc(tei('<lb n="1"/>ΑΤΑΙΤΥΙΕ <gap reason="lost" quantity="2" unit="character"/>',
                              lang=' xml:lang="xly-Grek"'))
    assert elymian.text == "" and "'xly-Grek'" in (elymian.message or "")


def test_text_that_leiden_would_read_as_markup_is_neutralised() -> None:
    """Digits in a restoration would make "[5]" a lacuna; brackets, dashes, "?" or "|" in the
    file's text would make gaps or line breaks: none of them reaches the Leiden text."""
    view = read_epidoc(tei('ἔτους <supplied reason="lost">5</supplied> <supplied reason="lost">α 5 β.</supplied> '
                           'κα[ὶ] - τοῦ? | δή/μου <gap reason="lost" quantity="2" unit="character"/>'))
    assert view.text == "ἔτους 5 [α] 5 [β] καὶ τοῦ δήμου [.2]"
    assert [g.source_start for g in parse_gaps(view.text).gaps] == [view.gaps[0].start]


def test_word_segmented_repeat_of_an_edition_is_read_once() -> None:
    """IIP style: a ``transcription`` and its ``transcription_segmented`` repeat in ``<w>`` words
    (and a diplomatic one): the text is read once, from the transcription."""
    words = "".join(f'<w xml:lang="grc">{w}</w> ' for w in ("Μνημεῖον", "Πέτρος", "Ἀλφίου"))
    source = tei('Μνημεῖον Πέ<lb break="no"/>τρος <supplied reason="lost">Ἀλ</supplied>φίου',
                 lang=' subtype="transcription" xml:lang="grc"').replace(
        "</body>", f'<div type="edition" subtype="transcription_segmented"><p>{words}</p></div>\n</body>').replace(
        "<text><body>\n", '<text><body>\n<div type="edition" subtype="diplomatic"><p>ΜΝΗΜΕΙΟΝ</p></div>\n')
    assert read_epidoc(source).text == "Μνημεῖον Πέτρος [Ἀλ]φίου"
    # alone (no transcription beside it), the segmented edition is the one read
    alone = tei(words, lang=' subtype="transcription_segmented"')
    assert read_epidoc(alone).text == "Μνημεῖον Πέτρος Ἀλφίου"
