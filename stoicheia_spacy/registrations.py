"""Everything stoicheia-spacy registers with spaCy, and how it gets registered.

Installed, the package registers its factories, architectures, scorers, optimizer,
tokenizers and backbone loader through the entry points in ``setup.cfg``: spaCy imports
the defining module the first time it looks a name up, so no module imports another just
to register it. Architectures live in :mod:`stoicheia_spacy.models`, components in
:mod:`stoicheia_spacy.pipeline`.

Without those entry points (a source checkout put on ``sys.path`` but never installed, or
a branch whose entry points were not re-installed) call :func:`register_all` once: it
imports every module that registers a name. Packaged pipelines ship
:mod:`stoicheia_spacy.pipeline.register_components`, which does exactly that, so
``spacy.load`` works either way; the test suite calls it from ``tests/conftest.py``.
"""

from __future__ import annotations

import importlib

#: The modules named by the ``spacy_*`` entry points in ``setup.cfg`` (a test keeps them equal).
MODULES: tuple[str, ...] = (
    "stoicheia_spacy.models.encoder",
    "stoicheia_spacy.models.listener",
    "stoicheia_spacy.models.loader",
    "stoicheia_spacy.models.morphosyntax",
    "stoicheia_spacy.models.pooler",
    "stoicheia_spacy.models.reference",
    "stoicheia_spacy.models.released_pooler",
    "stoicheia_spacy.models.scanner",
    "stoicheia_spacy.morph.optim",
    "stoicheia_spacy.pipeline.accentuator",
    "stoicheia_spacy.pipeline.attributor",
    "stoicheia_spacy.pipeline.dater",
    "stoicheia_spacy.pipeline.diffusion",
    "stoicheia_spacy.pipeline.encoder",
    "stoicheia_spacy.pipeline.lemmatizer",
    "stoicheia_spacy.pipeline.morphologizer",
    "stoicheia_spacy.pipeline.parser",
    "stoicheia_spacy.pipeline.restorer",
    "stoicheia_spacy.pipeline.scanner",
    "stoicheia_spacy.accent.segment",
    "stoicheia_spacy.accent.lexasset",
    "stoicheia_spacy.release",
    "stoicheia_spacy.restore.settings",
    "stoicheia_spacy.scan.settings",
    "stoicheia_spacy.accent.settings",
    "stoicheia_spacy.morph.settings",
    "stoicheia_spacy.tokenizer",
)


def register_all() -> None:
    """Import every registering module (only needed where the entry points are absent)."""
    for name in MODULES:
        importlib.import_module(name)
