"""``python -m stoicheia_lab.bench NAME [ARGS...]``: an alias of ``stoicheia bench NAME [ARGS...]``
(:mod:`stoicheia_lab.cli.bench`)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark; returns the exit status."""
    from stoicheia_spacy.cli.app import run

    from ..cli.bench import bench_app

    return run(bench_app, argv, prog_name="python -m stoicheia_lab.bench")


if __name__ == "__main__":
    sys.exit(main())
