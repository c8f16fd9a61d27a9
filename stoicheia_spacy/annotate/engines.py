"""Engines map annotation tasks (JSON strings, see :mod:`.worker`) to results, in task order.

``local``: in this process (``n_process=1``) or in ``n_process`` *spawned* worker processes
(never forked: a forked child inherits torch's thread pools in whatever state the parent left
them); each worker loads the pipeline once and pins torch to ``threads`` threads.
``ray``: Ray Data ``map_batches`` over an actor pool (one loaded pipeline per actor, one
task per call), on a local cluster or on the one at ``address``. Tasks and results are
plain strings; Docs never cross a process boundary.
"""

from __future__ import annotations

import heapq
import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .worker import annotate_batch, load_pipeline, set_threads

ENGINES = ("local", "ray")


@dataclass
class EngineConfig:
    """What every worker needs to load the same pipeline and cut the same pieces."""

    model: str | None = None
    components: list[str] | None = None
    threads: int = 1
    max_chars: int = 4096
    batch_chars: int = 4096
    workers: int = 1
    address: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ local engine
_WORKER: dict[str, Any] = {}


def _init_worker(cfg: EngineConfig) -> None:
    set_threads(cfg.threads)
    _WORKER["nlp"] = load_pipeline(cfg.model, cfg.components)
    _WORKER["cfg"] = cfg


def _run_task(task: str) -> str:
    cfg: EngineConfig = _WORKER["cfg"]
    return annotate_batch(_WORKER["nlp"], task, max_chars=cfg.max_chars, batch_chars=cfg.batch_chars)


def run_local(tasks: Iterable[str], cfg: EngineConfig) -> Iterator[str]:
    """Results of ``tasks`` in order, in this process or in ``cfg.workers`` spawned processes."""
    if cfg.workers <= 1:
        _init_worker(cfg)
        for task in tasks:
            yield _run_task(task)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(cfg.workers, mp_context=context, initializer=_init_worker, initargs=(cfg,)) as pool:
        window: deque[Future[str]] = deque()
        for task in tasks:
            window.append(pool.submit(_run_task, task))
            if len(window) >= 2 * cfg.workers:  # bounded read-ahead, results in order
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


# -------------------------------------------------------------------- ray engine
class RayAnnotator:
    """A Ray Data actor: one pipeline, loaded once; a batch is one task."""

    def __init__(self, cfg: EngineConfig) -> None:
        _init_worker(cfg)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {"key": list(batch["key"]), "result": [_run_task(str(t)) for t in batch["task"]]}


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def run_ray(tasks: Iterable[str], cfg: EngineConfig) -> Iterator[str]:
    """Results of ``tasks`` in order, from a Ray Data actor pool of ``cfg.workers`` actors."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ConfigError("the ray engine needs Ray Data: pip install 'stoicheia-spacy[ray]'") from exc
    items = [{"key": k, "task": t} for k, t in enumerate(tasks)]
    if not items:
        return
    if not ray.is_initialized():
        if cfg.address:
            ray.init(address=cfg.address, log_to_driver=False)
        else:  # a local cluster: its workers import this copy of the package
            env = {"PYTHONPATH": _package_root(), "OMP_NUM_THREADS": str(cfg.threads),
                   "MKL_NUM_THREADS": str(cfg.threads)}
            ray.init(num_cpus=cfg.workers * cfg.threads, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": env})
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    ds = ray.data.from_items(items, override_num_blocks=min(len(items), 4 * cfg.workers))
    out = ds.map_batches(RayAnnotator, fn_constructor_kwargs={"cfg": cfg}, batch_size=1,
                        concurrency=cfg.workers, num_cpus=cfg.threads, batch_format="numpy")
    pending: list[tuple[int, str]] = []
    expected = 0
    for row in out.iter_rows():  # re-ordered by task index whatever order Ray yields
        heapq.heappush(pending, (int(row["key"]), str(row["result"])))
        while pending and pending[0][0] == expected:
            yield heapq.heappop(pending)[1]
            expected += 1
    while pending:
        yield heapq.heappop(pending)[1]


def run_engine(name: str, tasks: Iterable[str], cfg: EngineConfig) -> Iterator[str]:
    """Dispatch to the ``local`` or ``ray`` engine."""
    if name == "local":
        return run_local(tasks, cfg)
    if name == "ray":
        return run_ray(tasks, cfg)
    raise ConfigError(f"unknown engine {name!r}: choose one of {', '.join(ENGINES)}")
