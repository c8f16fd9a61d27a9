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

Loading: ``spacy.Language()`` imports the factories of every installed package that declares
``spacy_factories`` entry points (``spacy-transformers`` pulls in ``transformers``: seconds of
imports a Stoicheia pipeline never uses). Inside :func:`lazy_factories` it imports none of
them up front; spaCy still finds each factory the config names through its entry point, by
name, when the pipeline is built, so only the components of the pipeline are imported.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterable, Iterator
from typing import Any

from spacy import util
from spacy.language import Language

#: The modules named by the ``spacy_*`` entry points in ``setup.cfg`` (a test keeps them equal).
MODULES: tuple[str, ...] = (
    "stoicheia_spacy.encoder.model",
    "stoicheia_spacy.encoder.listener",
    "stoicheia_spacy.encoder.loader",
    "stoicheia_spacy.morph.model",
    "stoicheia_spacy.morph.word_features",
    "stoicheia_spacy.morph.bilstm",
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
    "stoicheia_spacy.restore.parallels",
    "stoicheia_spacy.parallels.component",
    "stoicheia_spacy.scan.settings",
    "stoicheia_spacy.accent.settings",
    "stoicheia_spacy.morph.settings",
    "stoicheia_spacy.tokenizer",
)


def register_all() -> None:
    """Import every registering module (only needed where the entry points are absent)."""
    for name in MODULES:
        importlib.import_module(name)


def config_factories(config: Any, exclude: Iterable[str] = ()) -> set[str] | None:
    """The factory names of a pipeline config's components but ``exclude`` (None when one is
    ``source``d from another pipeline, whose factories cannot be told from this config)."""
    names: set[str] = set()
    skip = set(exclude)
    for name, block in dict(config.get("components", {})).items():
        if name in skip:
            continue
        if "factory" not in block:
            return None
        names.add(str(block["factory"]) or name)
    return names


@contextlib.contextmanager
def lazy_factories(names: Iterable[str] | None) -> Iterator[None]:
    """Within the block, ``spacy.Language()`` imports only the ``spacy_factories`` entry points
    named in ``names`` (the pipeline's factories, :func:`config_factories`), not every installed
    package's (module doc); ``None``: every one, as spaCy does."""
    if names is None:
        yield
        return
    wanted = set(names)
    eager = util.registry._entry_point_factories

    def named_only() -> dict[str, Any]:  # the wanted ones not registered yet
        return {point.name: point.load() for point in eager._get_entry_points()
                if point.name in wanted and not Language.has_factory(point.name)}

    eager.get_all = named_only
    try:
        yield
    finally:
        del eager.get_all
