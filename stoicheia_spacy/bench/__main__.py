"""Dispatch ``python -m stoicheia_spacy.bench NAME [ARGS...]`` to ``stoicheia_spacy.bench.NAME``."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import stoicheia_spacy.bench as bench_pkg


def available() -> list[str]:
    """Names of the benchmark modules that ship with the package."""
    return sorted(m.name for m in pkgutil.iter_modules(bench_pkg.__path__) if not m.name.startswith("_"))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    names = available()
    if not args or args[0] in {"-h", "--help"} or args[0] not in names:
        print("usage: python -m stoicheia_spacy.bench {" + ",".join(names) + "} [ARGS...]")
        return 0 if args and args[0] in {"-h", "--help"} else 2
    module = importlib.import_module(f"stoicheia_spacy.bench.{args[0]}")
    result = module.main(args[1:])
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main())
