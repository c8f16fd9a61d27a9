"""Provenance: which model read a passage, and which never did (``stoicheia which-model``).

A Bloom filter over the normalised word 5-grams of a model's training text answers "did it
read this?" (:mod:`.index`, :mod:`.bloom`); a (zone, 5-gram) filter over our ten folds'
held-out zones and the fold manifests (ours or the published per-fold TSVs, :mod:`.manifests`)
answer "which fold never read it?". Build with ``python -m stoicheia_spacy.provenance``.
"""

from __future__ import annotations

from .bloom import BloomFilter
from .which import Answer, which_model

__all__ = ["Answer", "BloomFilter", "which_model"]
