"""The heap trim gives freed C-heap pages back (Linux/glibc)."""

from __future__ import annotations

import platform

import psutil
import pytest

from stoicheia_spacy.heap import _malloc_trim, trim_heap

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_trim_returns_freed_heap_pages() -> None:
    proc = psutil.Process()
    blocks = [bytes(2000) for _ in range(60_000)]  # ~120 MB of malloc'd (not pymalloc, not mmap) blocks
    keep = blocks[-1]  # the heap top stays in use, so free() alone cannot shrink the heap
    del blocks
    before = proc.memory_info().rss
    assert trim_heap() is True
    after = proc.memory_info().rss
    assert before - after > 50 * 2**20, (before, after)
    assert len(keep) == 2000


def test_trim_is_a_no_op_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Darwin")  # as on macOS: no glibc
    _malloc_trim.cache_clear()
    try:
        assert trim_heap() is False
    finally:
        monkeypatch.undo()
        _malloc_trim.cache_clear()
    assert trim_heap() is GLIBC
