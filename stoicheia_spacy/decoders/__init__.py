"""Structured decoders shared by the parser, scanner and restorer (numpy only)."""

from __future__ import annotations

from .meters import Meter, compile_pattern, default_meter_dirs, load_meters
from .mst import chu_liu_edmonds, decode_batch, is_tree, tree_score
from .viterbi import (
    GatedResult,
    ViterbiResult,
    detect_meter,
    gated_decode,
    syllable_scores,
    viterbi,
    viterbi_batch,
)

__all__ = [
    "GatedResult",
    "Meter",
    "ViterbiResult",
    "chu_liu_edmonds",
    "compile_pattern",
    "decode_batch",
    "default_meter_dirs",
    "detect_meter",
    "gated_decode",
    "is_tree",
    "load_meters",
    "syllable_scores",
    "tree_score",
    "viterbi",
    "viterbi_batch",
]
