"""UD-label evaluation (issue 42, item 4): the default pipeline on UD Perseus test and UD PROIEL
test, gold tokens and gold sentences, scored with the CoNLL 2018 metrics in the UD scheme.

Two stages, so that a change of the conversion re-scores without re-parsing:

* ``cache``: parse each test file's gold words once with the default pipeline in its
  default (AGDT) scheme and write the predictions as CoNLL-U (``CACHE/{split}.conllu``:
  AGDT tag, UPOS, FEATS, lemma, AGDT head and relation);
* ``score``: convert the cached AGDT trees to UD with
  :func:`stoicheia_spacy.morph.agdt_ud_tree.convert_sentence` (what the pipeline writes under
  ``scheme = "ud"``) and score them against the UD gold (:func:`score_split`); the gold AGDT
  trees of UD Perseus test, converted the same way, give the conversion's own ceiling.

    python scripts/ud_eval.py cache MIRROR CACHE
    python scripts/ud_eval.py score MIRROR CACHE OUT.json [--agdt-gold ud_perseus_test=corpus/ud_perseus_test_agdt.spacy]

``score`` also writes OUT.md, the table RESULTS.md shows (:func:`markdown_table`).

:func:`score_split` (cached predictions, gold CoNLL-U -> percent scores in both schemes) is the
function other evaluations call (``parse-eval``).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import sys
import time
from pathlib import Path
from typing import Any

#: split name -> the UD test file under the mirror.
SPLITS = {
    "ud_perseus_test": "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz",
    "ud_proiel_test": "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz",
}
PIPES = ("stoicheia_encoder", "stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def read_gold(path: Path) -> list[Any]:
    """The UD gold sentences (``conllu`` TokenLists, multiword ranges dropped)."""
    import conllu

    with lzma.open(path, "rt", encoding="utf-8") as handle:
        sents = list(conllu.parse_incr(handle))
    for sent in sents:
        sent[:] = [t for t in sent if isinstance(t["id"], int)]
    return sents


def cache(mirror: Path, out: Path, limit: int = 0, batch_size: int = 16, force: bool = False) -> dict[str, Any]:
    """Parse every split's gold words (AGDT scheme) into ``out/{split}.conllu``, CPU words/s per
    split into ``out/timing.json``; a split already cached is kept unless ``force``."""
    import spacy
    from spacy.tokens import Doc

    from stoicheia_spacy.morph.conllu import span_words

    nlp = spacy.load("grc_stoicheia_doc_clean")
    nlp.select_pipes(enable=[p for p in PIPES if p in nlp.pipe_names])
    out.mkdir(parents=True, exist_ok=True)
    timing_file = out / "timing.json"
    timing: dict[str, Any] = json.loads(timing_file.read_text()) if timing_file.exists() else {}
    for split, rel in SPLITS.items():
        if (out / f"{split}.conllu").exists() and split in timing and not force:
            continue
        gold = read_gold(mirror / rel)
        if limit:
            gold = gold[:limit]
        docs = [Doc(nlp.vocab, words=[t["form"] for t in s],
                    spaces=[not (t["misc"] or {}).get("SpaceAfter") == "No" for t in s],
                    sent_starts=[True] + [False] * (len(s) - 1)) for s in gold]
        t0 = time.process_time()
        lines = []
        for sent, doc in zip(gold, nlp.pipe(docs, batch_size=batch_size), strict=True):
            lines.append(f"# sent_id = {sent.metadata.get('sent_id', '')}\n")
            for w in span_words(doc):
                lines.append("\t".join(str(w[k]) for k in ("id", "form", "lemma", "upos", "xpos", "feats", "head",
                                                          "deprel", "deps", "misc")) + "\n")
            lines.append("\n")
        cpu = time.process_time() - t0
        (out / f"{split}.conllu").write_text("".join(lines), encoding="utf-8")
        words = sum(len(s) for s in gold)
        timing[split] = {"words": words, "sentences": len(gold), "cpu_seconds": round(cpu, 1),
                         "words_per_cpu_second": round(words / cpu, 1) if cpu else None}
        print(split, timing[split], flush=True)
        timing_file.write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")
    return timing


def _pct(scores: dict[str, Any]) -> dict[str, float]:
    return {k: round(100 * v.accuracy, 2) for k, v in scores.items()}


def score_split(pred_conllu: Path, gold_conllu: Path) -> dict[str, Any]:
    """CoNLL 2018 scores (percent, gold tokens) of cached AGDT-scheme predictions against a UD
    gold file: ``ud`` after the AGDT -> UD conversion (the ``scheme = "ud"`` output) and
    ``agdt_labels`` as written (labels and trees of the AGDT scheme: LAS not comparable)."""
    from stoicheia_lab.scoring.conll import read_conllu, score_conll

    from stoicheia_spacy.morph.agdt_ud_tree import convert_words

    gold = read_conllu(gold_conllu)
    pred = read_conllu(pred_conllu)
    converted = [convert_words(s) for s in pred]
    return {"words": sum(len(s) for s in gold), "sentences": len(gold),
            "ud": _pct(score_conll(gold, converted)), "agdt_labels": _pct(score_conll(gold, pred))}


def gold_agdt_ceiling(agdt_docbin: Path, gold_conllu: Path) -> dict[str, Any]:
    """The conversion applied to the gold AGDT 2.1 trees of the same sentences (matched by
    text), scored against the UD gold: what a perfect AGDT parse would reach in UD labels."""
    import spacy
    from spacy.tokens import DocBin
    from stoicheia_lab.scoring.conll import read_conllu, score_conll

    from stoicheia_spacy.morph.agdt_ud_tree import convert_words
    from stoicheia_spacy.morph.conllu import span_words

    nlp = spacy.blank("grc")
    by_forms: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for doc in DocBin().from_disk(agdt_docbin).get_docs(nlp.vocab):
        for sent in doc.sents:
            words = span_words(sent)
            by_forms.setdefault(tuple(w["form"] for w in words), words)
    gold_all = read_conllu(gold_conllu)
    gold, pred = [], []
    for sent in gold_all:
        words = by_forms.get(tuple(w["form"] for w in sent))
        if words is not None:
            gold.append(sent)
            pred.append(convert_words(words))
    return {"matched_sentences": len(gold), "of_sentences": len(gold_all),
            "words": sum(len(s) for s in gold), "ud": _pct(score_conll(gold, pred))}


#: Published UD Perseus figures of other parsers (the issue's list; their own tokenisation and splits).
PEERS = (("odyCy", {"UPOS": 95.39, "Lemma": 83.20, "LAS": 73.09}), ("Stanza", {"LAS": 73.97}),
         ("Trankit", {"LAS": 78.56}), ("a 2026 toolkit", {"LAS": 85.64}))


def markdown_table(result: dict[str, Any]) -> str:
    """The RESULTS.md table of a ``score`` JSON: our rows in UD labels, the ceiling, the peers."""
    cols = ("UPOS", "UFeats", "Lemma", "UAS", "LAS", "CLAS")
    lines = ["| test set | system | words | " + " | ".join(cols) + " | words/s per CPU second |",
             "|---|---|---|" + "---|" * (len(cols) + 1)]
    names = {"ud_perseus_test": "UD Perseus test", "ud_proiel_test": "UD PROIEL test"}
    for split, name in names.items():
        row = result.get(split)
        if not row:
            continue
        speed = (row.get("timing") or {}).get("words_per_cpu_second", "")
        lines.append(f"| {name} | stoicheia, `scheme = \"ud\"` | {row['words']} | "
                     + " | ".join(f"{row['ud'][c]:.2f}" for c in cols) + f" | {speed} |")
        if split == "ud_perseus_test":
            agdt = row["agdt_labels"]
            lines.append(f"| {name} | stoicheia, AGDT labels as written (not UD) | {row['words']} | "
                         + " | ".join(f"{agdt[c]:.2f}" if c not in ("UAS", "LAS", "CLAS") else "–"
                                      for c in cols) + " | |")
            ceiling = row.get("gold_agdt_converted")
            if ceiling:
                lines.append(f"| {name} | gold AGDT 2.1 trees converted (the conversion's ceiling) | "
                             f"{ceiling['words']} | – | – | – | " + " | ".join(f"{ceiling['ud'][c]:.2f}"
                                                                              for c in ("UAS", "LAS", "CLAS")) + " | |")
            for peer, figures in PEERS:
                lines.append(f"| {name} | {peer} (published) | | "
                             + " | ".join(f"{figures[c]:.2f}" if c in figures else "" for c in cols) + " | |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=("cache", "score"))
    ap.add_argument("mirror", type=Path)
    ap.add_argument("cache_dir", type=Path)
    ap.add_argument("out", type=Path, nargs="?")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--force", action="store_true", help="cache: parse again splits already cached")
    ap.add_argument("--agdt-gold", type=Path, action="append", default=[],
                    help="SPLIT=DOCBIN: gold AGDT trees of a split, for the conversion ceiling")
    args = ap.parse_args(argv)
    if args.stage == "cache":
        cache(args.mirror, args.cache_dir, args.limit, force=args.force)
        return 0
    if args.out is None:
        ap.error("score needs OUT.json")
    result: dict[str, Any] = {"pipeline": "grc_stoicheia_doc_clean", "tokens": "gold", "sentences": "gold",
                              "scorer": "stoicheia_lab.scoring.conll (CoNLL 2018 metrics, relation subtypes ignored)",
                              "conversion": "stoicheia_spacy.morph.agdt_ud_tree"}
    timing_file = args.cache_dir / "timing.json"
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {}
    ceilings = dict(a.as_posix().split("=", 1) for a in args.agdt_gold)
    for split, rel in SPLITS.items():
        pred = args.cache_dir / f"{split}.conllu"
        if not pred.exists():
            continue
        row = score_split(pred, args.mirror / rel)
        row["timing"] = timing.get(split)
        if split in ceilings:
            row["gold_agdt_converted"] = gold_agdt_ceiling(Path(ceilings[split]), args.mirror / rel)
        result[split] = row
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown_table(result), encoding="utf-8")
    print(markdown_table(result))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
