"""projects/restore/scripts/inscriptions.py: the open inscriptions (IOSPE, IIP) read with the
EpiDoc reader, split by the last digit of their id, frozen as restoration samples and as n-gram
training text; a malformed file is skipped with a message naming it."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from stoicheia_spacy.leiden.epidoc import TEI_NS

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "projects" / "restore" / "scripts"
FROZEN = REPO / "projects" / "restore" / "samples" / "inscriptions"


@pytest.fixture(scope="module")
def ins():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(SCRIPTS))
    try:
        return __import__("inscriptions")
    finally:
        sys.path.remove(str(SCRIPTS))


def tei(edition: str) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<TEI xmlns="{TEI_NS}"><teiHeader><fileDesc><titleStmt>'
            f'<title>t</title></titleStmt></fileDesc></teiHeader><text><body>'
            f'<div type="edition" xml:lang="grc"><ab>{edition}</ab></div></body></text></TEI>\n')


EPITAPH = ('Μνημεῖον Πασιφάης Διονυσίου, <supplied reason="lost">παυ</supplied>σαμένη μετὰ καλοῦ '
           'ὀνόματος ἐτῶν <gap reason="lost" quantity="2" unit="character"/> ἔτους τβιʹ. '
           'Θάρσει, <unclear>οὐ</unclear>δεὶς ἀθάνατος. <foreign xml:lang="he">שלום</foreign> '
           '<expan>Κ<ex>υρίο</ex>υ</expan> <gap reason="lost" extent="unknown" unit="character"/>')


def test_split_rule_is_the_last_digit_of_the_id(ins) -> None:  # type: ignore[no-untyped-def]
    assert [ins.inscription_digit(x) for x in ("3.123", "5.88a", "jeru0123", "2.1.1.100", "abur")] == [3, 8, 3, 0, None]
    # as the papyri: digit fold is test, fold + 1 dev (mod 10), the other eight train
    assert [ins.split_of(d, 3) for d in (3, 4, 5, 2, None)] == ["test", "dev", "train", "train", None]
    assert [ins.split_of(d, 9) for d in (9, 0, 3)] == ["test", "dev", "train"]


def test_document_text_keeps_certain_greek_and_marks_lacunae(ins) -> None:  # type: ignore[no-untyped-def]
    from stoicheia_spacy.leiden.epidoc import read_epidoc

    text, sure = ins.document_text(read_epidoc(tei(EPITAPH), supplied="gap").text)
    # the editor's supplement and the gaps are lost letters (…), Hebrew is dropped, the expansion stays
    assert text == ("Μνημεῖον Πασιφάης Διονυσίου, ………σαμένη μετὰ καλοῦ ὀνόματος ἐτῶν …… ἔτους τβιʹ. "
                    "Θάρσει, οὐδεὶς ἀθάνατος. Κυρίου ………")
    assert len(sure) == len(text)
    marked = {text[i] for i, s in enumerate(sure) if s == "1"}
    assert "…" not in marked and "," not in marked and "ʹ" not in marked
    flags = dict(zip(("οὐ", "υρίο", "δεὶς", "Κ"), (text.index("οὐδεὶς"), text.index("υρίο"),
                                                     text.index("δεὶς"), text.index("Κυρίου")), strict=True))
    assert sure[flags["οὐ"] : flags["οὐ"] + 2] == "00"  # unclear letters: context, never gold
    assert sure[flags["υρίο"] : flags["υρίο"] + 4] == "0000"  # resolved abbreviation: the same
    assert sure[flags["δεὶς"] : flags["δεὶς"] + 4] == "1111" and sure[flags["Κ"]] == "1"


def test_malformed_file_is_skipped_with_a_clear_message(ins, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                        caplog: pytest.LogCaptureFixture) -> None:
    for name in ins.COLLECTIONS:
        (tmp_path / "epidoc" / name).mkdir(parents=True)
    (tmp_path / "epidoc" / "iospe" / "1.13.xml").write_text(tei(EPITAPH), encoding="utf-8")
    (tmp_path / "epidoc" / "iip" / "sepp0024.xml").write_text(tei("Θάρσει, οὐδεὶς ἀθάνατος."), encoding="utf-8")
    (tmp_path / "epidoc" / "iip" / "sepp0018.xml").write_text(tei("Θάρσει <").replace("</ab>", "<ab>"),
                                                              encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="inscriptions"):
        docs = list(ins.read_inscriptions(tmp_path, fold=3))
    assert [(d["id"], d["digit"], d["split"]) for d in docs] == [("iospe:1.13", 3, "test"), ("iip:sepp0024", 4, "dev")]
    [message] = [r.getMessage() for r in caplog.records]
    assert message.startswith("skipped iip/sepp0018.xml: malformed XML")


def test_the_mirror_reads_and_the_frozen_samples_rebuild(ins, shared_data: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "samples"
    assert ins.main(["samples", "--mirror", str(shared_data), "--fold", "3", "--per-length", "100",
                     "--out", str(out)]) == 0
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert [m.split(":")[0] for m in stats["skipped_files"]] == [f"skipped iip/sepp00{n}.xml" for n in (18, 19, 20, 21)]
    for split, digit in (("test", "3"), ("dev", "4")):
        rows = [json.loads(x) for x in (out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]
        frozen = (FROZEN / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        assert (out / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()[:50] == frozen[:50]  # deterministic
        assert len(rows) == len(frozen) == 10 * stats[split]["samples_per_L"]["1"]
        assert set(stats[split]["samples_per_L"].values()) == {len(rows) // 10}  # equal numbers per L
        for r in rows:
            assert ins.inscription_digit(r["id"].split(":")[1]) == int(digit)
            assert len(r["gold"]) == r["L"] and r["text"][r["start"] : r["start"] + r["L"]] == "?" * r["L"]
            assert ins.GAP_RE.match(r["gold"])
    assert stats["test"]["documents"] > 150 and stats["train"]["letters"] > 80_000
    train = tmp_path / "train.txt"
    assert ins.main(["train", "--mirror", str(shared_data), "--fold", "3", "--out", str(train)]) == 0
    lines = train.read_text(encoding="utf-8").splitlines()
    assert "…" not in "".join(lines) and all(line == line.strip() and line for line in lines)
    assert sum(ins.letters(x) for x in lines) == stats["train"]["letters"]
