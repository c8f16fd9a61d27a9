"""The word list of the restorer's word check (Run 14): every word of the given parallels indexes.

    python scripts/vocabulary.py --index training/parallels --index training/domains/inscription/parallels \\
        --out training/domains/inscription/vocabulary.npy

Words with a supplied or lost letter are never counted (:meth:`stoicheia_spacy.restore.lexicon.Vocabulary.index_words`).
Writes the ``.npy`` and a ``.json`` beside it (words, bytes, CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from stoicheia_spacy.parallels.index import ParallelIndex
from stoicheia_spacy.restore.lexicon import Vocabulary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vocabulary.py")
    ap.add_argument("--index", action="append", required=True, help="a parallels index folder (repeatable)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0 = time.process_time()
    vocab = Vocabulary.from_indexes([ParallelIndex(x) for x in a.index])
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    vocab.save(out)
    info = {"command": "python scripts/vocabulary.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "words": len(vocab), "bytes": out.stat().st_size, "cpu_s": time.process_time() - cpu0}
    out.with_suffix(".json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
