"""``python -m stoicheia_lab.corpus STEP ...``: an alias of ``stoicheia corpus STEP ...``
(:mod:`stoicheia_lab.cli.corpus`)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run one step; returns the exit status."""
    from stoicheia_spacy.cli.app import run

    from ..cli.corpus import corpus_app

    return run(corpus_app, argv, prog_name="python -m stoicheia_lab.corpus")


if __name__ == "__main__":
    sys.exit(main())
