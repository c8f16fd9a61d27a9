"""UD Perseus sentences matched to their AGDT 2.1 annotation (``ud_match``) and written by the
parse project's ``convert.py --ud-agdt`` path, on the first real UD Perseus test sentences."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
from pathlib import Path
from types import ModuleType

import pytest
import spacy
from spacy.tokens import DocBin
from stoicheia_lab.treebanks.harmonise import BASE_RELATIONS, base_relation, harmonise, is_tree
from stoicheia_lab.treebanks.readers import RawSentence, iter_conllu, iter_source
from stoicheia_lab.treebanks.ud_match import agdt_members, match_ud_from_source, match_ud_to_agdt

REPO = Path(__file__).resolve().parents[3]
UD_TEST = "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz"
N = 12


def _load_convert() -> ModuleType:
    spec = importlib.util.spec_from_file_location("parse_convert", REPO / "projects/parse/scripts/convert.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ud_rows(shared_data: Path) -> list[RawSentence]:
    return list(itertools.islice(iter_conllu(shared_data / UD_TEST, source="ud_perseus"), N))


def test_match_by_id_key_and_unmatched(shared_data: Path, ud_rows: list[RawSentence]) -> None:
    members = agdt_members(shared_data, ud_rows)
    assert members == ["v2.1/Greek/texts/tlg0008.tlg001.perseus-grc1.12.tb.xml"]
    agdt = [h for r in iter_source(shared_data, "agdt", documents=members) if (h := harmonise(r))]
    match = match_ud_to_agdt(ud_rows, agdt)
    assert match.counts() == {
        "ud_sentences": N, "matched": N, "matched_by_id": N, "matched_by_key": 0,
        "unmatched": 0, "forms_differ": 0, "words": sum(len(r) for r in ud_rows),
    }  # fmt: skip
    for ud, sent in zip(ud_rows, match.sentences, strict=True):
        assert sent.source == "agdt" and ud.sent_id == f"{sent.doc_id}.tb.xml@{sent.sent_id}"
        assert sent.forms == ud.forms and is_tree(sent.heads)
        assert all(base_relation(r) in BASE_RELATIONS for r in sent.relations)
    # AGDT labels, not UD's
    assert "PRED" in {r for s in match.sentences for r in s.relations}
    assert not {"root", "nsubj", "punct"} & {r for s in match.sentences for r in s.relations}

    wrong_id = dataclasses.replace(ud_rows[0], sent_id=ud_rows[0].sent_id.rsplit("@", 1)[0] + "@999999")
    other_text = dataclasses.replace(ud_rows[1], forms=["οὐδείς", "λόγος"])
    fallback = match_ud_to_agdt([wrong_id, other_text, ud_rows[2]], agdt)
    assert (fallback.by_id, fallback.by_key, fallback.unmatched) == (1, 1, [ud_rows[1].sent_id])
    assert fallback.sentences == [match.sentences[0], match.sentences[2]]
    assert match_ud_from_source(shared_data, ud_rows).sentences == match.sentences


def test_convert_writes_agdt_docbins(shared_data: Path, ud_rows: list[RawSentence], tmp_path: Path) -> None:
    convert = _load_convert()
    counts = convert.write_ud_agdt({"test": ud_rows}, tmp_path, assets_dir=shared_data)
    assert counts["test"]["matched"] == N and counts["test"]["unmatched"] == 0
    docs = list(DocBin().from_disk(tmp_path / "ud_perseus_test_agdt.spacy").get_docs(spacy.blank("grc").vocab))
    sents = [s for d in docs for s in d.sents]
    assert [[t.text for t in s] for s in sents] == [r.forms for r in ud_rows]
    assert {t.dep_ for s in sents for t in s} <= {
        "_".join(p) for b in BASE_RELATIONS for p in ((b,), (b, "CO"), (b, "AP"), (b, "AP", "CO"), (b, "PA"), (b, "PA", "CO"))
    }
    assert all(sum(t.head == t for t in s) == 1 for s in sents)


    # step ud-agdt on the whole of UD Perseus dev/test: every sentence matched by id
    (tmp_path / "stats.json").write_text(json.dumps({"agdt": {"sentences": 1}}), encoding="utf-8")
    assert convert.ud_agdt_only(str(shared_data), str(tmp_path)) == 0
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    assert stats["agdt"] == {"sentences": 1}
    for split in ("dev", "test"):
        counts = stats["ud_perseus_agdt"][split]
        assert counts["matched"] == counts["matched_by_id"] == counts["ud_sentences"] > 1000
        assert counts["unmatched"] == counts["forms_differ"] == 0
        assert (tmp_path / f"ud_perseus_{split}_agdt.spacy").is_file()
