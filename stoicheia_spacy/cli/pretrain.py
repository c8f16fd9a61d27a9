"""``stoicheia pretrain COMMAND [OPTIONS]``: the standalone pretraining package's command line.

Delegates to ``python -m pretrain`` when that package is importable (a checkout, or an
install that ships it); stoicheia-spacy itself never imports it otherwise.
"""

from __future__ import annotations

from .passthrough import pass_through

#: The pretraining package's command-line module.
PRETRAIN_MAIN = "pretrain.__main__"

HELP = ("Pretrain a backbone: train, export, export-random, bench, presets (python -m pretrain).\n\n"
        "Example: stoicheia pretrain train --preset mini --train-preset cpu --data corpus.jsonl --out runs/mini")

pretrain_command = pass_through(PRETRAIN_MAIN, HELP, missing=(
    "the pretraining package is not importable here: run from a stoicheia-spacy checkout "
    "(its pretrain/ folder) or install it"))
