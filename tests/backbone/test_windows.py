"""encode_long: overlapping windows stitched by centrality, memory bounded by the window."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
from stoicheia_spacy.backbone.windows import window_spans
from stoicheia_spacy.errors import InvalidInputError

from .helpers import ILIAD_1, ODYSSEY_1, greek_inputs

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model() -> StoicheiaEncoder:
    torch.manual_seed(0)
    return StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()


def _long_inputs(repeats: int) -> dict[str, Any]:
    return greek_inputs(" ".join([ILIAD_1, ODYSSEY_1] * repeats), seed=3)


def test_spans_tile_and_keep_most_central() -> None:
    spans = window_spans(1000, 256, 64)
    assert spans[0][2] == 0 and spans[-1][3] == 1000 and spans[-1][1] == 1000
    for (s0, e0, _, hi0), (s1, e1, lo1, _) in zip(spans, spans[1:], strict=False):
        assert hi0 == lo1 and s1 < hi0 < e0
        for p in range(s1, e0):  # in the overlap, the kept window is the more central one
            central0, central1 = min(p - s0, e0 - 1 - p), min(p - s1, e1 - 1 - p)
            kept, other = (central0, central1) if p < hi0 else (central1, central0)
            assert kept >= other - 1
    assert window_spans(100, 256, 64) == [(0, 100, 0, 100)]
    with pytest.raises(InvalidInputError):
        window_spans(1000, 64, 64)


def test_short_document_equals_plain_forward(model: StoicheiaEncoder) -> None:
    inputs = greek_inputs(ILIAD_1)
    with torch.no_grad():
        plain = model(**inputs, output_hidden_states=True)
    long = model.encode_long(**inputs, layers=[0, 2, 4])
    assert long is not None and long.hidden_states is not None and plain.hidden_states is not None
    for head in ("char", "boundary", "dia", "cap", "punct", "last_hidden"):
        assert torch.equal(getattr(long, head), getattr(plain, head))
    for got, i in zip(long.hidden_states, [0, 2, 4], strict=True):
        assert torch.equal(got, plain.hidden_states[i])


def test_long_document_stitches_window_outputs(model: StoicheiaEncoder) -> None:
    inputs = _long_inputs(8)
    T = inputs["input_ids"].shape[1]
    window, overlap = 128, 32
    out = model.encode_long(**{k: v[0] for k, v in inputs.items()}, window=window, overlap=overlap, layers=[1])
    assert out is not None and out.char.shape == (1, T, 27)
    for start, end, lo, hi in window_spans(T, window, overlap):
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

    assert model.encode_long(**inputs, window=100, overlap=20, callback=take) is None
    assert seen[0][0] == 0 and seen[-1][1] == T
    assert all(a[1] == b[0] for a, b in zip(seen, seen[1:], strict=False))
    full = model.encode_long(**inputs, window=100, overlap=20)
    assert full is not None
    assert torch.equal(torch.cat(pieces, dim=1), full.char)


def test_rejects_batches_and_bad_layers(model: StoicheiaEncoder) -> None:
    inputs = greek_inputs(ILIAD_1)
    two = {k: v.repeat(2, 1) for k, v in inputs.items()}
    with pytest.raises(InvalidInputError):
        model.encode_long(**two)
    with pytest.raises(InvalidInputError):
        model.encode_long(**inputs, layers=[5])


_MEMORY_PROBE = textwrap.dedent(
    """
    import resource, torch
    torch.set_num_threads(1)
    from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder
    torch.manual_seed(0)
    m = StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()
    g = torch.Generator().manual_seed(1)
    planes = [torch.randint(0, n, (200_000,), generator=g) for n in (24, 4, 49, 7)]
    m.encode_long(*(p[:2048] for p in planes), window=1024, overlap=128)  # warm-up
    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    sink = []
    def stream(lo, hi, piece):
        sink.append(float(piece.char[0, 0, 0]))
    base = max(rss(), peak())
    m.encode_long(*(p[:50_000] for p in planes), window=1024, overlap=128, callback=stream)
    small = peak()
    m.encode_long(*planes, window=1024, overlap=128, callback=stream)
    big = peak()
    out = m.encode_long(*planes, window=1024, overlap=128)
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
