"""What the lattice's case government (the word after ``ἐν``/``σύν``/``ξύν`` or a dative article
takes its iota-subscript form) changes on the UD test sets, with the lexicon alone (no backbone
forward, so no cached log-probabilities are needed): word and letter diacritic accuracy with the
rule off and on, and how many words it rewrote, right and wrong.

    python scripts/case_government.py MIRROR corpus/formlex.npz metrics/case_government.json
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from stoicheia_lab.accent.evaluate import gold_planes, read_ud_texts, score

from stoicheia_spacy.accent.formlex import FormLexicon
from stoicheia_spacy.accent.lattice import LatticeParams, decode_lattice
from stoicheia_spacy.codec import word_spans

SETS = {"UD Perseus test": "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz",
        "UD PROIEL test": "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mirror", type=Path)
    ap.add_argument("formlex", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--tuned", type=Path, default=Path("metrics/lattice_params.json"))
    a = ap.parse_args()
    lex = FormLexicon.from_disk(a.formlex)
    on = LatticeParams(**json.loads(a.tuned.read_text(encoding="utf-8"))["lexicon"])
    off = replace(on, govern_dative=False)
    results = {}
    for name, rel in SETS.items():
        gold = gold_planes(read_ud_texts(a.mirror / rel))
        pred = {k: [decode_lattice(g.letters, None, lex, p).planes for g in gold] for k, p in (("off", off), ("on", on))}
        changed = fixed = broken = 0
        for g, p0, p1 in zip(gold, pred["off"], pred["on"], strict=True):
            spans = word_spans(g)
            for s, e in spans.tolist():
                if (p0.diacritics[s:e] != p1.diacritics[s:e]).any():
                    changed += 1
                    ok0 = bool((p0.diacritics[s:e] == g.diacritics[s:e]).all())
                    ok1 = bool((p1.diacritics[s:e] == g.diacritics[s:e]).all())
                    fixed += int(ok1 and not ok0)
                    broken += int(ok0 and not ok1)
        results[name] = {"rule off": score(gold, pred["off"]), "rule on": score(gold, pred["on"]),
                         "words rewritten": changed, "made right": fixed, "made wrong": broken,
                         "words": int(sum(len(word_spans(g)) for g in gold))}
        print(name, {k: results[name][k] for k in ("words rewritten", "made right", "made wrong")},
              round(results[name]["rule off"]["dia_word"], 4), "->", round(results[name]["rule on"]["dia_word"], 4))
    out = {"command": "python scripts/case_government.py MIRROR corpus/formlex.npz metrics/case_government.json "
                      "(projects/accent; the lexicon data package's formlex.npz)",
           "decoder": "lexicon alone (metrics/lattice_params.json 'lexicon'), bare letters of each test sentence",
           "results": results}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
