from __future__ import annotations

import pytest
from stoicheia_lab.treebanks.harmonise import (
    BASE_RELATIONS,
    HarmoniseStats,
    base_relation,
    clean_lemma,
    clean_relation,
    harmonise,
    is_tree,
)
from stoicheia_lab.treebanks.readers import RawSentence

from stoicheia_spacy.errors import TreebankError


def _raw(
    words: list[tuple[int, str, str, str, int, str]], artificial: frozenset[int] = frozenset()
) -> RawSentence:
    s = RawSentence(source="test", doc_id="doc", sent_id="1")
    for wid, form, lemma, tag, head, rel in words:
        s.ids.append(wid)
        s.forms.append(form)
        s.lemmas.append(lemma)
        s.tags.append(tag)
        s.heads.append(head)
        s.relations.append(rel)
        s.artificial.append(wid in artificial)
    return s


@pytest.mark.parametrize("source", ["agdt", "homer", "gorman", "pedalion"])
def test_every_real_sentence_becomes_one_tree(raw_samples, source: str) -> None:
    stats = HarmoniseStats()
    out = [h for r in raw_samples[source] if (h := harmonise(r, stats=stats)) is not None]
    assert out and all(is_tree(h.heads) for h in out)
    assert all(base_relation(r) in BASE_RELATIONS for h in out for r in h.relations)
    # every word of the text is kept: only artificial/gap/empty nodes are dropped
    dropped = sum(v for k, v in stats.events.items() if k.startswith("dropped_"))
    assert stats.words_out == stats.words_in - dropped
    print(source, len(out), stats.words_out, dict(stats.events))


def test_gorman_root_punctuation_goes_to_main_root(raw_samples) -> None:
    raw = raw_samples["gorman"][0]  # Lysias 1.1: "περὶ πολλοῦ ἂν ποιησαίμην , ὦ ἄνδρες , ..."
    h = harmonise(raw)
    assert h is not None
    assert h.forms[3] == "ποιησαίμην" and h.heads[3] == 0 and h.relations[3] == "PRED"
    punct = [i for i, t in enumerate(h.tags) if t[0] == "u"]
    assert punct and all(h.heads[i] == 4 for i in punct)
    kept = harmonise(raw, punct="keep")
    assert kept is not None and kept.heads[4] == 7  # the comma inside the tree (head ἄνδρες)


def test_agdt_in_tree_comma_is_kept_with_keep_policy(raw_samples) -> None:
    moved = 0
    for raw in raw_samples["agdt"]:
        a, b = harmonise(raw), harmonise(raw, punct="keep")
        assert a is not None and b is not None and a.forms == b.forms
        moved += sum(x != y for x, y in zip(a.heads, b.heads, strict=True))
        assert is_tree(b.heads)
    assert moved > 0


def test_artificial_node_dependents_reattach_to_its_head() -> None:
    # ὁ μὲν ἀνὴρ ἀγαθός [ἐστι] .  with an elliptic copula (id 5) under the root
    raw = _raw(
        [
            (1, "ὁ", "ὁ", "l-s---mn-", 3, "ATR"),
            (2, "μὲν", "μέν", "g--------", 5, "AuxY"),
            (3, "ἀνὴρ", "ἀνήρ", "n-s---mn-", 5, "SBJ"),
            (4, "ἀγαθός", "ἀγαθός", "a-s---mn-", 5, "PNOM"),
            (5, "[0]", "εἰμί", "v3spia---", 0, "PRED"),
            (6, ".", "punc1", "u--------", 0, "AuxK"),
        ],
        artificial=frozenset({5}),
    )
    stats = HarmoniseStats()
    h = harmonise(raw, stats=stats)
    assert h is not None
    assert h.forms == ["ὁ", "μὲν", "ἀνὴρ", "ἀγαθός", "."]
    assert h.lemmas[-1] == "." and h.relations == ["ATR", "AuxY", "SBJ", "PNOM", "AuxK"]
    # the three dependents of [0] went to root level; the first (μέν is AuxY) ... the
    # main root is the first non-punctuation root-level word with the best relation
    assert is_tree(h.heads)
    root = h.heads.index(0)
    assert h.forms[root] == "μὲν"  # no PRED/COORD left: first non-punctuation word
    assert h.heads[0] == 3 and h.heads[4] == root + 1
    assert stats.events["dropped_artificial"] == 1 and stats.events["extra_roots_attached"] == 2


def test_cycles_bad_heads_and_several_roots() -> None:
    raw = _raw(
        [
            (1, "ἔλεγε", "λέγω", "v3siia---", 2, "PRED"),
            (2, "ταῦτα", "οὗτος", "p-p---na-", 1, "OBJ"),  # cycle 1 <-> 2
            (3, "καὶ", "καί", "c--------", 9, "COORD"),  # head 9 does not exist
            (4, "ἀπῆλθεν", "ἀπέρχομαι", "v3saia---", 0, "PRED"),
            (5, "·", "punc1", "u--------", 0, "AuxX"),
        ]
    )
    stats = HarmoniseStats()
    h = harmonise(raw, stats=stats)
    assert h is not None and is_tree(h.heads)
    assert h.heads == [0, 1, 1, 1, 1]  # ἔλεγε (first PRED) is the root
    assert stats.events["cycle_broken"] == 1 and stats.events["bad_head"] == 1


def test_only_gaps_gives_none() -> None:
    raw = _raw([(1, "G?", "_", "z--------", 0, "GAP"), (2, "...", "...", "z--------", 0, "AuxG")])
    assert harmonise(raw) is None
    with pytest.raises(TreebankError):
        harmonise(raw, punct="inside")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("!!!congruentiefout geslacht?!!!ADV", "ADV"),
        ("%%%SBJ", "SBJ"),
        ("AuxΖ", "AuxZ"),  # Greek capital zeta
        ("AuxΓ", "AuxG"),
        ("Auxy", "AuxY"),
        ("AucZ", "AuxZ"),
        ("PRED_C0", "PRED_CO"),
        ("ADV_CO_CO", "ADV_CO"),
        ("OBJ_CO_AP", "OBJ_AP_CO"),
        ("SBJ_ExD0_ADV", "SBJ"),
        ("MWE2", "MWE"),
        ("AUX", "AuxY"),
        ("", "UNDEFINED"),
        ("CO", "UNDEFINED"),
    ],
)
def test_clean_relation(raw: str, clean: str) -> None:
    assert clean_relation(raw) == clean


def test_clean_relation_punctuation_and_lemmas() -> None:
    assert clean_relation("PUNCT", is_punct=True) == "AuxX"
    assert clean_relation("PUNCT", is_punct=True, is_last=True) == "AuxK"
    assert clean_relation("", is_punct=True, is_last=True) == "AuxK"
    assert clean_lemma("ἄν1", "ἂν", "d--------") == "ἄν"
    assert clean_lemma("punc1", ",", "u--------") == ","
    assert clean_lemma("", "Ἀθηναῖοι", "n-p---mn-") == "Ἀθηναῖοι"
