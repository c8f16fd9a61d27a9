"""Attested parallels from the real parallels index of the lexicon data package (skipped where
it is not installed): the issue's example, a sale of a camel (bgu.1.100, ὁμολογῶ πεπρακέναι σοι
κάμηλον), gets parallels from other papyri and never from itself; the restorer's service fills
``Candidate.parallels`` with typed records; ``stoicheia parallels`` and ``doc._.parallels``."""

from __future__ import annotations

import json

import pytest
import spacy
from typer.testing import CliRunner

from stoicheia_spacy.accent.lexasset import find_parallels
from stoicheia_spacy.cli.app import app
from stoicheia_spacy.errors import ParallelsIndexError
from stoicheia_spacy.restore.parallels import CandidateParallels
from stoicheia_spacy.restore.results import Candidate, Parallel, Restoration

# bgu.1.100, lines 1-4 (DDbDP), the perfect infinitive lost
LINE = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"


@pytest.fixture(scope="module")
def installed() -> None:
    try:
        find_parallels()
    except ParallelsIndexError as exc:
        pytest.skip(f"no parallels index installed: {exc}")


def gap() -> Restoration:
    start = LINE.index("[.5]")
    cands = (Candidate("κεναι", -16.5, 0.79), Candidate("καμεν", -24.2, 0.13), Candidate("γμενα", -30.1, 0.03))
    return Restoration(start, start + 4, 0, 5, 5, "lost", cands, 0.8, True, False)


def test_the_camel_sale_has_parallels_from_other_papyri(installed: None) -> None:
    [[item]] = CandidateParallels(top=3)([LINE], [[gap()]])
    top = item.candidates[0]
    assert top.text == "κεναι" and len(top.parallels) == 3
    assert all(isinstance(p, Parallel) for p in top.parallels)
    assert "bgu.1.100" not in {p.id for p in top.parallels}  # its own document is left out
    for p in top.parallels:
        assert p.text[p.start:p.end] == "κεναι" and "πεπρακεναι σοι" in p.text.replace("[", "").replace("]", "")
        assert p.url and p.url.startswith("https://papyri.info/ddbdp/")
    assert top.parallels[0].exact and not top.parallels[0].supplied  # attested, unsupplemented, ranked first
    assert item.to_dict()["candidates"][0]["parallels"][0]["id"] == top.parallels[0].id
    assert Restoration.from_dict(item.to_dict()) == item


def test_off_by_default_and_needs_no_index() -> None:
    service = CandidateParallels()
    assert not service.active
    item = gap()
    assert service([LINE], [[item]]) == [[item]]


def test_a_missing_data_package_names_it() -> None:
    service = CandidateParallels(top=3, package="stoicheia_no_such_data")
    with pytest.raises(ParallelsIndexError, match="stoicheia-no-such-data"):
        service([LINE], [[gap()]])


def test_parallels_pipe_and_command(installed: None) -> None:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_parallels", config={"n": 3})
    doc = nlp(LINE)
    ids = [p.id for p in doc._.parallels]
    assert ids and "bgu.1.100" not in ids and all(p.shared >= 1 for p in doc._.parallels)
    result = CliRunner().invoke(app, ["parallels", "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν", "--json", "--top", "2"])
    assert result.exit_code == 0, result.output
    [passages] = [json.loads(line) for line in result.output.splitlines() if line.startswith("[")]
    assert len(passages) == 2 and passages[0]["url"].startswith("https://papyri.info/")
    assert "bgu.1.100" in {p["id"] for p in passages}  # a formula is not a document: its holders are found
