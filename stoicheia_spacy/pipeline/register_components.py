"""Shipped inside packaged pipelines (``spacy package --code``) so that loading one
registers the stoicheia factories even where the entry points are not installed."""

import stoicheia_spacy.pipeline
import stoicheia_spacy.release.pooling  # noqa: F401  (released tagger-parser pooler)
