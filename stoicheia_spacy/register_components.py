"""Shipped inside packaged pipelines (``spacy package --code``) so that loading one
registers the stoicheia names even where the entry points are not installed
(see :mod:`stoicheia_spacy.registrations`)."""

from stoicheia_spacy.registrations import register_all

register_all()
