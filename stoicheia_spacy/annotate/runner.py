"""Drive an engine over the input shards: skip finished shards, batch records in a fixed way,
collect results in order, write each shard atomically, show words/s."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .engines import EngineConfig, run_engine
from .io import discover_shards, output_paths, read_shard, shard_name, write_shard


@dataclass
class _Shard:
    name: str
    n_tasks: int = 0
    lines: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Summary:
    """What one run did (JSON-able with :meth:`to_dict`)."""

    shards: int = 0
    skipped: list[str] = field(default_factory=list)
    records: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    words: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        rate = self.words / self.seconds if self.seconds else 0.0
        return {"shards": self.shards, "skipped": self.skipped, "records": self.records,
                "errors": len(self.errors), "words": self.words, "seconds": round(self.seconds, 3),
                "words_per_s": round(rate, 1)}


def pending_shards(source: Path, out_dir: Path, formats: list[str]) -> tuple[list[Path], list[str]]:
    """Input shards still to do, and the names of those whose every output already exists."""
    todo, done = [], []
    for path in discover_shards(source):
        name = shard_name(path)
        if all(p.is_file() for p in output_paths(out_dir, name, formats).values()):
            done.append(name)
        else:
            todo.append(path)
    return todo, done


def annotate(source: Path, out_dir: Path, *, formats: list[str], engine: str = "local",
             config: EngineConfig | None = None, batch_size: int = 32, unit: str = "line",
             progress: bool = True) -> Summary:
    """Annotate every pending shard of ``source`` into ``out_dir`` (see :mod:`stoicheia_spacy.annotate`)."""
    cfg = config or EngineConfig()
    todo, done = pending_shards(source, out_dir, formats)
    summary = Summary(shards=len(todo) + len(done), skipped=done)
    if not todo:  # everything is written: do not even load the pipeline
        return summary
    shards: dict[int, _Shard] = {}

    def tasks() -> Iterator[str]:
        for tag, path in enumerate(todo):
            shard = shards[tag] = _Shard(shard_name(path))
            batch: list[dict[str, Any]] = []
            sent = 0
            for rec in read_shard(path, unit):
                if "error" in rec:
                    shard.errors.append(rec)
                    continue
                batch.append(rec)
                if len(batch) == batch_size:
                    yield json.dumps({"tag": tag, "records": batch}, ensure_ascii=False)
                    batch, sent = [], sent + 1
            if batch or not sent:  # an empty shard still gets its (empty) outputs
                yield json.dumps({"tag": tag, "records": batch}, ensure_ascii=False)

    def finish(tag: int) -> None:
        shard = shards.pop(tag)
        write_shard(out_dir, shard.name, formats, shard.lines, shard.errors)
        summary.records += len(shard.lines)
        summary.errors.extend(shard.errors)

    start = time.perf_counter()
    bar = tqdm(unit=" words", unit_scale=True, desc="annotate", disable=not progress)
    current = None
    for result in run_engine(engine, tasks(), cfg):
        out = json.loads(result)
        if current is not None and out["tag"] != current:
            finish(current)  # results come in task order: the previous shard is complete
        current = out["tag"]
        shard = shards[current]
        shard.n_tasks += 1
        shard.lines.extend(out["lines"])
        shard.errors.extend(out["errors"])
        summary.words += out["words"]
        bar.update(out["words"])
    if current is not None:
        finish(current)
    bar.close()
    summary.seconds = time.perf_counter() - start
    return summary
