"""Doc-clean screen, blocklist, fetch and the step CLI on small real-Greek records."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from stoicheia_lab.corpus.__main__ import main
from stoicheia_lab.corpus.docclean import Blocklist, doc_clean
from stoicheia_lab.corpus.fetch import fetch_asset
from stoicheia_lab.corpus.verify import verify_doc_clean

from stoicheia_spacy.errors import AssetChecksumError, CorpusError

from .greek_samples import HDT, HESIOD, ILIAD, JOHN, MEMORABILIA, PAPYRUS, PLATO, THUC, XEN, rec


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_doc_clean_removes_quotes_and_blocklist(tmp_path: Path) -> None:
    quoting = rec("quoting", f"{HDT} ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν δευτερόβολον πυρρὰν κεχαραγμένον δεξιῷ. {THUC}", "tlg0016.tlg001")
    blocked_passage = rec("hes", f"{HESIOD} {MEMORABILIA}", "tlg0020.tlg001")
    literary = [quoting, blocked_passage, rec("john", JOHN, "tlg0031.tlg004"),
                rec("xen", XEN, "tlg0032.tlg006"), rec("plato", PLATO, "tlg0059.tlg002"),
                rec("iliad", ILIAD, "tlg0012.tlg001")]
    zones = np.array([1, 2, 3, 4, 0, 5])
    blfile = tmp_path / "blocklist.txt"
    blfile.write_text("# test blocklist\nΠολλάκις ἐθαύμασα τίσι ποτὲ λόγοις\nwork:tlg0032.tlg006\n", encoding="utf-8")
    bl = Blocklist.read(blfile)
    assert bl.works == {"tlg0032.tlg006"} and len(bl.passages) == 1
    docs = [rec("bgu.1.100", PAPYRUS, "doc:tm8875", "ddbdp")]
    stats = doc_clean(literary, zones, docs, bl, tmp_path / "dc", chunk_words=20)
    train = "\n".join(r["text"] for r in _read(tmp_path / "dc" / "train.jsonl"))
    assert "κάμηλον" not in train and "Πολλάκις" not in train and "Παρυσάτιδος" not in train
    assert HDT in train and THUC in train and HESIOD in train and JOHN in train
    assert [r["id"] for r in _read(tmp_path / "dc" / "dev.jsonl")] == ["perseus:plato"]
    assert stats["train"]["doc_ngram"] >= 1 and stats["train"]["blocklist_short"] == 1
    assert stats["blocklist_records_dropped"] == 1
    ok = verify_doc_clean(tmp_path / "dc", docs, bl.passages)
    assert ok["leaked_ngrams"] == 0 and ok["dev_leaked_5grams"] == 0
    with (tmp_path / "dc" / "train.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec("leak", "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι", "x")) + "\n")
    assert verify_doc_clean(tmp_path / "dc", docs, bl.passages)["leaked_ngrams"] > 0


def test_blocklist_rejects_non_greek_line(tmp_path: Path) -> None:
    path = tmp_path / "bl.txt"
    path.write_text("just latin words\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="line 1"):
        Blocklist.read(path)
    with pytest.raises(CorpusError, match="cannot read"):
        Blocklist.read(tmp_path / "missing.txt")


def test_fetch_from_mirror_verifies_sha(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STOICHEIA_ASSET_MIRROR", raising=False)
    dest = fetch_asset("glaux_metadata", tmp_path / "assets", mirror=shared_data)
    assert dest.read_bytes() == (shared_data / "text" / "glaux_metadata.txt").read_bytes()
    bad = tmp_path / "badmirror" / "text"
    bad.mkdir(parents=True)
    (bad / "glaux_metadata.txt").write_text("tampered", encoding="utf-8")
    with pytest.raises(AssetChecksumError):
        fetch_asset("glaux_metadata", tmp_path / "other", mirror=tmp_path / "badmirror")
    with pytest.raises(CorpusError, match="STOICHEIA_ASSET_MIRROR"):
        fetch_asset("perseus", tmp_path / "other")


def test_cli_steps_end_to_end(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    texts = {"perseus": [PLATO, HDT, THUC], "tesserae": [ILIAD, HESIOD], "first1k": [JOHN], "glaux": [XEN, MEMORABILIA]}
    norm = corpus / "normalized"
    norm.mkdir(parents=True)
    for src, items in texts.items():
        with (norm / f"{src}.jsonl").open("w", encoding="utf-8") as fh:
            for i, t in enumerate(items):
                fh.write(json.dumps(rec(f"{src}{i}", t, f"tlg{i:04d}.{src}", src), ensure_ascii=False) + "\n")
    (norm / "ddbdp.jsonl").write_text(json.dumps(rec("bgu.1.100", PAPYRUS, "doc:tm8875", "ddbdp"), ensure_ascii=False) + "\n", encoding="utf-8")
    for step in (["tiers"], ["folds"], ["doc-clean"], ["verify"], ["report"]):
        assert main([*step, "--corpus", str(corpus)]) == 0
    tiered = _read(corpus / "tiered" / "literary.jsonl")
    assert len(tiered) == 8 and {r["tier"] for r in tiered} == {"gold"}
    assert all((corpus / f"fold_{k}" / "train.jsonl").is_file() for k in range(10))
    assert json.loads((corpus / "manifests" / "verify.json").read_text())["passed"]
    assert (corpus / "report" / "zone_sizes.png").stat().st_size > 1000
    assert "## Verification" in (corpus / "report" / "report.md").read_text(encoding="utf-8")
    assert main(["folds", "--corpus", str(tmp_path / "nothing")]) == 1
