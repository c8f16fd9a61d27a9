from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pretrain.config import build_config
from pretrain.data import (
    TrainStream,
    build_dev_rows,
    dev_score,
    is_dev,
    iter_records,
    pack_row,
    resolve_paths,
    window_bounds,
)
from pretrain.sampling import IGNORE, IIDMaskSampler
from stoicheia_spacy import alphabet as A
from stoicheia_spacy.errors import CorpusError


def test_windows_end_on_word_ends_and_cover_everything(encoder: Any) -> None:
    planes = encoder("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε")
    bnd = np.asarray(planes.boundary)
    bounds = window_bounds(bnd, 12)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(bnd)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    for start, end in bounds:
        assert 0 < end - start <= 12
        assert bnd[end - 1] != A.BND_INTERNAL  # never cut inside a word
    # "Πηληϊάδεω" (10 letters) + "θεὰ" would be 13 > 12: the window stops before it
    assert len(bounds) > 3


def test_overlong_word_is_cut_hard() -> None:
    bnd = np.zeros(25, dtype=np.uint8)
    bnd[-1] = A.BND_SENT_END
    assert window_bounds(bnd, 10) == [(0, 10), (10, 20), (20, 25)]
    assert window_bounds(np.zeros(0, dtype=np.uint8), 10) == []


def test_dev_split_is_a_stable_hash_of_the_id() -> None:
    ids = [f"tlg0012.tlg001:{i}" for i in range(4000)]
    share = sum(is_dev(i, 0.1) for i in ids) / len(ids)
    assert 0.08 < share < 0.12
    assert dev_score("tlg0012.tlg001:1") == dev_score("tlg0012.tlg001:1")
    assert not any(is_dev(i, 0.0) for i in ids[:100])


def test_records_stream_with_tiers_and_ids(corpus: Path, tmp_path: Path) -> None:
    records = list(iter_records([corpus]))
    assert len(records) == 96
    assert records[0].id == "aesch-ag-000" and records[0].text.startswith("θεοὺς μὲν αἰτῶ")
    assert [r.tier for r in records[:4]] == [0, 1, 2, 0]  # gold, silver, bronze, missing -> gold
    txt = tmp_path / "lines.txt"
    txt.write_text("ἐν ἀρχῇ ἦν ὁ λόγος\nκαὶ ὁ λόγος ἦν πρὸς τὸν θεόν\n", encoding="utf-8")
    lines = list(iter_records(resolve_paths(str(txt))))
    assert [r.id for r in lines] == ["lines.txt:0", "lines.txt:1"] and lines[1].tier == 0


def test_bad_corpora_raise_corpus_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError):
        resolve_paths(str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "body": "λόγος"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="no 'text'"):
        list(iter_records([bad]))
    tier = tmp_path / "tier.jsonl"
    tier.write_text(json.dumps({"id": "x", "text": "λόγος", "tier": "platinum"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="tier"):
        list(iter_records([tier]))
    with pytest.raises(CorpusError):
        resolve_paths(str(tmp_path / "x.csv"))


def _stream(corpus: Path, encoder: Any, *overrides: str) -> TrainStream:
    cfg = build_config("tiny", "smoke", ["data.dev_fraction=0.2", *overrides])
    return TrainStream([corpus], cfg.data, IIDMaskSampler(), seed=3, encoder=encoder)


def test_rows_are_packed_with_segments_and_hold_no_dev_text(corpus: Path, encoder: Any) -> None:
    stream = _stream(corpus, encoder)
    seen: list[str] = []
    inner = stream.corrupt.__call__

    def spy(record: Any, rng: np.random.Generator) -> list[Any]:
        seen.append(record.id)
        return inner(record, rng)

    stream.corrupt = spy  # type: ignore[assignment]
    rows = stream.next_rows(6)
    for row in rows:
        assert all(len(v) == 256 for v in row.values())
        seg = row["seg_id"]
        real = seg > 0
        assert real.sum() > 200  # first-fit packing leaves little padding
        assert np.all(np.diff(seg[real]) >= 0) and np.all(seg[~real] == 0)
        assert np.all(row["input_ids"][~real] == A.PAD_ID)
        assert np.all(row["char_target"][~real] == IGNORE)
        assert (row["char_target"] != IGNORE).sum() > 0
    # windows come from training records only, though the corpus has dev records
    assert seen and not any(is_dev(i, 0.2) for i in seen)
    assert any(is_dev(r.id, 0.2) for r in iter_records([corpus]))


def test_stream_state_round_trip_continues_identically(corpus: Path, encoder: Any) -> None:
    a = _stream(corpus, encoder)
    a.next_rows(3)
    state = a.state_dict()
    expected = a.next_rows(4)
    b = _stream(corpus, encoder)
    b.load_state_dict(state)
    got = b.next_rows(4)
    for x, y in zip(expected, got, strict=True):
        for name in x:
            np.testing.assert_array_equal(x[name], y[name])


def test_epochs_wrap_and_reshuffle(corpus: Path, encoder: Any) -> None:
    stream = _stream(corpus, encoder, "data.row_len=2048", "data.max_window=512")
    stream.next_rows(12)
    assert stream.epoch >= 1


def test_gold_only_weights_read_only_gold(corpus: Path, encoder: Any) -> None:
    seen: list[int] = []

    stream = _stream(corpus, encoder)
    inner = stream.corrupt.__call__

    def spy(record: Any, rng: np.random.Generator) -> list[Any]:
        seen.append(record.tier)
        return inner(record, rng)

    stream.corrupt = spy  # type: ignore[assignment]
    stream.set_tier_weights((1.0, 0.0, 0.0))
    stream.next_rows(4)
    assert seen and set(seen) == {0}


def test_published_weights_take_bronze_about_a_third_as_often(corpus: Path, encoder: Any) -> None:
    seen: list[int] = []
    stream = _stream(corpus, encoder, "data.dev_fraction=0.0")
    inner = stream.corrupt.__call__

    def spy(record: Any, rng: np.random.Generator) -> list[Any]:
        seen.append(record.tier)
        return inner(record, rng)

    stream.corrupt = spy  # type: ignore[assignment]
    stream.next_rows(120)
    gold, bronze = seen.count(0), seen.count(2)
    assert gold > 0 and 0.15 < bronze / (gold / 2) < 0.5  # gold records are half the corpus


def test_dev_rows_are_fixed_for_a_seed(corpus: Path, encoder: Any) -> None:
    cfg = build_config("tiny", "smoke", ["data.dev_fraction=0.3"]).data
    a = build_dev_rows([corpus], cfg, IIDMaskSampler(), seed=5, encoder=encoder)
    b = build_dev_rows([corpus], cfg, IIDMaskSampler(), seed=5, encoder=encoder)
    assert a and len(a) == len(b)
    np.testing.assert_array_equal(a[0]["input_ids"], b[0]["input_ids"])
    assert sum(int((r["seg_id"] > 0).sum()) for r in a) >= 1  # gold dev text only


def test_pack_row_rejects_overflow() -> None:
    ex = {name: np.zeros(5, dtype=np.int64) for name in
          ("input_ids", "boundary", "dia", "punct", "char_target", "char_weight",
           "bnd_target", "dia_target", "punct_target", "cap_target")}
    with pytest.raises(ValueError):
        pack_row([ex, ex], 8)
    row = pack_row([ex], 8)
    assert list(row["seg_id"]) == [1] * 5 + [0] * 3
