"""Learn the AGDT -> UD label table (pass 4 of :mod:`stoicheia_spacy.morph.agdt_ud_tree`) on UD
Perseus dev: its gold AGDT 2.1 trees (``corpus/ud_perseus_dev_agdt.spacy``), restructured by
passes 1-3, aligned by forms with the UD gold sentences; every context of every word still
labelled in AGDT counts the gold UD relation. Writes the table as a Python module (shipped
with the package) and the dev fit (the conversion of the gold trees scored against the UD gold).

    python scripts/learn_ud_labels.py corpus/ud_perseus_dev_agdt.spacy UD_DEV.conllu.xz \
        ../../stoicheia_spacy/morph/agdt_ud_labels.py [--fit metrics/ud_labels_dev_fit.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import spacy
from spacy.tokens import DocBin
from stoicheia_lab.scoring.conll import read_conllu, score_conll

from stoicheia_spacy.morph import agdt_ud_tree
from stoicheia_spacy.morph.conllu import span_words


def aligned_pairs(agdt_docbin: Path, ud_gold: Path) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """(gold AGDT words, gold UD words) of the sentences whose forms agree."""
    nlp = spacy.blank("grc")
    by_forms: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for doc in DocBin().from_disk(agdt_docbin).get_docs(nlp.vocab):
        for sent in doc.sents:
            words = span_words(sent)
            by_forms.setdefault(tuple(w["form"] for w in words), words)
    pairs = []
    for sent in read_conllu(ud_gold):
        words = by_forms.get(tuple(w["form"] for w in sent))
        if words is not None:
            pairs.append((words, sent))
    return pairs


def learn(pairs: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]) -> dict[str, dict[str, int]]:
    """Context -> {UD relation: count} over the words passes 1-3 leave in AGDT."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for agdt, ud in pairs:
        feats = [agdt_ud_tree._feats_text(w.get("feats")) for w in agdt]
        lemmas = [agdt_ud_tree._lemma_key(str(w["lemma"])) for w in agdt]
        heads, rels = agdt_ud_tree.restructure([int(w["head"]) for w in agdt], [str(w["deprel"]) for w in agdt], lemmas)
        upos = [str(w["upos"]) for w in agdt]
        for j, rel in enumerate(rels):
            if heads[j] == 0 or rel in agdt_ud_tree.UD_FIXED or rel in agdt_ud_tree.PUNCT_RELS:
                continue
            gold = str(ud[j]["deprel"])
            for key in agdt_ud_tree.contexts(j, heads, rels, upos, feats):
                table[key][gold] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}


def write_module(table: dict[str, dict[str, int]], out: Path, n_sents: int) -> None:
    lines = ['"""AGDT -> UD label table (context -> {UD relation: count}), learnt on UD Perseus dev',
             f"({n_sents} sentences aligned with their gold AGDT 2.1 trees) by",
             "``projects/parse/scripts/learn_ud_labels.py`` (step ``ud-labels``): do not edit by hand.",
             "See :mod:`stoicheia_spacy.morph.agdt_ud_tree`, pass 4.", '"""', "",
             "LABELS: dict[str, dict[str, int]] = {"]
    for key, counts in table.items():
        lines.append(f"    {key!r}: {counts!r},")
    lines.append("}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agdt_docbin", type=Path)
    ap.add_argument("ud_gold", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--fit", type=Path)
    args = ap.parse_args(argv)
    pairs = aligned_pairs(args.agdt_docbin, args.ud_gold)
    table = learn(pairs)
    write_module(table, args.out, len(pairs))
    if args.fit:
        pred = [agdt_ud_tree.convert_words(a, table) for a, _ in pairs]
        scores = score_conll([u for _, u in pairs], pred)
        fit = {"sentences": len(pairs), "contexts": len(table),
               "gold_agdt_converted_vs_ud_gold": {k: round(100 * v.accuracy, 2) for k, v in scores.items()}}
        args.fit.parent.mkdir(parents=True, exist_ok=True)
        args.fit.write_text(json.dumps(fit, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(fit, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
