"""The parallels index on small real Greek documents: the suffix array's order, exact search,
the editors' supplied letters, the leave-own-document-out rule, and clear errors for a missing or
corrupt index."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stoicheia_spacy.errors import ParallelsIndexError
from stoicheia_spacy.parallels.index import (
    DEPTH,
    SEP,
    Document,
    ParallelIndex,
    build_index,
    letters_of,
    papyri_url,
    query_letters,
    suffix_array,
)
from stoicheia_spacy.parallels.search import attest, leave_out, similar

# bgu.1.100 and bgu.2.416 (DDbDP), bgu.2.469 with its editor's supplements in brackets
TEXTS = {
    "bgu.1.100": "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν",
    "bgu.2.416": "χαίρειν ὁμολογῶ πεπρακέναι σοι καμήλους δύο θηλείας αἳ δύο",
    "bgu.2.469": "χαίρειν ὁμολογῶ πεπρακέναι σοι κ[α]μή[λο]ν ἄρρενα ἄβολον λευκόν",
}


def document(doc_id: str, text: str) -> Document:
    """A Document of a Leiden line: bracketed letters are the editor's supplements."""
    letters, supplied, space = [], [], []
    inside = False
    for word in text.split():
        for ch in word:
            if ch in "[]":
                inside = ch == "["
                continue
            sym = letters_of(ch)
            letters += sym.tolist()
            supplied += [inside] * len(sym)
            space += [False] * len(sym)
        space[-1] = True
    return Document(doc_id, "ddbdp", np.array(letters, np.uint8), np.array(supplied), np.array(space),
                    lines=[(0, 1)])


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> ParallelIndex:
    folder = tmp_path_factory.mktemp("parallels") / "index"
    build_index([document(k, v) for k, v in TEXTS.items()], folder)
    return ParallelIndex(folder)


def test_letters_fold_case_accents_and_final_sigma() -> None:
    assert letters_of("Ὥρου καμήλους").tolist() == letters_of("ωρουκαμηλουσ").tolist()
    assert SEP in query_letters("πεπρα[.5] σοι").tolist()
    assert SEP not in query_letters("πεπρα[κεναι] σοι").tolist()  # an editor's restoration keeps its letters


def test_suffix_array_orders_every_letter_by_what_follows() -> None:
    text = letters_of(" ".join(TEXTS.values()) + "\x00" + "ὁμολογῶ πεπρακέναι")
    sa = suffix_array(text)
    padded = np.concatenate([text, np.full(DEPTH, SEP, np.uint8)])
    keys = [bytes(padded[p:p + DEPTH]) for p in sa]
    assert keys == sorted(keys) and len(sa) == int((text != SEP).sum())


def test_exact_search_finds_every_document_of_a_formula(index: ParallelIndex) -> None:
    pos, total = index.positions(letters_of("ὁμολογῶ πεπρακέναι σοι"), 100)
    assert total == 3
    assert sorted(index.ids[d] for d in index.doc_of(pos)) == sorted(TEXTS)
    assert index.positions(letters_of("πεπρακέναι σοι κάμηλον θήλειαν"), 100)[1] == 1


def test_parallel_resting_on_a_supplement_is_flagged_not_counted(index: ParallelIndex) -> None:
    left, right = letters_of("χαίρειν ὁμολογῶ πεπρα"), letters_of("σοι καμηλον")
    att = attest(index, left, letters_of("κεναι"), right, context=8, n=5)
    by_id = {index.ids[h.doc]: h for h in att.hits}
    assert by_id["bgu.1.100"].supplied is False and by_id["bgu.2.469"].supplied is True
    assert att.attested == 2  # bgu.1.100 and bgu.2.416; the supplemented κ[α]μη[λο]ν is no attestation
    # the candidate's own letters must match; one differing context letter is a near hit
    assert attest(index, left, letters_of("καμεν"), right, n=5).hits == ()
    near = attest(index, letters_of("χαίρειν ὁμολογῶ πεπρα"), letters_of("κεναι"), letters_of("σοι καμαλον"),
                  context=8, n=5)
    assert {index.ids[h.doc]: h.distance for h in near.hits}["bgu.1.100"] == 1


def test_the_query_document_and_its_duplicates_are_left_out(index: ParallelIndex) -> None:
    own = TEXTS["bgu.1.100"].replace("πεπρακέναι", "πεπρα[.5]")
    out = leave_out(index, query_letters(own))
    assert [index.ids[d] for d in out] == ["bgu.1.100"]
    assert [index.ids[d] for d in leave_out(index, letters_of("σοι"), "ddbdp:bgu.2.416")] == ["bgu.2.416"]
    assert leave_out(index, letters_of("ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν")) == frozenset()  # a formula
    found = similar(index, query_letters(own), n=5, exclude=out)
    assert [index.ids[d] for d, *_ in found][:2] and "bgu.1.100" not in [index.ids[d] for d, *_ in found]


def test_snippet_shows_word_division_and_supplements(index: ParallelIndex) -> None:
    [hit] = [h for h in attest(index, letters_of("ὁμολογῶ πεπρα"), letters_of("κεναι"), letters_of("σοι κ"),
                               n=5).hits if index.ids[h.doc] == "bgu.2.469"]
    text, start, end = index.snippet(hit.cand_lo, hit.cand_hi, 30)
    assert text[start:end] == "κεναι" and "κ[α]μη[λο]ν" in text and "ομολογω πεπρακεναι σοι" in text
    assert index.line(hit.cand_lo) == 1


def test_papyri_info_links() -> None:
    assert papyri_url("bgu.1.100", "ddbdp") == "https://papyri.info/ddbdp/bgu;1;100"
    assert papyri_url("p.oxy.4.744", "ddbdp") == "https://papyri.info/ddbdp/p.oxy;4;744"
    assert papyri_url("tlg0012.tlg001", "literary") is None
    # a series without volumes: papyri.info leaves the volume empty
    assert papyri_url("chr.mitt.265", "ddbdp") == "https://papyri.info/ddbdp/chr.mitt;;265"
    assert papyri_url("p.gen.2.1.23", "ddbdp") == "https://papyri.info/ddbdp/p.gen.2;1;23"


def test_missing_or_corrupt_index_is_a_clear_error(index: ParallelIndex, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParallelsIndexError, match="lacks"):
        ParallelIndex(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in index.folder.iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    meta = json.loads((broken / "docs.json").read_text(encoding="utf-8"))
    meta["id"] = meta["id"][:-1]
    (broken / "docs.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ParallelsIndexError, match="corrupt"):
        ParallelIndex(broken)
    (broken / "sa.npy").write_bytes(b"not an array")
    with pytest.raises(ParallelsIndexError, match="cannot be read"):
        ParallelIndex(broken)
