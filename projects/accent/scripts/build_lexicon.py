"""Build the lexicon baseline from the literary pretraining sources, excluding eval text.

usage: build_lexicon.py MIRROR OUT.json.gz [--limit N] [--sources perseus,glaux,...]
Records sharing a bare-word 6-gram with the UD Perseus/PROIEL test sets or the dev sample
are skipped (stoicheia_spacy.accent.lexicon.LexiconAccentuator.from_texts).
"""

from __future__ import annotations

import argparse
import sys
from itertools import chain
from pathlib import Path

from stoicheia_lab.accent.evaluate import read_dev_sample, read_ud_texts
from stoicheia_lab.corpus import iter_records

from stoicheia_spacy.accent.lexicon import LexiconAccentuator
from stoicheia_spacy.assets import default_model_dir


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror")
    ap.add_argument("out")
    ap.add_argument("--limit", type=int, default=None, help="records per source")
    ap.add_argument("--sources", default="perseus,glaux,first1k,tesserae")
    a = ap.parse_args(argv)
    mirror = Path(a.mirror)
    held = (read_ud_texts(mirror / "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz")
            + read_ud_texts(mirror / "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz")
            + read_dev_sample(default_model_dir() / "dev_sample.jsonl"))
    texts = chain.from_iterable((r["text"] for r in iter_records(s, mirror, a.limit)) for s in a.sources.split(","))
    lex = LexiconAccentuator.from_texts(texts, exclude=held)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    lex.to_disk(a.out)
    print(f"lexicon: {len(lex.counts)} bare forms, {lex.total} tokens -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
