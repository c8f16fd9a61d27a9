"""``stoicheia bench growth`` attributes traced growth to the line that allocated it."""

from __future__ import annotations

import tracemalloc

from stoicheia_lab.bench.growth import traced_growth


def _intern_words(store: dict[str, int], words: list[str]) -> None:
    for w in words:
        store.setdefault(w, len(store))  # a per-word cache that keeps growing


def test_a_growing_per_word_cache_is_named_by_its_line() -> None:
    words = [f"λόγος{i}" for i in range(20_000)]
    store: dict[str, int] = {}
    tracemalloc.start(12)
    try:
        before = tracemalloc.take_snapshot()
        _intern_words(store, words)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    rows = traced_growth(before, after, docs=1000)
    top = rows[0]
    assert top["allocated_at"].endswith("test_bench_growth.py:12"), rows[:3]
    assert top["mb_per_1000_docs"] > 0.5  # the dict's table, at least ~1 MB for 20,000 keys
    assert len(store) == 20_000
