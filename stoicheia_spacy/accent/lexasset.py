"""Where the accent lexicon comes from: it is data under GPL-3.0 / CC BY-SA terms, so it
is **not** part of this (MIT) code package.

It is a separately installable data package, ``stoicheia-lexicon-grc`` (import name
``stoicheia_lexicon_grc``), built from the open-data mirror by
``spacy project run lexicon-package projects/accent`` (as spaCy ships its lookup tables
in ``spacy-lookups-data``); its wheel carries the lexicon file, the licences and the
sources.  :func:`find_lexicon` looks, in order, at an explicit path, the environment
variable ``STOICHEIA_ACCENT_LEXICON`` (a ``.npz`` written by
:meth:`~.formlex.FormLexicon.to_disk`; ``none`` switches the lexicon off), and the installed
data package.

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
#: values of ``ENV_VAR`` that switch the lexicon off even when the data package is installed
DISABLED = frozenset({"none", "off", "0"})

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
    if env and env.lower() in DISABLED:
        return None
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


#: The scanner's macron lexicon inside the same data package (``scan.macron_lexicon``).
MACRON_FILE = "macron_lexicon.json.gz"

_PYPROJECT = """[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "{version}"
description = "Accent lexicon (attested Ancient Greek word forms) for stoicheia-spacy"
readme = "README.md"
license = "GPL-3.0-or-later AND CC-BY-SA-4.0 AND CC-BY-SA-3.0"
license-files = ["LICENSE"]
requires-python = ">=3.10"

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
{package} = ["{lexicon}", "macron_lexicon.json.gz", "LICENSE", "SOURCES.json"]
"""

_INIT = '''"""Accent lexicon data for stoicheia-spacy (found by stoicheia_spacy.accent.lexasset)."""

from pathlib import Path


def path() -> Path:
    """The lexicon file."""
    return Path(__file__).with_name("{lexicon}")
'''


def write_data_package(lexicon: str | Path, out_dir: str | Path, license_text: str, *,
                       version: str = "0.1.0", macron_lexicon: str | Path | None = None) -> Path:
    """Lay out the installable data package ``stoicheia-lexicon-grc`` around a lexicon file
    (build a wheel from the returned folder with ``pip wheel --no-deps``).  The package
    carries ``license_text`` (GPL-3.0 of the Hunspell list) and the lexicon's own record of
    its sources and their licences (``SOURCES.json``, README).  ``macron_lexicon`` (the
    scanner's ``macron_lexicon.json.gz``, which records its own licence) joins it, so one
    installed package serves the accentuator and the scanner."""
    import json
    import shutil

    lex = FormLexicon.from_disk(lexicon)
    sources = json.loads(lex.sources or "{}")
    root = Path(out_dir) / DATA_PACKAGE.replace("_", "-")
    pkg = root / DATA_PACKAGE
    pkg.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(lexicon, pkg / LEXICON_FILE)
    if macron_lexicon is not None:
        shutil.copyfile(macron_lexicon, pkg / MACRON_FILE)
    (pkg / "LICENSE").write_text(license_text, encoding="utf-8")
    (root / "LICENSE").write_text(license_text, encoding="utf-8")
    (pkg / "SOURCES.json").write_text(json.dumps(sources, indent=1, ensure_ascii=False), encoding="utf-8")
    (pkg / "__init__.py").write_text(_INIT.format(lexicon=LEXICON_FILE), encoding="utf-8")
    (root / "pyproject.toml").write_text(_PYPROJECT.format(
        dist=DATA_PACKAGE.replace("_", "-"), version=version, package=DATA_PACKAGE, lexicon=LEXICON_FILE),
        encoding="utf-8")
    licences = "\n".join(f"* {name}: {text}" for name, text in sources.get("licenses", {}).items())
    (root / "README.md").write_text(
        f"# {DATA_PACKAGE.replace('_', '-')}\n\nAttested Ancient Greek word forms ({len(lex)} forms, "
        f"{lex.n_bare} bare forms) for the lexicon-aware accentuator of stoicheia-spacy "
        "(`stoicheia_spacy.accent.lattice`). Data only; installing it makes `spacy.load(...)` and "
        "`stoicheia accentuate` use it.\n\nBuilt by `spacy project run lexicon-package projects/accent` "
        "from the open-data mirror. Licences of the sources (the package as a whole is distributed "
        f"under GPL-3.0-or-later, see LICENSE):\n\n{licences}\n", encoding="utf-8")
    return root


__all__ = ["DATA_PACKAGE", "ENV_VAR", "LEXICON_FILE", "MACRON_FILE", "find_lexicon", "load_lexicon", "write_data_package"]
