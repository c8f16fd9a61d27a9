"""Where the accent lexicon comes from: it is data under GPL-3.0 / CC BY-SA terms, so it
is **not** part of this (MIT) code package.

It is a separately installable data package, ``stoicheia-lexicon-grc`` (import name
``stoicheia_lexicon_grc``), built from the open-data mirror by
``spacy project run lexicon-package projects/accent`` (as spaCy ships its lookup tables
in ``spacy-lookups-data``); its wheel carries the lexicon file, the licences and the
sources.  :func:`find_lexicon` takes an explicit path (a ``.npz`` written by
:meth:`~.formlex.FormLexicon.to_disk`), else the installed data package; no environment
variable is read. Pipelines name the package in their config (:class:`LexiconPin`).

Without a lexicon every component still works: the accentuator decodes the backbone's
per-letter scores alone (lower accuracy; see ``projects/accent/RESULTS.md``) and
:func:`load_lexicon` logs that once.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import logging
import shutil
from collections.abc import Mapping
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import numpy as np
from spacy.util import registry

from ..assets import file_sha256
from ..errors import ConfigError, LexiconMissingError, ParallelsIndexError
from .formlex import FormLexicon

#: import name of the separately installed data package
DATA_PACKAGE = "stoicheia_lexicon_grc"
#: file name of the lexicon inside the data package
LEXICON_FILE = "formlex.npz"
#: file name of the morphosyntax form table inside the data package (stoicheia_spacy.morph.formtable)
FORM_TABLE_FILE = "form_analyses.npz"

logger = logging.getLogger("stoicheia_spacy.accent")
_warned: list[bool] = []


def find_lexicon(path: str | Path | None = None, *, file: str | None = None) -> Path | None:
    """The lexicon file to use: ``path`` when given (it must exist), else ``file`` (default
    :data:`LEXICON_FILE`) of the installed data package, else None (see the module doc)."""
    if path:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"lexicon {p} does not exist")
        return p
    package = DATA_PACKAGE  # read at call time (tests stand another name in)
    if importlib.util.find_spec(package) is not None:
        ref = resources.files(package) / (file or LEXICON_FILE)
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
                "`spacy project run lexicon-package projects/accent` or `make lexicon`, or pass a path): "
                "accents and word division come from the backbone alone, with lower accuracy "
                "(projects/accent/RESULTS.md).", DATA_PACKAGE.replace("_", "-"))
        return None
    return _load(str(found.resolve()))


#: The scanner's macron lexicon inside the same data package (``scan.macron_lexicon``).
MACRON_FILE = "macron_lexicon.json.gz"
#: The restorer's character n-gram LM inside the same data package (``restore.ngram_lm``;
#: DDbDP papyri, CC BY 3.0, leaving out the restore-eval folds), with its build record beside it.
RESTORE_LM_FILE = "ngram_lm7.npz"
#: The restorer's bidirectional Kneser-Ney character 8-gram (``restore.kneser_ney``; the papyri's
#: certain letters, open literary text and the inscriptions' training part, the restore-eval
#: folds left out), an uncompressed ``.npz`` read memory-mapped, with its build record beside it.
RESTORE_KN_FILE = "kn_lm8.npz"


#: The parallels index (``parallels.index``; DDbDP papyri without the restore-eval folds and the
#: Perseus literary texts), a folder of ``.npy`` files read memory-mapped, with its build record.
PARALLELS_DIR = "parallels"
#: Per text domain, its own restoration sources (``restore.domain_sources``, Run 14: the
#: inscriptions' training part as an 8-gram pair, a parallels index and a word list), one folder each.
DOMAINS_DIR = "domains"


def find_parallels(path: str | Path | None = None, package: str | None = None) -> Path:
    """The parallels index folder: ``path`` when given, else the data package's ``parallels/``;
    raises :class:`~stoicheia_spacy.errors.ParallelsIndexError` naming the package when absent."""
    if path:
        p = Path(path)
        if not p.is_dir():
            raise ParallelsIndexError(f"the parallels index {p} does not exist")
        return p
    package = package or DATA_PACKAGE
    dist = package.replace("_", "-")
    how = ("build and install it with `make lexicon` (or `make demo`) from a checkout with the data mirror; "
           "restoration works without parallels")
    if importlib.util.find_spec(package) is None:
        raise ParallelsIndexError(f"parallels need the lexicon data package {dist!r}, which is not installed: {how}")
    ref = resources.files(package) / PARALLELS_DIR
    if not ref.is_dir():
        raise ParallelsIndexError(f"the installed lexicon data package {dist!r} has no parallels index "
                                  f"({PARALLELS_DIR}/): {how}")
    return Path(str(ref))


def find_domain_sources(name: str, package: str | None = None) -> Path:
    """A domain's sources folder: ``name`` when it is a folder, else the data package's
    ``domains/<name>/``; raises :class:`~stoicheia_spacy.errors.ParallelsIndexError` when absent."""
    p = Path(name)
    if p.is_dir():
        return p
    package = package or DATA_PACKAGE
    dist = package.replace("_", "-")
    how = "build and install it with `make lexicon` from a checkout with the data mirror"
    if importlib.util.find_spec(package) is None:
        raise ParallelsIndexError(f"the {name!r} sources need the lexicon data package {dist!r}: {how}")
    ref = resources.files(package) / DOMAINS_DIR / name
    if not ref.is_dir():
        raise ParallelsIndexError(f"the installed lexicon data package {dist!r} has no {DOMAINS_DIR}/{name}/: {how}")
    return Path(str(ref))


@cache
def _sha256(path: str) -> str:
    return file_sha256(path)


def _installed_version(package: str) -> str | None:
    try:
        return metadata.version(package.replace("_", "-"))
    except metadata.PackageNotFoundError:
        module = importlib.import_module(package)
        version = getattr(module, "__version__", None)
        return None if version is None else str(version)


@dataclasses.dataclass(frozen=True)
class LexiconPin:
    """Which lexicon data package a pipeline component reads: the config's
    ``lexicon`` block (``@misc = "stoicheia.Lexicon.v1"``, ``package = "stoicheia_lexicon_grc"``;
    ``lexicon = null`` opts out). ``nlp.initialize`` pins the installed ``version`` and the
    file's ``sha256`` (:meth:`pin`), ``to_disk`` saves them, and a saved pipeline loads only
    with that exact file (:meth:`resolve` raises :class:`LexiconMissingError` otherwise): a
    pipeline never falls back to weaker output without its lexicon."""

    package: str = DATA_PACKAGE
    version: str | None = None
    sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LexiconPin | None:
        if data is None:
            return None
        return cls(str(data.get("package") or DATA_PACKAGE), data.get("version"), data.get("sha256"))

    def _missing(self, component: str, why: str) -> LexiconMissingError:
        dist = self.package.replace("_", "-")
        return LexiconMissingError(
            f"{component} needs the lexicon data package {dist!r} ({why}). Build and install it with "
            f"`make demo` (or `make lexicon`) from a checkout with the data mirror, or set "
            f"`lexicon = null` on the component in the pipeline's config.cfg to run without it "
            f"(lower accuracy).")

    def resolve(self, file: str, component: str) -> Path:
        """The installed package's ``file``, checked against the pinned version and sha256."""
        if importlib.util.find_spec(self.package) is None:
            raise self._missing(component, "it is not installed")
        ref = resources.files(self.package) / file
        if not ref.is_file():
            raise self._missing(component, f"the installed package has no {file}")
        path = Path(str(ref))
        installed = _installed_version(self.package)
        if self.version is not None and installed != self.version:
            raise self._missing(component, f"version {self.version} was pinned, {installed} is installed")
        if self.sha256 is not None and _sha256(str(path)) != self.sha256:
            raise self._missing(component, f"its {file} is not the file the pipeline was saved with "
                                            f"(sha256 {self.sha256[:12]}…)")
        return path

    def pin(self, file: str, component: str) -> LexiconPin:
        """This pin with the installed version and ``file``'s sha256 (raises when missing)."""
        path = self.resolve(file, component)
        return LexiconPin(self.package, _installed_version(self.package), _sha256(str(path)))


#: The ``lexicon`` config block: the class itself (its fields are the block's options).
lexicon_pin = registry.misc.register("stoicheia.Lexicon.v1", func=LexiconPin)

_PYPROJECT = """[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "{version}"
description = "Accent lexicon (attested Ancient Greek word forms) for stoicheia-spacy"
readme = "README.md"
license = "GPL-3.0-or-later AND CC-BY-SA-4.0 AND CC-BY-SA-3.0 AND CC-BY-3.0"
license-files = ["LICENSE"]
requires-python = ">=3.10"

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools.package-data]
{package} = ["{lexicon}", "macron_lexicon.json.gz", "ngram_lm7.npz", "ngram_lm7.json", "kn_lm8.npz", "kn_lm8.json", "parallels/*", "domains/*/*", "domains/*/parallels/*", "form_analyses.npz", "LICENSE", "SOURCES.json"]
"""

_INIT = '''"""Accent lexicon data for stoicheia-spacy (found by stoicheia_spacy.accent.lexasset)."""

from pathlib import Path

__version__ = "{version}"


def path() -> Path:
    """The lexicon file."""
    return Path(__file__).with_name("{lexicon}")
'''


def write_data_package(lexicon: str | Path, out_dir: str | Path, license_text: str, *,
                       version: str = "0.1.0", macron_lexicon: str | Path | None = None,
                       restore_lm: str | Path | None = None, restore_kn: str | Path | None = None,
                       parallels: str | Path | None = None, form_table: str | Path | None = None,
                       domain_sources: Mapping[str, str | Path] | None = None) -> Path:
    """Lay out the installable data package ``stoicheia-lexicon-grc`` around a lexicon file
    (build a wheel from the returned folder with ``pip wheel --no-deps``).  The package
    carries ``license_text`` (GPL-3.0 of the Hunspell list) and the lexicon's own record of
    its sources and their licences (``SOURCES.json``, README).  ``macron_lexicon`` (the
    scanner's ``macron_lexicon.json.gz``, which records its own licence) joins it, so one
    installed package serves the accentuator and the scanner. ``restore_lm`` (the restorer's
    character n-gram LM, ``make restore-lm``: DDbDP papyri, CC BY 3.0) joins it with its build
    record (the ``.json`` beside it: documents, the held-out folds, sha256); ``restore_kn`` (the
    restorer's Kneser-Ney 8-gram, ``make restore-lm``) likewise; ``parallels`` (the parallels index
    folder, ``make parallels-index``) is copied in as ``parallels/`` with its build record;
    ``form_table`` (the morphosyntax form -> (lemma, XPOS) table,
    ``projects/parse/scripts/build_form_table.py``, which records its sources and their licences)
    joins it as ``form_analyses.npz``; ``domain_sources`` (domain -> its sources folder,
    ``projects/restore`` ``inscriptions-lm``) are copied in as ``domains/<domain>/``."""
    lex = FormLexicon.from_disk(lexicon)
    sources = json.loads(lex.sources or "{}")
    root = Path(out_dir) / DATA_PACKAGE.replace("_", "-")
    pkg = root / DATA_PACKAGE
    pkg.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(lexicon, pkg / LEXICON_FILE)
    if macron_lexicon is not None:
        shutil.copyfile(macron_lexicon, pkg / MACRON_FILE)
    if restore_lm is not None:
        shutil.copyfile(restore_lm, pkg / RESTORE_LM_FILE)
        record = Path(restore_lm).with_suffix(".json")
        if record.is_file():
            shutil.copyfile(record, (pkg / RESTORE_LM_FILE).with_suffix(".json"))
        sources.setdefault("licenses", {})["ngram_lm7.npz"] = (
            "character 7-gram LM of the restorer, counts from the DDbDP papyri text (CC BY 3.0) of the duke-nlp 2018 release (CC BY-SA 4.0); "
            "the restore-eval folds (TM digits 3 and 4) left out")
    if restore_kn is not None:
        shutil.copyfile(restore_kn, pkg / RESTORE_KN_FILE)
        record = Path(restore_kn).with_suffix(".json")
        if record.is_file():
            shutil.copyfile(record, (pkg / RESTORE_KN_FILE).with_suffix(".json"))
        sources.setdefault("licenses", {})[RESTORE_KN_FILE] = (
            "bidirectional character 8-gram LM of the restorer: counts from the certain letters of the DDbDP papyri "
            "(CC BY 3.0; duke-nlp 2018 release, CC BY-SA 4.0), open literary text (Perseus CC BY-SA 3.0 US, "
            "First1K/OPP CC BY-NC 4.0) and the IOSPE (MIT) and IIP inscriptions; the restore-eval folds "
            "(identifier digits 3 and 4) left out")
    if parallels is not None:
        target = pkg / PARALLELS_DIR
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(parallels, target)
        record = Path(parallels).parent / f"{Path(parallels).name}_build.json"
        if record.is_file():
            shutil.copyfile(record, target / "build.json")
        sources.setdefault("licenses", {})[PARALLELS_DIR] = (
            "parallels index: the letters of the DDbDP papyri (CC BY 3.0; duke-nlp 2018 release, CC BY-SA 4.0), "
            "the restore-eval folds (TM digits 3 and 4) left out, and of the Perseus Greek texts (CC BY-SA 3.0 US)")
    for name, folder in (domain_sources or {}).items():
        target = pkg / DOMAINS_DIR / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(folder, target)
        sources.setdefault("licenses", {})[f"{DOMAINS_DIR}/{name}"] = (
            f"the {name} domain's restoration sources (8-gram pair, parallels index, word list): the certain letters of "
            "the IOSPE (MIT) and IIP inscriptions' training part (identifier digits 3 and 4 left out), the word list "
            "also of the parallels index's DDbDP papyri (CC BY 3.0) and Perseus texts (CC BY-SA 3.0 US)")
    if form_table is not None:
        shutil.copyfile(form_table, pkg / FORM_TABLE_FILE)
        with np.load(form_table, allow_pickle=False) as table:
            recorded = "; ".join(str(x) for x in table["sources"]) if "sources" in table.files else ""
        sources.setdefault("licenses", {})[FORM_TABLE_FILE] = (
            "form -> (lemma, AGDT tag) table of the morphologizer and lemmatizer: " + (recorded or "sources unrecorded"))
    (pkg / "LICENSE").write_text(license_text, encoding="utf-8")
    (root / "LICENSE").write_text(license_text, encoding="utf-8")
    (pkg / "SOURCES.json").write_text(json.dumps(sources, indent=1, ensure_ascii=False), encoding="utf-8")
    (pkg / "__init__.py").write_text(_INIT.format(lexicon=LEXICON_FILE, version=version), encoding="utf-8")
    (root / "pyproject.toml").write_text(_PYPROJECT.format(
        dist=DATA_PACKAGE.replace("_", "-"), version=version, package=DATA_PACKAGE, lexicon=LEXICON_FILE),
        encoding="utf-8")
    licences = "\n".join(f"* {name}: {text}" for name, text in sources.get("licenses", {}).items())
    (root / "README.md").write_text(
        f"# {DATA_PACKAGE.replace('_', '-')}\n\nAttested Ancient Greek word forms ({len(lex)} forms, "
        f"{lex.n_bare} bare forms) for the lexicon-aware accentuator of stoicheia-spacy "
        "(and, when built with it, the restorer's character n-gram LM) "
        "(`stoicheia_spacy.accent.lattice`). Data only; installing it makes `spacy.load(...)` and "
        "`stoicheia accentuate` use it.\n\nBuilt by `spacy project run lexicon-package projects/accent` "
        "from the open-data mirror. Licences of the sources (the package as a whole is distributed "
        f"under GPL-3.0-or-later, see LICENSE):\n\n{licences}\n", encoding="utf-8")
    return root


__all__ = ["DATA_PACKAGE", "FORM_TABLE_FILE", "LEXICON_FILE", "MACRON_FILE", "PARALLELS_DIR", "DOMAINS_DIR", "find_parallels", "find_domain_sources", "RESTORE_KN_FILE", "RESTORE_LM_FILE", "LexiconPin", "find_lexicon", "lexicon_pin",
           "load_lexicon", "write_data_package"]
