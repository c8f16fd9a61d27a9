from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from stoicheia_lab.treebanks.readers import (
    SOURCES,
    iter_conllu_full,
    iter_source,
    iter_treebank,
    iter_xml_sentences,
    list_documents,
)

from stoicheia_spacy.errors import TreebankError


def test_sample_sizes(raw_samples) -> None:
    sizes = {n: (len(s), sum(len(x) for x in s)) for n, s in raw_samples.items()}
    print(sizes)
    assert sizes == {
        "agdt": (197, 4409),
        "homer": (181, 2967),
        "gorman": (180, 3730),
        "pedalion": (1008, 13064),
    }
    first = raw_samples["gorman"][0]
    assert first.forms[:4] == ["περὶ", "πολλοῦ", "ἂν", "ποιησαίμην"]  # Lysias 1.1
    assert first.heads[:4] == [4, 1, 4, 0]
    assert first.work_id == "tlg0540.tlg001"
    assert raw_samples["agdt"][0].work_id == "tlg0540.tlg001"
    assert raw_samples["agdt"][-1].work_id == "tlg0540.tlg023"
    # Pedalion names works "0019-001"-style or not at all; artificial nodes are flagged.
    assert any(any(s.artificial) for s in raw_samples["agdt"])


def test_all_archives_listed(shared_data: Path) -> None:
    for spec in SOURCES.values():
        assert list_documents(shared_data / spec.archive, spec.pattern)


def test_directory_equals_archive(shared_data: Path, tmp_path: Path) -> None:
    spec = SOURCES["pedalion"]
    member = "public/xml/mimn.xml"
    with tarfile.open(shared_data / spec.archive, "r:xz") as tar:
        tar.extractall(tmp_path, members=[tar.getmember(member)], filter="data")
    from_dir = list(iter_treebank(tmp_path, source="pedalion", pattern=spec.pattern))
    from_tar = list(iter_source(shared_data, "pedalion", documents=[member]))
    assert from_dir == from_tar and len(from_dir) > 10


def test_bad_inputs_raise(tmp_path: Path) -> None:
    with pytest.raises(TreebankError):
        list(iter_treebank(tmp_path / "missing.tar.xz", source="x"))
    with pytest.raises(TreebankError):
        list(iter_source(tmp_path, "nonexistent"))
    broken = io.BytesIO('<treebank><sentence id="1"><word id="1" form="λόγος"'.encode())
    with pytest.raises(TreebankError):
        list(iter_xml_sentences(broken, source="x", doc_id="broken"))


def test_conllu_reader(shared_data: Path) -> None:
    path = shared_data / "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-dev.conllu.xz"
    sents = list(iter_conllu_full(path))
    assert len(sents) == 1137
    first, upos, feats = sents[0]
    assert first.forms[:3] == ["τὰ", "γὰρ", "πρὸ"]
    assert upos[:3] == ["DET", "ADV", "ADP"]
    assert feats[0] == "Case=Acc|Gender=Neut|Number=Plur"
    assert first.tags[0] == "l-p---na-" and first.heads[0] == 11
    assert sum(len(s) for s, _, _ in sents) == 22135


def test_papygreek_is_read_in_its_regularised_layer_and_held_out_of_the_folds(shared_data: Path) -> None:
    from stoicheia_lab.treebanks.readers import HELD_OUT, source_path

    assert "papygreek" in HELD_OUT and "papygreek" not in SOURCES  # convert.py's folds iterate SOURCES
    doc = ["documentary/bgu/bgu.1.261.xml"]
    (first, *_) = iter_source(shared_data, "papygreek", documents=doc)
    assert first.forms[:3] == ["Θερμουθᾶς", "Ἀπολιναρίῳ", "τῷ"]
    assert first.lemmas[:2] == ["Θερμουθᾶς", "Ἀπολλινάριος"]  # lemma_reg, the normalised name
    assert first.tags[:2] == ["n-s---fn-", "n-s---md-"] and first.relations[:2] == ["SBJ", "OBJ"]
    assert first.heads[:3] == [8, 8, 4]
    # the scribe's spelling is the orig layer's; the editors' regularisation the reg layer's
    reg = list(iter_source(shared_data, "papygreek", documents=doc))
    orig = list(iter_treebank(source_path(shared_data, "papygreek"), source="papygreek", documents=doc,
                              pattern="documentary/*/*.xml", layer="orig"))
    assert len(orig) == len(reg) == 14
    assert reg[1].forms[0] == "γιγνώσκειν" and orig[1].forms[0] == "γεινώσκειν"
    with pytest.raises(TreebankError, match="layer"):
        next(iter_treebank(source_path(shared_data, "papygreek"), source="papygreek", documents=doc,
                           pattern="documentary/*/*.xml", layer="diplomatic"))
