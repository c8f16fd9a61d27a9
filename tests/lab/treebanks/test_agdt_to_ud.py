from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from stoicheia_lab.treebanks.harmonise import Sentence, harmonise
from stoicheia_lab.treebanks.readers import SOURCES, iter_conllu_full, iter_source, list_documents
from stoicheia_lab.treebanks.splits import sentence_key

from stoicheia_spacy.errors import InvalidTagError
from stoicheia_spacy.morph.agdt_to_ud import agdt_to_feats, agdt_to_upos, map_tags


def test_examples() -> None:
    assert agdt_to_upos("v3siia---", "εἰμί") == "AUX"
    assert agdt_to_upos("v3siia---", "λέγω") == "VERB"
    assert agdt_to_upos("c--------", "ὅτι") == "SCONJ"
    assert agdt_to_upos("c--------", "καί") == "CCONJ"
    assert agdt_to_upos("l-s---mn-", "ὁ") == "DET"
    assert (
        agdt_to_feats("v-sppamd-")
        == "Case=Dat|Gender=Masc|Number=Sing|Tense=Pres|VerbForm=Part|Voice=Act"
    )
    assert (
        agdt_to_feats("v3siia---")
        == "Aspect=Imp|Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin|Voice=Act"
    )
    assert agdt_to_feats("d--------") == "_"
    with pytest.raises(InvalidTagError):
        agdt_to_upos("v3s", "")
    with pytest.raises(InvalidTagError):
        map_tags(["d--------"], [])


def test_agreement_with_ud_perseus(shared_data: Path) -> None:
    """UD Perseus dev/test were converted from AGDT 2.1: map the AGDT 2.1 tags of the
    matched sentences and compare with UD's gold UPOS/FEATS."""
    ud_dir = shared_data / "ud/UD_Ancient_Greek-Perseus"
    ud = {
        split: list(iter_conllu_full(ud_dir / f"grc_perseus-ud-{split}.conllu.xz"))
        for split in ("dev", "test")
    }
    docs = {s.doc_id for rows in ud.values() for s, _, _ in rows}
    spec = SOURCES["agdt"]
    members = [
        m
        for m in list_documents(shared_data / spec.archive, spec.pattern)
        if m.rsplit("/", 1)[-1] in docs
    ]
    agdt: dict[str, Sentence] = {}
    for raw in iter_source(shared_data, "agdt", documents=members):
        h = harmonise(raw)
        if h is not None:
            agdt.setdefault(sentence_key(h.forms), h)
    for split, rows in ud.items():
        matched = tokens = upos_ok = feats_ok = 0
        diffs: Counter[tuple[str, str, str]] = Counter()
        for sent, gold_upos, gold_feats in rows:
            h = agdt.get(sentence_key(sent.forms))
            if h is None or h.forms != sent.forms:
                continue
            matched += 1
            upos, feats = map_tags(h.tags, h.lemmas)
            for i in range(len(upos)):
                tokens += 1
                upos_ok += upos[i] == gold_upos[i]
                feats_ok += feats[i] == gold_feats[i]
                if upos[i] != gold_upos[i]:
                    diffs[(h.lemmas[i], upos[i], gold_upos[i])] += 1
        print(
            f"UD Perseus {split}: {matched}/{len(rows)} sentences matched, {tokens} tokens, "
            f"UPOS {upos_ok / tokens:.4f}, FEATS {feats_ok / tokens:.4f}; UPOS diffs {diffs.most_common(5)}"
        )
        assert matched >= 0.95 * len(rows)
        assert upos_ok / tokens >= 0.995
        assert feats_ok / tokens >= 0.995
