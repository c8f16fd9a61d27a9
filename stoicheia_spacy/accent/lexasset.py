"""Where the accent lexicon comes from: it is data under GPL-3.0 / CC BY-SA terms, so it
is **not** part of this (MIT) code package.

It is a separately installable data package, ``stoicheia-lexicon-grc`` (import name
``stoicheia_lexicon_grc``), built from the open-data mirror by
``spacy project run lexicon-package projects/accent`` (as spaCy ships its lookup tables
in ``spacy-lookups-data``); its wheel carries the lexicon file, the licences and the
sources.  :func:`find_lexicon` looks, in order, at an explicit path, the environment
variable ``STOICHEIA_ACCENT_LEXICON`` (a ``.npz`` written by
:meth:`~.formlex.FormLexicon.to_disk`), and the installed data package.

Without a lexicon every component still works: the accentuator decodes the backbone's
per-letter scores alone (lower accuracy; see ``projects/accent/RESULTS.md``) and
:func:`load_lexicon` logs that once.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from functools import cache
from importlib import resources
from pathlib import Path

from ..errors import ConfigError
from .formlex import FormLexicon

#: import name of the separately installed data package
DATA_PACKAGE = "stoicheia_lexicon_grc"
#: file name of the lexicon inside the data package
LEXICON_FILE = "formlex.npz"
ENV_VAR = "STOICHEIA_ACCENT_LEXICON"

logger = logging.getLogger("stoicheia_spacy.accent")
_warned: list[bool] = []


def find_lexicon(path: str | Path | None = None) -> Path | None:
    """The lexicon file to use, or None when none is installed (see the module doc)."""
    if path:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"accent lexicon {p} does not exist")
        return p
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env)
        if not p.is_file():
            raise ConfigError(f"{ENV_VAR}={env} does not exist")
        return p
    if importlib.util.find_spec(DATA_PACKAGE) is not None:
        ref = resources.files(DATA_PACKAGE) / LEXICON_FILE
        if ref.is_file():
            return Path(str(ref))
    return None


@cache
def _load(path: str) -> FormLexicon:
    return FormLexicon.from_disk(path)


def load_lexicon(path: str | Path | None = None) -> FormLexicon | None:
    """The accent lexicon (loaded once per file), or None -- logged once -- when none is
    installed: decoding then uses the backbone alone."""
    found = find_lexicon(path)
    if found is None:
        if not _warned:
            _warned.append(True)
            logger.warning(
                "No accent lexicon installed (pip install the %r data package built by "
                "`spacy project run lexicon-package projects/accent`, or set %s): accents and word "
                "division come from the backbone alone, with lower accuracy (projects/accent/RESULTS.md).",
                DATA_PACKAGE.replace("_", "-"), ENV_VAR)
        return None
    return _load(str(found.resolve()))


__all__ = ["DATA_PACKAGE", "ENV_VAR", "LEXICON_FILE", "find_lexicon", "load_lexicon"]
