"""Build the macron lexicon asset (GPL-3.0 / CC BY-SA data; kept out of the code package).

Reads the mirror's ``lexica/grc_macronizer_db`` and drops the Hypotactic markup of word
forms attested only in the Hypotactic books that hold Norma text (Dionysiaca 1,
Posthomerica 1; ``stoicheia_lab.scan.silver.leaked_forms``); adds the η-forms of the
Hunspell form list (GPL-3.0) for the Doric-ᾱ test, and the corpus table of long/short
counts per dichronon from Hypotactic's scanned verse (CC BY 4.0;
``stoicheia_lab.scan.corpus_lengths``: the Norma books never read, lines sharing a
shingle with any Norma line dropped).

    python scripts/build_lexicon.py assets/macron_lexicon.json.gz --meta metrics/macron_lexicon.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from stoicheia_lab.scan.corpus_lengths import corpus_length_table
from stoicheia_lab.scan.norma import read_norma
from stoicheia_lab.scan.silver import leaked_forms

from stoicheia_spacy.scan.macron_lexicon import build_macron_lexicon, read_eta_forms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--meta", type=Path, default=None, help="also write the asset's meta (counts, leak screen) here")
    args = ap.parse_args(argv)
    mirror = Path(os.environ["STOICHEIA_ASSET_MIRROR"])
    leaked = leaked_forms(mirror)
    eta = read_eta_forms(mirror / "lexica" / "grc_hunspell_wordforms.txt.xz")
    lex = build_macron_lexicon(mirror / "lexica" / "grc_macronizer_db", drop_hypotactic=leaked, eta_forms=eta)
    lex.meta["leak_screen"] = {"forms_only_in_norma_books": len(leaked)}
    norma = read_norma(mirror / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    lex.corpus, lex.meta["corpus_table"] = corpus_length_table(mirror, norma)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    lex.to_disk(args.out)
    meta = {**lex.meta, "bytes": args.out.stat().st_size}
    if args.meta is not None:
        args.meta.parent.mkdir(parents=True, exist_ok=True)
        args.meta.write_text(json.dumps(meta, indent=2, ensure_ascii=False))
    print(json.dumps(meta, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
