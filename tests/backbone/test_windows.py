"""The one windowing path: long-document windows, packing of Docs into the rows of one
forward, and encode_long (stitched by centrality, memory bounded by the window)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from stoicheia_spacy.alphabet import PAD_ID
from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
from stoicheia_spacy.backbone.windows import document_windows, encode_long, kept_ranges, pack_planes
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import ConfigError, InvalidInputError

from .helpers import ILIAD_1, ODYSSEY_1, greek_inputs

REPO_ROOT = Path(__file__).resolve().parents[2]
ILIAD = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε"
ODYSSEY = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον"


@pytest.fixture(scope="module")
def model() -> StoicheiaEncoder:
    torch.manual_seed(0)
    return StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()


def _long_inputs(repeats: int) -> dict[str, Any]:
    return greek_inputs(" ".join([ILIAD_1, ODYSSEY_1] * repeats), seed=3)


def test_windows_cover_every_letter_once_away_from_cuts() -> None:
    starts, ends, owner = document_windows(100, max_length=32, overlap=8)
    assert starts[0] == 0 and ends[-1] == 100
    pos = np.arange(100)
    assert np.all(starts[owner] <= pos) and np.all(pos < ends[owner])
    # away from the cut edges whenever a neighbouring window exists
    inner = (owner > 0)
    assert np.all(pos[inner] - starts[owner[inner]] >= 4)
    has_next = owner < len(starts) - 1
    assert np.all(ends[owner[has_next]] - pos[has_next] > 4)


def test_short_text_is_one_window() -> None:
    starts, ends, owner = document_windows(10, max_length=32, overlap=8)
    assert starts.tolist() == [0] and ends.tolist() == [10] and owner.tolist() == [0] * 10


@pytest.mark.parametrize("overlap", [-1, 32, 40])
def test_bad_overlap_is_a_config_error(overlap: int) -> None:
    with pytest.raises(ConfigError):
        document_windows(100, max_length=32, overlap=overlap)


def test_docs_share_a_row_in_separate_segments() -> None:
    a, b = encode_planes(ODYSSEY), encode_planes("θεὰ")
    batch = pack_planes([a, b], max_length=64, overlap=8)
    assert batch.n_rows == 1 and batch.row_length == len(a) + len(b)
    assert np.array_equal(batch.input_ids.ravel()[batch.doc_index[0]], a.letters)
    assert np.array_equal(batch.input_ids.ravel()[batch.doc_index[1]], b.letters)
    seg = batch.seg_id[0]
    assert len(set(seg[: len(a)].tolist())) == 1 and seg[0] != seg[len(a)]
    assert batch.positions[0, len(a)] == 0  # positions restart in every segment


def test_long_doc_is_windowed_and_rows_are_padded() -> None:
    long, short = encode_planes(ILIAD), encode_planes(ODYSSEY)
    batch = pack_planes([short, long], max_length=32, overlap=8)
    assert batch.row_length <= 32 and batch.n_rows >= 3
    for planes, idx in zip([short, long], batch.doc_index, strict=True):
        assert np.array_equal(batch.input_ids.ravel()[idx], planes.letters)
        assert np.array_equal(batch.dia.ravel()[idx], planes.diacritics)
        assert len(np.unique(idx)) == len(idx)
    pad = batch.input_ids == PAD_ID
    real = ~pad
    # PAD positions never share a segment id with real letters
    assert not set(batch.seg_id[pad].tolist()) & set(batch.seg_id[real].tolist())


def test_docs_without_letters_take_no_rows() -> None:
    batch = pack_planes([encode_planes("123 abc"), encode_planes("")], max_length=32, overlap=8)
    assert batch.n_rows == 0 and [i.size for i in batch.doc_index] == [0, 0]


def test_kept_ranges_tile_and_follow_the_owners() -> None:
    spans = kept_ranges(1000, 256, 64)
    starts, ends, owner = document_windows(1000, 256, 64)
    assert spans[0][2] == 0 and spans[-1][3] == 1000 and spans[-1][1] == 1000
    for k, (start, end, lo, hi) in enumerate(spans):
        assert (start, end) == (starts[k], ends[k]) and start <= lo < hi <= end
        assert np.all(owner[lo:hi] == k)
    assert all(a[3] == b[2] for a, b in zip(spans, spans[1:], strict=False))
    assert kept_ranges(100, 256, 64) == [(0, 100, 0, 100)]
    with pytest.raises(ConfigError):
        kept_ranges(1000, 64, 64)


def test_short_document_equals_plain_forward(model: StoicheiaEncoder) -> None:
    inputs = greek_inputs(ILIAD_1)
    with torch.no_grad():
        plain = model(**inputs, output_hidden_states=True)
    long = encode_long(model, **inputs, layers=[0, 2, 4])
    assert long is not None and long.hidden_states is not None and plain.hidden_states is not None
    for head in ("char", "boundary", "dia", "cap", "punct", "last_hidden"):
        assert torch.equal(getattr(long, head), getattr(plain, head))
    for got, i in zip(long.hidden_states, [0, 2, 4], strict=True):
        assert torch.equal(got, plain.hidden_states[i])


def test_long_document_stitches_window_outputs(model: StoicheiaEncoder) -> None:
    inputs = _long_inputs(8)
    T = inputs["input_ids"].shape[1]
    max_length, overlap = 128, 32
    out = encode_long(model, **{k: v[0] for k, v in inputs.items()}, max_length=max_length, overlap=overlap, layers=[1])
    assert out is not None and out.char.shape == (1, T, 27)
    for start, end, lo, hi in kept_ranges(T, max_length, overlap):
        with torch.no_grad():
            ref = model(**{k: v[:, start:end] for k, v in inputs.items()}, output_hidden_states=True)
        assert torch.allclose(out.char[:, lo:hi], ref.char[:, lo - start:hi - start], atol=1e-5)
        assert ref.hidden_states is not None and out.hidden_states is not None
        assert torch.allclose(out.hidden_states[0][:, lo:hi], ref.hidden_states[1][:, lo - start:hi - start], atol=1e-5)
    # central positions see enough context: close to the whole-document forward away from window edges
    with torch.no_grad():
        whole = model(**inputs)
    assert not torch.allclose(out.char, whole.char, atol=1e-6)  # global layer sees less context


def test_callback_streams_every_position_once(model: StoicheiaEncoder) -> None:
    inputs = _long_inputs(4)
    T = inputs["input_ids"].shape[1]
    seen: list[tuple[int, int]] = []
    pieces = []

    def take(lo: int, hi: int, piece) -> None:
        seen.append((lo, hi))
        pieces.append(piece.char)

    assert encode_long(model, **inputs, max_length=100, overlap=20, callback=take) is None
    assert seen[0][0] == 0 and seen[-1][1] == T
    assert all(a[1] == b[0] for a, b in zip(seen, seen[1:], strict=False))
    full = encode_long(model, **inputs, max_length=100, overlap=20)
    assert full is not None
    assert torch.equal(torch.cat(pieces, dim=1), full.char)


def test_rejects_batches_and_bad_layers(model: StoicheiaEncoder) -> None:
    inputs = greek_inputs(ILIAD_1)
    two = {k: v.repeat(2, 1) for k, v in inputs.items()}
    with pytest.raises(InvalidInputError):
        encode_long(model, **two)
    with pytest.raises(InvalidInputError):
        encode_long(model, **inputs, layers=[5])


_MEMORY_PROBE = textwrap.dedent(
    """
    import resource, torch
    torch.set_num_threads(1)
    from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
    from stoicheia_spacy.backbone.windows import encode_long
    torch.manual_seed(0)
    m = StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()
    g = torch.Generator().manual_seed(1)
    planes = [torch.randint(0, n, (200_000,), generator=g) for n in (24, 4, 49, 7)]
    encode_long(m, *(p[:2048] for p in planes), max_length=1024, overlap=128)  # warm-up
    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    sink = []
    def stream(lo, hi, piece):
        sink.append(float(piece.char[0, 0, 0]))
    base = max(rss(), peak())
    encode_long(m, *(p[:50_000] for p in planes), max_length=1024, overlap=128, callback=stream)
    small = peak()
    encode_long(m, *planes, max_length=1024, overlap=128, callback=stream)
    big = peak()
    out = encode_long(m, *planes, max_length=1024, overlap=128)
    full = peak()
    kept = sum(t.numel() * 4 for t in (out.char, out.boundary, out.dia, out.cap, out.punct, out.last_hidden))
    print(small - base, big - base, full - base, kept)
    """
)


@pytest.mark.slow
def test_memory_is_bounded_by_the_window() -> None:
    """Peak RSS (lifetime maximum, so the runs go small to large in one process)."""
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=300, check=True,
        env={"PYTHONPATH": str(REPO_ROOT), "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    small, big, full, kept = (int(x) for x in proc.stdout.split())
    mb = 1 << 20
    # streaming 4x the letters: the working set must not grow with the document
    assert big < small + 16 * mb, (small, big)
    # accumulating: beyond the returned outputs themselves, still only a window's worth
    assert full - kept < big + 16 * mb, (full, kept, big)
