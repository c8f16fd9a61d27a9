"""``python -m stoicheia_lab.bench.dump [--source SRC] [--data MIRROR] [--n 200] --out JSON``:
every annotation of the default pipeline on real Greek, as JSON, to diff two checkouts.

Texts: the first ``--n`` UD Perseus test sentences (or the test fixture's), with the data
mirror also the two 4,000-character Perseus pieces of :mod:`.components` (the Odyssey, one
verse a line; Appian, prose), and the Leiden/DDbDP sample lines of ``tests/fixtures`` (gaps).
Written per Doc: each token's tag, UPOS, FEATS, lemma and back-off flag, head and relation,
norm and macronized form; the macrons, verses (scansion and metre), the accented text and the
date. Floats are written with ``repr`` (bitwise), so an unchanged output diffs empty:
``python -m stoicheia_lab.bench.dump --out a.json`` with one checkout first on
``PYTHONPATH``, then with the other, then ``cmp a.json b.json``, run from a folder outside both
checkouts (``python -m`` puts the working directory first on ``sys.path``: from a checkout's root
that checkout's code is read whatever ``PYTHONPATH`` says).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from .pipeline import DEFAULT_SOURCE, sentences

LEIDEN = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "leiden_samples.txt"


def plain(value: Any) -> Any:
    """``value`` as JSON values, floats as their ``repr``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    if hasattr(value, "tolist"):
        return plain(value.tolist())
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return repr(value)


def doc_annotations(doc: Any) -> dict[str, Any]:
    """Every annotation the default pipeline writes on ``doc`` (see the module doc)."""
    tokens = [[t.text, t.tag_, t.pos_, str(t.morph), t.lemma_, bool(t._.lemma_backoff), t.head.i, t.dep_,
               t.norm_, t._.macronized] for t in doc]
    verses = [{"span": [v.start, v.end], "scansion": plain(v._.scansion), "meter": plain(v._.meter)}
              for v in (doc._.verses or [])]
    return {"text": doc.text, "tokens": tokens, "macrons": plain(doc._.macrons), "verses": verses,
            "accent_text": doc._.accent_text, "date": plain(doc._.date)}


def texts(data: Path | None, n: int) -> dict[str, list[str]]:
    """The inputs by kind (see the module doc)."""
    out = {"ud": sentences(data, n)[0]}
    if data is not None:
        from .components import pieces

        for kind, text in pieces(data, 4000).items():
            out[kind] = [text]
    out["leiden"] = [line.split("\t", 1)[1] for line in LEIDEN.read_text(encoding="utf-8").splitlines()
                     if line and not line.startswith("#") and "\t" in line]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench.dump")
    parser.add_argument("--source", default=DEFAULT_SOURCE)
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    parser.add_argument("--data", type=Path, default=Path(mirror) if mirror else None)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from stoicheia_spacy.assembly import build_pipeline

    nlp = build_pipeline(args.source)
    result: dict[str, Any] = {"pipes": nlp.pipe_names, "docs": {}}
    start = time.process_time()
    for kind, items in texts(args.data, args.n).items():
        result["docs"][kind] = [doc_annotations(doc) for doc in nlp.pipe(items, batch_size=args.batch_size)]
    print(f"{sum(len(v) for v in result['docs'].values())} docs in {time.process_time() - start:.1f} CPU-s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
