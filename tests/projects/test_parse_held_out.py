"""projects/parse held-out step: the PapyGreek documentary treebank's regularised layer as a test
DocBin no fold trains on, Leiden marks out of the forms, only sentences annotated throughout."""

from __future__ import annotations

import json
from pathlib import Path

import spacy
from scriptload import load_script
from spacy.tokens import DocBin
from stoicheia_lab.treebanks.readers import RawSentence

REPO = Path(__file__).resolve().parents[2]
convert = load_script(REPO / "projects" / "parse" / "scripts" / "convert.py", "parse_convert_held_out")


def _raw(forms: list[str], tags: list[str], heads: list[int]) -> RawSentence:
    n = len(forms)
    return RawSentence(source="papygreek", doc_id="d", sent_id="1", forms=forms, lemmas=["x"] * n, tags=tags,
                       relations=["PRED"] * n, ids=list(range(1, n + 1)), heads=heads, artificial=[False] * n)


def test_leiden_marks_leave_the_forms_and_half_annotated_sentences_leave_the_set() -> None:
    kept = convert.held_out_sentence(_raw(["[καὶ]", "δρα̣χ(μὰς)", "ἔ{ι}δωκα", "<ἐ>κ", ","],
                                          ["c--------", "n-p---fa-", "v1saia---", "r--------", ""],
                                          [3, 3, 0, 3, 3]))
    assert kept is not None and kept.forms == ["καὶ", "δραχμὰς", "ἔδωκα", "ἐκ", ","]  # untagged comma kept
    assert convert.held_out_sentence(_raw(["καὶ", "[_.?]"], ["c--------", ""], [0, 1])) is None  # a gap
    assert convert.held_out_sentence(_raw(["καὶ", "ἔδωκα"], ["c--------", "v1saia---"], [2, -1])) is None  # no head
    assert convert.held_out_sentence(_raw(["καὶ", "ἔδωκα"], ["c--------", ""], [2, 0])) is None  # an untagged word


def test_held_out_docbin_from_the_mirror(shared_data: Path, tmp_path: Path) -> None:
    assert convert.held_out(str(shared_data), str(tmp_path)) == 0
    stats = json.loads((tmp_path / "stats.json").read_text())["papygreek_reg"]
    assert 0 < stats["sentences"] < stats["sentences_read"] and stats["documents"] > 100
    nlp = spacy.blank("grc")
    docs = list(DocBin().from_disk(tmp_path / convert.HELD_OUT_FILE).get_docs(nlp.vocab))
    tokens = [t for d in docs for t in d]
    assert len(tokens) == stats["words"] and sum(1 for d in docs for _ in d.sents) == stats["sentences"]
    assert not any(set(t.text) & set("[]()<>{}|\u0323") for t in tokens)
    assert all(t.tag_ for t in tokens if not t.is_punct) and all(t.dep_ for t in tokens)
    assert {"Περικλῆς", "χαίρειν"} <= {t.text for t in tokens}
    # split by document: ids ending in 0/1 are the dev part, the rest the test part, together the whole
    parts = stats["parts"]
    assert parts["dev"]["sentences"] + parts["test"]["sentences"] == stats["sentences"]
    assert parts["dev"]["documents"] + parts["test"]["documents"] == stats["documents"]
    assert 0.1 < parts["dev"]["words"] / stats["words"] < 0.35
    for part in ("dev", "test"):
        part_docs = list(DocBin().from_disk(tmp_path / f"papygreek_reg_{part}.spacy").get_docs(nlp.vocab))
        assert sum(1 for d in part_docs for _ in d.sents) == parts[part]["sentences"]
    assert convert.held_out_part("bgu.16.2600") == "dev" and convert.held_out_part("p.oxy.1.41") == "dev"
    assert convert.held_out_part("bgu.16.2586") == "test" and convert.held_out_part("o.bodl") == "test"

    # a sentence the converted corpus already holds (here: a training fold) is not held out
    first = docs[0][:]
    sent = next(first.sents)
    fold = tmp_path / "fold0"
    fold.mkdir()
    DocBin(docs=[sent.as_doc()]).to_disk(fold / "train.spacy")
    assert convert.held_out(str(shared_data), str(tmp_path)) == 0
    again = json.loads((tmp_path / "stats.json").read_text())["papygreek_reg"]
    assert again["also_in_corpus"] >= stats["also_in_corpus"] + 1
    assert again["sentences"] == stats["sentences"] - (again["also_in_corpus"] - stats["also_in_corpus"])
    key = convert.sentence_key([t.text for t in sent])
    held = DocBin().from_disk(tmp_path / convert.HELD_OUT_FILE).get_docs(nlp.vocab)
    assert all(convert.sentence_key([t.text for t in s]) != key for d in held for s in d.sents)
