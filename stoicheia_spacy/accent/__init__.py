"""The accentuator: accents, breathings, word division, punctuation and capitals for
unaccented *scriptio continua*, with per-plane control (:mod:`.predict`), a spaCy
tokenizer-level segmenter (:mod:`.segment`; Leiden gaps go in as MASK letters and come out as
markup tokens for ``stoicheia_restorer``), source/rendered character alignment
(:mod:`.align`) and a lexicon baseline with a dynamic-programming segmenter (:mod:`.lexicon`).
Importing this package does not import torch."""

from __future__ import annotations
