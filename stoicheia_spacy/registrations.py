"""Everything stoicheia-spacy registers with spaCy, and how it gets registered.

Installed, the package registers its factories, architectures, scorers, optimizer,
tokenizers and backbone loader through the entry points in ``setup.cfg``: spaCy imports
the defining module the first time it looks a name up, so no module imports another just
to register it. Each component, its architecture and its settings live in the component's
room (:mod:`stoicheia_spacy.encoder`, :mod:`stoicheia_spacy.restore`, :mod:`stoicheia_spacy.accent`,
:mod:`stoicheia_spacy.scan`, :mod:`stoicheia_spacy.morph`, :mod:`stoicheia_spacy.date`).

Without those entry points (a source checkout put on ``sys.path`` but never installed, or
a branch whose entry points were not re-installed) call :func:`register_all` once: it
imports every module that registers a name. Packaged pipelines ship
:mod:`stoicheia_spacy.register_components`, which does exactly that, so
``spacy.load`` works either way; the test suite calls it from ``tests/conftest.py``.
"""

from __future__ import annotations

import importlib

#: The modules named by the ``spacy_*`` entry points in ``setup.cfg`` (a test keeps them equal).
MODULES: tuple[str, ...] = (
    "stoicheia_spacy.encoder.model",
    "stoicheia_spacy.encoder.listener",
    "stoicheia_spacy.encoder.loader",
    "stoicheia_spacy.morph.model",
    "stoicheia_spacy.morph.word_features",
    "stoicheia_spacy.encoder.pooler",
    "stoicheia_spacy.encoder.reference",
    "stoicheia_spacy.encoder.released_pooler",
    "stoicheia_spacy.scan.model",
    "stoicheia_spacy.morph.optim",
    "stoicheia_spacy.accent.accentuator",
    "stoicheia_spacy.date.attributor",
    "stoicheia_spacy.date.dater",
    "stoicheia_spacy.encoder.diffusion",
    "stoicheia_spacy.encoder.pipe",
    "stoicheia_spacy.morph.lemmatizer",
    "stoicheia_spacy.morph.morphologizer",
    "stoicheia_spacy.morph.parser",
    "stoicheia_spacy.restore.restorer",
    "stoicheia_spacy.scan.scanner",
    "stoicheia_spacy.accent.segment",
    "stoicheia_spacy.accent.lexasset",
    "stoicheia_spacy.released_heads",
    "stoicheia_spacy.restore.settings",
    "stoicheia_spacy.restore.accented",
    "stoicheia_spacy.scan.settings",
    "stoicheia_spacy.accent.settings",
    "stoicheia_spacy.morph.settings",
    "stoicheia_spacy.tokenizer",
)


def register_all() -> None:
    """Import every registering module (only needed where the entry points are absent)."""
    for name in MODULES:
        importlib.import_module(name)
