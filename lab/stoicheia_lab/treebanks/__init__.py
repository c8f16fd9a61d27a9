"""Treebank data layer for the morphosyntax components: readers for AGDT/Gorman/Pedalion
XML and UD CoNLL-U, the 9-position AGDT tag scheme, the AGDT -> UPOS/FEATS mapping,
harmonisation into one tree convention, lemma edit scripts, document-level folds and
spaCy ``DocBin`` conversion. Pure Python + numpy + spaCy (no torch)."""
