"""``stoicheia annotate``: a corpus of any size through a pipeline, on this machine or on Ray.

Input shards (:mod:`.io`) are cut into fixed batches of plain records; an engine
(:mod:`.engines`) runs :func:`.worker.annotate_batch` on each in a worker holding one loaded
pipeline and returns plain JSON-lines records (:mod:`.convert`), which the runner
(:mod:`.runner`) writes per shard, atomically, as JSON-lines, CoNLL-U or DocBin.
"""

from __future__ import annotations

from .engines import ENGINES, EngineConfig
from .runner import Summary, annotate

__all__ = ["ENGINES", "EngineConfig", "Summary", "annotate"]
