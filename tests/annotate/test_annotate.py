"""``stoicheia annotate`` on the local engine: formats, resumption, bad records, subsets, long texts."""

from __future__ import annotations

import json
from pathlib import Path

import conllu
import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from stoicheia_spacy.annotate import EngineConfig, annotate
from stoicheia_spacy.annotate.convert import merge_records
from stoicheia_spacy.annotate.pieces import split_text
from stoicheia_spacy.annotate.worker import annotate_batch, load_pipeline
from stoicheia_spacy.cli import app
from stoicheia_spacy.errors import ConfigError

GAPPED = "ἔδοξεν τῆι βουλῆι καὶ τῶι [---] δήμωι."


def _write_inputs(folder: Path, sentences: list[str]) -> None:
    folder.mkdir()
    with (folder / "lines.jsonl").open("w", encoding="utf-8") as fh:
        for i, text in enumerate(sentences[:6]):
            fh.write(json.dumps({"id": f"s{i}", "text": text, "work": "ud"}, ensure_ascii=False) + "\n")
        fh.write("{not json\n")
        fh.write(json.dumps({"id": "no-text"}) + "\n")
        fh.write(json.dumps({"id": "nul", "text": "λόγος\x00"}) + "\n")
        fh.write(json.dumps({"id": "gap", "text": GAPPED}, ensure_ascii=False) + "\n")
    (folder / "plain.txt").write_text("\n".join(sentences[6:10]) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def annotated(tmp_path_factory, tiny_pipeline: Path, greek_sentences: list[str]) -> tuple[Path, Path, object]:
    root = tmp_path_factory.mktemp("annotate")
    _write_inputs(root / "in", greek_sentences)
    summary = annotate(root / "in", root / "out", formats=["jsonl", "conllu", "docbin"],
                       config=EngineConfig(model=str(tiny_pipeline)), batch_size=3, progress=False)
    return root / "in", root / "out", summary


def test_every_format_holds_the_same_annotation(annotated, greek_sentences: list[str]) -> None:
    _src, out, summary = annotated
    records = [json.loads(line) for line in (out / "lines.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == [f"s{i}" for i in range(6)] + ["gap"]
    assert records[0]["text"] == greek_sentences[0] and records[0]["meta"] == {"work": "ud"}
    for rec in records:
        assert "".join(w + (" " if s else "") for w, s in zip(rec["words"], rec["spaces"], strict=True)) == rec["text"]
        assert len(rec["tags"]) == len(rec["lemmas"]) == len(rec["heads"]) == len(rec["words"])
        assert all(0 <= h < len(rec["words"]) for h in rec["heads"])
    gap = records[-1]
    assert gap["restorations"] and GAPPED[gap["restorations"][0]["start"]:gap["restorations"][0]["end"]] == "[---]"
    assert gap["restored"].startswith("ἔδοξεν τῆι βουλῆι καὶ τῶι [") and "[---]" not in gap["restored"]
    sentences = conllu.parse((out / "lines.conllu").read_text(encoding="utf-8"))
    assert [t["form"] for s in sentences if s.metadata["sent_id"].startswith("s0-") for t in s] == records[0]["words"]
    assert sentences[0].metadata["newdoc id"] == "s0"
    docs = list(DocBin().from_disk(out / "lines.spacy").get_docs(spacy.blank("grc").vocab))
    assert [d.text for d in docs] == [r["text"] for r in records]
    assert [t.tag_ for t in docs[0]] == records[0]["tags"] and [t.head.i for t in docs[0]] == records[0]["heads"]
    assert docs[-1].user_data["id"] == "gap"
    plain = [json.loads(line) for line in (out / "plain.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in plain] == ["plain:1", "plain:2", "plain:3", "plain:4"]
    assert summary.records == 11 and summary.words == sum(len(r["words"]) for r in records + plain)


def test_bad_records_are_reported_by_id_and_skipped(annotated) -> None:
    _src, out, summary = annotated
    errors = [json.loads(line) for line in (out / "lines.errors.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["id"] for e in errors] == ["lines:7", "no-text", "nul"]
    assert "not JSON" in errors[0]["error"] and "NUL" in errors[2]["error"]
    assert (out / "plain.errors.jsonl").read_text() == ""
    assert len(summary.errors) == 3


def test_a_rerun_skips_finished_shards_and_redoes_missing_ones(annotated, tiny_pipeline: Path) -> None:
    src, out, _summary = annotated
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()}
    again = annotate(src, out, formats=["jsonl", "conllu", "docbin"], config=EngineConfig(model=str(tiny_pipeline)),
                     batch_size=3, progress=False)
    assert sorted(again.skipped) == ["lines", "plain"] and again.records == 0
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()} == before
    (out / "plain.conllu").unlink()
    redo = annotate(src, out, formats=["jsonl", "conllu", "docbin"], config=EngineConfig(model=str(tiny_pipeline)),
                    batch_size=3, progress=False)
    assert redo.skipped == ["lines"] and redo.records == 4
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {k: v[1] for k, v in before.items()}
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_components_subset_runs_only_the_restorer(tiny_pipeline: Path) -> None:
    nlp = load_pipeline(str(tiny_pipeline), ["restorer"])
    assert nlp.pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    out = json.loads(annotate_batch(nlp, json.dumps({"records": [{"id": "g", "text": GAPPED}]})))
    rec = json.loads(out["lines"][0])
    assert rec["restorations"] and "tags" not in rec and "heads" not in rec
    with pytest.raises(ConfigError, match="no component 'tagger'"):
        load_pipeline(str(tiny_pipeline), ["tagger"])


def test_a_failing_record_does_not_lose_its_batch() -> None:
    from spacy.language import Language

    @Language.component("fails_on_skull")
    def fails_on_skull(doc):  # type: ignore[no-untyped-def]
        if "☠" in doc.text:
            raise ValueError("cannot read this")
        return doc

    nlp = spacy.blank("grc")
    nlp.add_pipe("fails_on_skull")
    task = {"records": [{"id": "a", "text": "λόγος ἐστί"}, {"id": "b", "text": "☠ λόγος"},
                        {"id": "c", "text": "μῆνιν ἄειδε"}]}
    out = json.loads(annotate_batch(nlp, json.dumps(task, ensure_ascii=False)))
    assert [json.loads(line)["id"] for line in out["lines"]] == ["a", "c"]
    assert out["errors"] == [{"id": "b", "error": "ValueError: cannot read this"}]


def test_long_texts_are_annotated_in_pieces_and_merged(tiny_pipeline: Path, greek_sentences: list[str]) -> None:
    text = " ".join(greek_sentences[:40]) + " " + GAPPED
    pieces = split_text(text, 600)
    assert "".join(pieces) == text and len(pieces) > 5 and max(map(len, pieces)) <= 600
    assert all(p.endswith((".", "· ", ". ", "; ", " ")) or p is pieces[-1] for p in pieces)
    nlp = load_pipeline(str(tiny_pipeline))
    out = json.loads(annotate_batch(nlp, json.dumps({"records": [{"id": "long", "text": text}]}), max_chars=600))
    rec = json.loads(out["lines"][0])
    assert rec["text"] == text and len(rec["heads"]) == len(rec["words"]) == out["words"]
    assert all(0 <= h < len(rec["words"]) for h in rec["heads"])
    start, end = rec["restorations"][0]["start"], rec["restorations"][0]["end"]
    assert text[start:end] == "[---]"
    whole = [t.text for t in nlp.make_doc(text)]
    assert rec["words"] == whole
    assert merge_records([{"id": "x", "text": "α ", "words": ["α"], "spaces": [True], "heads": [0]},
                          {"id": "x", "text": "β", "words": ["β"], "spaces": [False], "heads": [0]}])["heads"] == [0, 1]


def test_memory_zones_keep_the_vocabulary_flat_and_the_output_the_same(
        tiny_pipeline: Path, greek_sentences: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    tasks = [json.dumps({"tag": k, "records": [{"id": f"{k}.{i}", "text": t} for i, t in
                                               enumerate(greek_sentences[k * 10:(k + 1) * 10])]}, ensure_ascii=False)
             for k in range(3)]
    nlp = load_pipeline(str(tiny_pipeline))
    base = len(nlp.vocab.strings)
    zoned = [json.loads(annotate_batch(nlp, task, batch_chars=400)) for task in tasks]
    assert len(nlp.vocab.strings) == base  # the words, lemmas and tags of 30 sentences were freed
    assert all(t0 <= t1 for out in zoned for t0, t1 in [out["span"]])
    plain = load_pipeline(str(tiny_pipeline))
    monkeypatch.setattr(plain, "memory_zone", lambda *a, **k: contextlib.nullcontext())
    unzoned = [json.loads(annotate_batch(plain, task, batch_chars=400)) for task in tasks]
    assert len(plain.vocab.strings) > base + 100
    assert [o["lines"] for o in zoned] == [o["lines"] for o in unzoned]
    assert sum(o["words"] for o in zoned) > 200


def test_cli_annotates_and_reports(tmp_path: Path, tiny_pipeline: Path, greek_sentences: list[str]) -> None:
    src = tmp_path / "text.txt"
    src.write_text("\n".join(greek_sentences[:3]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["annotate", str(src), "-o", str(tmp_path / "out"), "-m",
                                      str(tiny_pipeline), "--format", "conllu", "--unit", "line", "--quiet"])
    assert result.exit_code == 0, result.output
    assert '"records": 3' in result.output and "words_per_s" in result.output
    assert len(conllu.parse((tmp_path / "out" / "text.conllu").read_text(encoding="utf-8"))) >= 3
    bad = CliRunner().invoke(app, ["annotate", str(src), "-o", str(tmp_path / "o2"), "--format", "xml"])
    assert bad.exit_code == 2 and "--format" in bad.output
    old = CliRunner().invoke(app, ["annotate", str(src), "--out", str(tmp_path / "out"), "-m", str(tiny_pipeline),
                                   "--format", "conllu", "--unit", "line", "--quiet"])
    assert old.exit_code == 0 and "--out is deprecated: use -o/--output" in old.output  # finished files skipped


def test_conllu_of_a_record_with_verse_line_breaks_is_valid() -> None:
    """A line break between verses is a whitespace token in a record, no word in its CoNLL-U (it
    was written as one, with a raw line break in FORM and in ``# text``)."""
    from stoicheia_spacy.annotate.convert import record_to_conllu

    words = ["μῆνιν", "ἄειδε", "θεὰ", "\n", "οὐλομένην", ","]
    record = {"id": "il", "words": words, "spaces": [True, True, False, False, False, False],
              "tags": ["n-s---fa-", "v2spma---", "n-s---fn-", "_SP", "a-s---fa-", "u--------"],
              "lemmas": ["μῆνις", "ἀείδω", "θεά", "\n", "οὐλόμενος", ","], "heads": [1, 1, 1, 4, 1, 1],
              "deps": ["OBJ", "PRED", "SBJ", "AuxG", "ADV", "AuxX"]}
    sent = conllu.parse(record_to_conllu(record))[0]
    assert [w["form"] for w in sent] == ["μῆνιν", "ἄειδε", "θεὰ", "οὐλομένην", ","]
    assert [w["head"] for w in sent] == [2, 0, 2, 2, 2] and [w["id"] for w in sent] == [1, 2, 3, 4, 5]
    assert sent[2]["misc"] == {"SpacesAfter": "\\n"} and sent[3]["misc"] == {"SpaceAfter": "No"}
    assert sent.metadata["text"] == "μῆνιν ἄειδε θεὰ οὐλομένην,"
