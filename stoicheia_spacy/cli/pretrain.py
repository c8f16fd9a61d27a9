"""``stoicheia pretrain COMMAND [OPTIONS]``: the standalone pretraining package's command line.

Delegates to ``python -m pretrain``: the ``pretrain`` package when it is importable, else
the one of the repository checkout this package is installed from (``make install`` /
``pip install -e .``), so the command works from any folder. A wheel does not ship it
(``pretrain`` is a bare, generic top-level name); the command then says how to get it.
stoicheia-spacy itself never imports it otherwise.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .passthrough import pass_through

#: The pretraining package's command-line module.
PRETRAIN_MAIN = "pretrain.__main__"
#: The repository checkout this package lies in (when installed from one).
CHECKOUT = Path(__file__).resolve().parents[2]

HELP = ("Pretrain a backbone: train, export, export-random, bench, presets (python -m pretrain).\n\n"
        "Example: stoicheia pretrain train --preset mini --train-preset cpu --data corpus.jsonl --out runs/mini")

MISSING = ("the pretraining package ships with the repository, not with the wheel: clone stoicheia-spacy and "
           "run `make install` (or `pip install -e .`) there; `stoicheia pretrain` then works from any folder")


def import_pretrain(checkout: Path | None = None) -> ModuleType:
    """``pretrain.__main__``: importable as it is, else from ``checkout/pretrain``; raises
    ``ModuleNotFoundError`` (name ``pretrain``) when neither has it (``checkout``: default :data:`CHECKOUT`)."""
    try:
        return importlib.import_module(PRETRAIN_MAIN)
    except ModuleNotFoundError as exc:
        if exc.name not in ("pretrain", PRETRAIN_MAIN):
            raise
        init = (checkout or CHECKOUT) / "pretrain" / "__init__.py"
        if not init.is_file():
            raise
    spec = importlib.util.spec_from_file_location("pretrain", init, submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None:  # pragma: no cover - a file that is there always has a spec
        raise ModuleNotFoundError(MISSING, name="pretrain")
    package = importlib.util.module_from_spec(spec)
    sys.modules["pretrain"] = package
    spec.loader.exec_module(package)
    return importlib.import_module(PRETRAIN_MAIN)


pretrain_command = pass_through(PRETRAIN_MAIN, HELP, missing=MISSING, importer=import_pretrain)
