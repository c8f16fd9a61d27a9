"""Corpus assets and the decontaminated 10-fold rotation (pure Python + numpy, no torch).

``iter_records(source, mirror_dir, limit)`` streams records of one mirrored source; the
pipeline steps (``fetch``, ``normalize``, ``tiers``, ``folds``, ``doc-clean``, ``verify``,
``report``) run through ``stoicheia corpus STEP`` (or ``python -m stoicheia_lab.corpus STEP``).
"""

from __future__ import annotations

from .readers import Record, iter_literary, iter_records
from .sources import DOCUMENTARY, LITERARY, SOURCES, Source, get_source

__all__ = ["DOCUMENTARY", "LITERARY", "SOURCES", "Record", "Source", "get_source", "iter_literary", "iter_records"]
