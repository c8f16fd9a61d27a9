"""Score head directories written by train_heads.py (default backbone + those heads).

    python scripts/evaluate_heads.py HEADS_DIR DATA.spacy OUT.json [--limit N]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import evaluate


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from stoicheia_lab.heads import morphosyntax_config

    from stoicheia_spacy.assembly import build_pipeline, extend

    nlp = build_pipeline("embedded:grc_stoicheia_doc_clean", components=False)  # heads come from HEADS_DIR
    extend(nlp, morphosyntax_config(Path(args[0])))
    return evaluate.main(args, nlp=nlp)


if __name__ == "__main__":
    raise SystemExit(main())
