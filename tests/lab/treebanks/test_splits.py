from __future__ import annotations

from pathlib import Path

import pytest
from stoicheia_lab.treebanks.harmonise import Sentence
from stoicheia_lab.treebanks.readers import iter_conllu
from stoicheia_lab.treebanks.splits import make_splits, sentence_key

from stoicheia_spacy.errors import TreebankError


def test_sentence_key_folds_diacritics_case_sigma() -> None:
    assert sentence_key(["Περὶ", "πολλοῦ", ",", "ὦ", "ἄνδρες"]) == "περι πολλου ω ανδρεσ"
    assert sentence_key(["ΛΟΓΟΣ", "λόγοϲ"]) == sentence_key(["λόγος", "λογος"])
    assert sentence_key(["δ’", "ἐστί"]) == "δ εστι"


def _chunks(samples: dict[str, list[Sentence]]) -> list[Sentence]:
    """Sample sentences, with each source cut into 4 pseudo-documents so that the
    splitter has enough units to fill 5 folds and a test part."""
    out = []
    for sents in samples.values():
        for i, s in enumerate(sents):
            doc = f"{s.doc_id}#{i * 4 // len(sents)}"
            out.append(
                Sentence(
                    s.source, doc, s.sent_id, "", s.forms, s.lemmas, s.tags, s.relations, s.heads
                )
            )
    return out


def test_splits_are_deterministic_document_level_and_disjoint(
    harmonised_samples, shared_data: Path
) -> None:
    sents = _chunks(harmonised_samples)
    ud_keys = {
        sentence_key(s.forms)
        for split in ("dev", "test")
        for s in iter_conllu(
            shared_data / f"ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-{split}.conllu.xz"
        )
    }
    # plant two UD Perseus dev sentences into the sample, as an AGDT 2.1 document would have them
    planted = [
        s
        for s in iter_conllu(
            shared_data / "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-dev.conllu.xz"
        )
    ][:2]
    for k, p in enumerate(planted):
        sents.append(
            Sentence(
                "agdt", "planted", str(k), "", p.forms, p.lemmas, p.tags, p.relations, [0] * len(p)
            )
        )
    a = make_splits(sents, seed=3, exclude_keys=ud_keys)
    b = make_splits(sents, seed=3, exclude_keys=ud_keys)
    assert [[s.sent_id for s in part] for part in a.parts] == [
        [s.sent_id for s in part] for part in b.parts
    ]
    assert [s.sent_id for s in a.test] == [s.sent_id for s in b.test]
    c = make_splits(sents, seed=4, exclude_keys=ud_keys)
    assert a.part_of_unit != c.part_of_unit

    # document level: each document lies in exactly one part
    where: dict[tuple[str, str], set[int]] = {}
    for k, part in [(-1, a.test), *enumerate(a.parts)]:
        for s in part:
            where.setdefault((s.source, s.doc_id), set()).add(k)
    assert all(len(v) == 1 for v in where.values())

    test_keys = {sentence_key(s.forms) for s in a.test}
    for fold in range(5):
        train_keys = {sentence_key(s.forms) for s in a.train(fold)}
        dev_keys = {sentence_key(s.forms) for s in a.dev(fold)}
        assert not train_keys & test_keys
        assert not train_keys & dev_keys
        assert not train_keys & ud_keys  # zero overlap with UD Perseus dev/test
        assert a.dev(fold)
    assert (
        sum(v for k, v in a.dropped.items() if k.startswith("ud_excluded"))
        + sum(sentence_key(p.forms) in test_keys for p in planted)
        >= 2
    )
    # AGDT's and Gorman's Lysias 1.1 are the same text: it survives only once
    lysias = sentence_key(harmonised_samples["gorman"][0].forms)
    assert sum(sentence_key(s.forms) == lysias for part in [a.test, *a.parts] for s in part) == 1
    words = [sum(len(s) for s in part) for part in a.parts]
    print("test words", sum(len(s) for s in a.test), "fold words", words, dict(a.dropped))


def test_bad_settings_raise(harmonised_samples) -> None:
    sents = _chunks(harmonised_samples)
    with pytest.raises(TreebankError):
        make_splits(sents, n_folds=1)
    with pytest.raises(TreebankError):
        make_splits(sents, test_fraction=1.5)
    with pytest.raises(TreebankError):
        make_splits(sents[:3])
    with pytest.raises(TreebankError):
        make_splits(sents).train(7)
