from __future__ import annotations

import numpy as np
import pytest
from stoicheia_lab.treebanks.harmonise import HarmoniseStats, harmonise

from stoicheia_spacy.errors import InvalidTagError
from stoicheia_spacy.morph.agdt_tags import (
    N_CLASSES,
    XPOS_ALPHABETS,
    TagStats,
    ids_to_tags,
    is_valid_tag,
    join_tag,
    normalise_tag,
    split_tag,
    tags_to_ids,
)


def test_inventories_match_release_head_sizes() -> None:
    assert N_CLASSES == (14, 4, 4, 8, 8, 5, 5, 6, 3)
    assert [len(a) for a in XPOS_ALPHABETS] == list(N_CLASSES)
    assert all(a[0] == "-" and len(set(a)) == len(a) for a in XPOS_ALPHABETS)


def test_split_join_roundtrip() -> None:
    tag = "v3siia---"  # ἦν
    assert split_tag(tag) == ("v", "3", "s", "i", "i", "a", "-", "-", "-")
    assert join_tag(split_tag(tag)) == tag
    with pytest.raises(InvalidTagError):
        split_tag("v3siia--")
    with pytest.raises(InvalidTagError):
        join_tag(["n", "-", "s"])
    assert not is_valid_tag("n-s---mb-")  # case 'b' does not exist


@pytest.mark.parametrize(
    ("raw", "fixed", "repair"),
    [
        ("b--------", "c--------", "pos_b"),  # Pedalion καί
        ("e--------", "i--------", "pos_e"),  # AGDT 1.6 ὦ
        ("t-sppamn-", "v-sppamn-", "pos_t_participle"),  # AGDT 1.6 participle
        ("n-s---mn_", "n-s---mn-", "underscore"),
        ("d---------", "d--------", "too_long"),
        ("d-------p", "d--------", "degree_positive"),  # καλῶς
        ("", "---------", "empty"),
    ],
)
def test_normalise_tag_repairs(raw: str, fixed: str, repair: str) -> None:
    stats = TagStats()
    assert normalise_tag(raw, stats) == fixed
    assert stats.repairs[repair] == 1
    assert not stats.malformed


def test_normalise_tag_reports_malformed() -> None:
    stats = TagStats()
    assert normalise_tag("v3said---", stats) == "v3sai----"  # voice 'd' is no voice
    assert normalise_tag("δ--------", stats) == "---------"
    assert stats.malformed == {"v3said---": 1, "δ--------": 1}


def test_ids_roundtrip_vectorised() -> None:
    tags = ["l-p---na-", "a-p---nac", "v--ana---", "p1s---md-", "u--------", "v-sagpnd-"]
    ids = tags_to_ids(tags)
    assert ids.shape == (6, 9)
    assert ids[1, 8] == XPOS_ALPHABETS[8].index("c")
    assert ids_to_tags(ids) == tags
    with pytest.raises(InvalidTagError):
        tags_to_ids(["n-s---mb-"])
    with pytest.raises(InvalidTagError):
        ids_to_tags(np.array([[14, 0, 0, 0, 0, 0, 0, 0, 0]]))


def test_every_harmonised_sample_tag_is_valid(raw_samples) -> None:
    stats = HarmoniseStats()
    sents = [h for raws in raw_samples.values() for r in raws if (h := harmonise(r, stats=stats))]
    tags = [t for s in sents for t in s.tags]
    assert all(is_valid_tag(t) for t in tags)
    assert tags_to_ids(tags).shape == (len(tags), 9)
    ts = stats.tags
    print(f"tags {ts.total}, repairs {dict(ts.repairs)}, malformed {dict(ts.malformed)}")
    assert ts.total == len(tags)
    # Pedalion's gap placeholders (pos 'z') are dropped before tags are normalised.
    assert "z--------" not in ts.malformed
    assert sum(ts.malformed.values()) < 0.001 * ts.total
