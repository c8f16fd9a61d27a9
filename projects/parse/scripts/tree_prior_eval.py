"""The parser with the morphologizer's tags (issue 42: LAS outside the treebanks).

    python scripts/tree_prior_eval.py cache SPLIT CACHE_DIR [--mirror M]
    python scripts/tree_prior_eval.py prior OUT.npz                # counted on fold 0's training trees
    python scripts/tree_prior_eval.py fit CACHE_DIR PRIOR.npz OUT.json --tags-cache PARSE_EVAL_CACHE
    python scripts/tree_prior_eval.py score CACHE_DIR PRIOR.npz OUT.json --prior-fit FIT.json
    python scripts/tree_prior_eval.py pipeline OUT.json [--splits fold0_dev,papygreek_dev,papygreek_test]

The shipped parser reads the backbone's word vectors and the words' hashed spellings, not the
tags: on documentary papyri, where the heads' tags fall from 95 to 88 UPOS and the form table
brings them back, the parser cannot profit. Here its scores are combined with a prior counted
on fold 0's training trees over the **tag classes** of the two words (part of speech with case,
or with mood for verbs, :func:`tag_class`):

* arcs: ``log p(h | d) + alpha · log q(h | d)``, ``q`` a softmax over the sentence's candidate
  heads of ``log r(c_d, c_h, direction, distance)``, ``r`` the smoothed share of such candidate
  pairs that are arcs in the training trees; the tree is the same MST as the parser's;
* labels: ``log p(l | d, h) + beta · log P(l | c_d, c_h, direction)`` (backed off to
  ``P(l | c_d)``).

``cache`` runs the default pipeline's encoder and parser on a split's gold words (the
sentences of ``parse_eval.py``'s split, :data:`parse_eval.SPLITS`) and keeps every sentence's arc
log-probabilities and the label log-probabilities of every (dependent, head) pair. The tags come
from ``parse_eval.py``'s cache of the same split (``--tags-cache``), decoded as the default
pipeline decodes them (its fitted weights of the split's domain). ``fit`` picks ``alpha`` and
``beta`` per domain on the dev splits (LAS; ``other``: AGDT fold-0 dev, ``papyrus``: PapyGreek
dev); ``score`` scores every test split with and without the prior (CoNLL 2018 metrics, AGDT
labels and, where the split has a UD gold file, UD labels through the conversion), with exact
McNemar tests on the words whose head and label are right. ``pipeline`` runs the installed
default pipeline itself with its prior and with the prior's weights at 0, as a check that the
component decodes as this script does.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy.morph.tree_prior import TreePrior

sys.path.insert(0, str(Path(__file__).parent))
from parse_eval import (
    SPLITS,
    TRAIN,
    cached_already,
    command_line,
    decode,
    gold_docs,
    gold_sentences,
    gold_words,
    load_context,
    mcnemar,
    pred_words,
    split_words,
    write_conllu,
)

ALPHAS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5)
BETAS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5)
DEVS = {"other": ("fold0_dev",), "papyrus": ("papygreek_dev",)}
#: the default pipeline's parser data (its relations), relative to the repository
PARSER_DATA = "assets/models/grc_stoicheia_doc_clean/morphosyntax/stoicheia_parser/data.json"


# ------------------------------------------------------------------------------------------- the prior
def prior(project: Path, out: Path, labels: Sequence[str]) -> None:
    """Count the arc and relation statistics on fold 0's training trees (gold tags)."""
    import spacy
    from spacy.tokens import DocBin

    from stoicheia_spacy.morph.tree_prior import TreePrior

    vocab = spacy.blank("grc").vocab
    sentences = []
    for doc in DocBin().from_disk(project / TRAIN).get_docs(vocab):
        for sent in doc.sents:
            toks = list(sent)
            sentences.append(([t.tag_ for t in toks], [t.lemma_ for t in toks],
                              [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in toks], [t.dep_ for t in toks]))
    pri = TreePrior.count(sentences, labels)
    out.parent.mkdir(parents=True, exist_ok=True)
    pri.to_disk(out)
    print(f"prior: {len(sentences)} sentences, {json.dumps(pri.info())} -> {out}")


# --------------------------------------------------------------------------------------------- caching
def cache(split: str, cache_dir: Path, project: Path, mirror: Path, batch: int = 16) -> Path:
    """Arc and label log-probabilities of every cached sentence (module doc)."""
    import torch
    from parse_eval import nlp_and_pipes

    from stoicheia_spacy.heads import torch_module
    from stoicheia_spacy.morph.constrained import log_softmax

    out = cache_dir / f"{split}.pkl"
    if cached_already(out, split):
        return out
    torch.set_num_threads(1)
    _agdt, words = split_words(project, mirror, split)
    nlp, _morph, _lem, parser = nlp_and_pipes()
    encoder = nlp.get_pipe("stoicheia_encoder")
    module: Any = torch_module(parser._head_node())
    module.eval()
    arcs_out, labels_out = [], []
    t0 = time.process_time()
    for b in range(0, len(words), batch):
        docs = gold_docs(nlp.vocab, words[b:b + batch])
        encoder.set_annotations(docs, encoder.predict(docs))
        vectors = [parser.model.ops.to_numpy(v) for v in parser.model.get_ref("tok2vec").predict(docs)]
        for v in vectors:
            n = len(v)
            padded = torch.from_numpy(np.asarray(v, dtype=np.float32)[None])
            mask = torch.ones((1, n), dtype=torch.bool)
            with torch.no_grad():
                arcs, label_dep, label_head = module.arcs(padded, mask)
                ones = torch.ones_like(label_dep[..., :1])
                dep1, head1 = torch.cat([label_dep, ones], -1), torch.cat([label_head, ones], -1)
                lab = torch.einsum("bid,lde,bje->bijl", dep1, module.label_weight.to(dep1.dtype), head1)[0]
            arcs_out.append(log_softmax(arcs.numpy()[0].astype(np.float64)).astype(np.float32))
            labels_out.append(torch.log_softmax(lab[1:], -1).numpy().astype(np.float16))  # [dep-1, head, label]
        print(f"{split}: {min(b + batch, len(words))}/{len(words)} sentences, {time.process_time() - t0:.0f} CPU s",
              flush=True)
    record = {"split": split, "sentences": len(words), "words": sum(len(s) for s in words),
              "arcs": arcs_out, "labels": labels_out, "label_names": list(parser.labels),
              "cpu_seconds": round(time.process_time() - t0, 2)}
    cache_dir.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pickle.dumps(record))
    return out


# -------------------------------------------------------------------------------------------- decoding
def trees(record: dict[str, Any], tags: Sequence[Sequence[str]], lemmas: Sequence[Sequence[str]], pri: Any,
          alpha: float, beta: float) -> tuple[list[list[int]], list[list[str]]]:
    """Heads (1-based, 0 = root) and labels of every sentence with the prior at ``alpha``/``beta``."""
    from stoicheia_spacy.morph.mst import chu_liu_edmonds

    names = record["label_names"]
    if pri is not None:
        assert pri.labels == names, "the prior was counted over other labels"
    heads_out, labels_out = [], []
    for arcs, labs, tg, lm in zip(record["arcs"], record["labels"], tags, lemmas, strict=True):
        n = arcs.shape[0] - 1
        scores = arcs.astype(np.float64)
        if pri is not None and alpha:
            scores = scores + alpha * pri.arc_scores(tg, lm)
        heads = chu_liu_edmonds(scores.copy())
        lab = labs[np.arange(n), heads].astype(np.float64)  # (n, L)
        if pri is not None and beta:
            lab = lab + beta * pri.label_scores(tg, heads, lm)
        heads_out.append([int(h) for h in heads])
        labels_out.append([names[int(i)] for i in lab.argmax(-1)])
    return heads_out, labels_out


def las_hits(gold: Sequence[Sequence[dict[str, Any]]], heads: Sequence[Sequence[int]],
             labels: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-word head and head+label correctness (relation subtypes ignored, as CoNLL 2018)."""
    uas, las = [], []
    for gs, hs, ls in zip(gold, heads, labels, strict=True):
        for g, h, lab in zip(gs, hs, ls, strict=True):
            u = int(g["head"]) == h
            uas.append(u)
            las.append(u and str(g["deprel"]).split(":")[0] == lab.split(":")[0])
    return np.array(uas), np.array(las)


def tagged(tags_cache: Path, split: str, ctx: tuple[Any, Any, Any, Any], weights: dict[str, Any]) -> tuple[dict, Any]:
    """The parse_eval record of ``split`` and its tags decoded as the default pipeline does."""
    morph, lem, table, _train = ctx
    record = pickle.loads((tags_cache / f"{split}.pkl").read_bytes())
    domain = SPLITS[split].get("domain", "other")
    w = weights[domain]
    decoded, _ = decode(record, morph, lem, table, (w["tag_weight"], w["lemma_weight"], True))
    return record, decoded


def fit(cache_dir: Path, prior_path: Path, out: Path, tags_cache: Path, fit_json: Path, project: Path,
        mirror: Path) -> None:
    weights = json.loads(fit_json.read_text(encoding="utf-8"))["weights"]
    ctx = load_context(project, None)
    pri = TreePrior.from_disk(prior_path)
    result: dict[str, Any] = {"command": command_line(), "devs": DEVS, "alphas": ALPHAS, "betas": BETAS,
                              "tag_weights": weights, "dev": {}, "weights": {}}
    for domain, splits in DEVS.items():
        grid: dict[str, dict[str, float]] = {}
        for split in splits:
            rec = pickle.loads((cache_dir / f"{split}.pkl").read_bytes())
            pe, decoded = tagged(tags_cache, split, ctx, weights)
            gold = gold_words(pe, mirror)
            for a in ALPHAS:
                for b in BETAS:
                    h, lab = trees(rec, decoded[1], decoded[2], pri, a, b)
                    u, l_ = las_hits(gold, h, lab)
                    grid.setdefault(f"{a:g},{b:g}", {})[split] = round(100 * float(l_.mean()), 3)
                    print(domain, split, a, b, round(100 * float(u.mean()), 2), round(100 * float(l_.mean()), 2), flush=True)
        best = max(grid, key=lambda k: (min(grid[k].values()), -sum(map(float, k.split(",")))))
        a, b = map(float, best.split(","))
        result["weights"][domain] = {"alpha": a, "beta": b}
        result["dev"][domain] = {"grid": grid, "best": best, "without": grid["0,0"]}
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result["weights"]), {d: (result["dev"][d]["without"], result["dev"][d]["grid"][result["dev"][d]["best"]])
                                          for d in DEVS})


def score(cache_dir: Path, prior_path: Path, out: Path, tags_cache: Path, fit_json: Path, prior_fit: Path,
          project: Path, mirror: Path, splits: Sequence[str]) -> None:
    from stoicheia_lab.scoring.conll import read_conllu, score_conll
    from ud_eval import score_split

    from stoicheia_spacy.morph.agdt_ud_tree import convert_words

    weights = json.loads(fit_json.read_text(encoding="utf-8"))["weights"]
    chosen = json.loads(prior_fit.read_text(encoding="utf-8"))["weights"]
    ctx = load_context(project, None)
    pri = TreePrior.from_disk(prior_path)
    result: dict[str, Any] = {"command": command_line(), "weights": chosen, "splits": {}}
    for split in splits:
        if not (cache_dir / f"{split}.pkl").exists():
            print(f"{split}: no cache, skipped")
            continue
        rec = pickle.loads((cache_dir / f"{split}.pkl").read_bytes())
        pe, decoded = tagged(tags_cache, split, ctx, weights)
        spec = SPLITS[split]
        w = chosen[spec.get("domain", "other")]
        entry: dict[str, Any] = {"name": spec["name"], "words": rec["words"], "alpha": w["alpha"], "beta": w["beta"],
                                 "rows": {}}
        hits: dict[str, np.ndarray] = {}
        ud_hits: dict[str, np.ndarray] = {}
        for row, (a, b) in {"parser": (0.0, 0.0), "with_tree_prior": (w["alpha"], w["beta"])}.items():
            t0 = time.process_time()
            h, lab = trees(rec, decoded[1], decoded[2], pri, a, b)
            seconds = time.process_time() - t0
            pe_row = {**pe, "heads": h, "deprels": lab}
            pred = pred_words(pe_row, decoded)
            r: dict[str, Any] = {"decode_cpu_seconds": round(seconds, 2)}
            if pe["agdt_gold"] is not None:
                r["agdt"] = {k: round(100 * v.accuracy, 2) for k, v in score_conll(pe["agdt_gold"], pred).items()
                             if k in ("UAS", "LAS", "CLAS")}
                hits[row] = las_hits(pe["agdt_gold"], h, lab)[1]
            if "conllu" in spec:
                with tempfile.TemporaryDirectory() as tmp:
                    pred_file = Path(tmp) / f"{split}.conllu"
                    write_conllu(pred, pred_file)
                    r["ud"] = {k: v for k, v in score_split(pred_file, mirror / spec["conllu"])["ud"].items()
                               if k in ("UAS", "LAS", "CLAS")}
                    converted = [convert_words(x) for x in read_conllu(pred_file)]
                ud_hits[row] = las_hits(read_conllu(mirror / spec["conllu"]),
                                        [[int(w["head"]) for w in x] for x in converted],
                                        [[str(w["deprel"]) for w in x] for x in converted])[1]
            entry["rows"][row] = r
            print(split, row, json.dumps(r), flush=True)
        if hits:
            entry["mcnemar_las_words"] = mcnemar(hits["with_tree_prior"], hits["parser"])
        if ud_hits:
            entry["mcnemar_las_words_ud"] = mcnemar(ud_hits["with_tree_prior"], ud_hits["parser"])
        result["splits"][split] = entry
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def pipeline_check(out: Path, project: Path, mirror: Path, splits: Sequence[str]) -> None:
    """The installed default pipeline itself (``nlp.pipe`` on each split's gold words; a papyrus
    split's Docs with ``doc._.domain = "papyrus"``), with its tree prior and with the prior's
    weights set to 0: UAS / LAS on the AGDT gold, CPU seconds of the whole pipe."""
    import torch
    from parse_eval import nlp_and_pipes

    torch.set_num_threads(1)
    nlp, _m, _l, parser = nlp_and_pipes()
    result: dict[str, Any] = {"command": command_line(), "pipeline": "grc_stoicheia_doc_clean (installed)",
                              "settings": {k: v for k, v in parser.settings.to_dict().items() if "prior" in k},
                              "splits": {}}
    off = {k: 0.0 for k in ("tree_prior", "tree_prior_labels", "tree_prior_papyrus", "tree_prior_labels_papyrus")}
    for split in splits:
        agdt, _ud = gold_sentences(project, mirror, split)
        assert agdt is not None, f"{split}: no AGDT gold"
        domain = SPLITS[split].get("domain")
        entry: dict[str, Any] = {"name": SPLITS[split]["name"], "domain": domain, "words": sum(len(s) for s in agdt)}
        hits = {}
        for row, changes in (("with_tree_prior", {}), ("without", off)):
            saved = parser.settings
            parser.configure(**changes)
            docs = gold_docs(nlp.vocab, agdt, domain)
            t0 = time.process_time()
            docs = list(nlp.pipe(docs, batch_size=16))
            cpu = time.process_time() - t0
            parser.settings = saved
            heads = [[0 if t.head.i == t.i else t.head.i + 1 for t in d] for d in docs]
            uas, las = las_hits(agdt, heads, [[t.dep_ for t in d] for d in docs])
            hits[row] = las
            entry[row] = {"UAS": round(100 * float(uas.mean()), 2), "LAS": round(100 * float(las.mean()), 2),
                          "cpu_seconds": round(cpu, 1)}
            print(split, row, json.dumps(entry[row]), flush=True)
        entry["mcnemar_las_words"] = mcnemar(hits["with_tree_prior"], hits["without"])
        result["splits"][split] = entry
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tree_prior_eval.py")
    sub = ap.add_subparsers(dest="step", required=True)
    c = sub.add_parser("cache")
    c.add_argument("split", choices=tuple(SPLITS))
    c.add_argument("cache_dir", type=Path)
    p = sub.add_parser("prior")
    p.add_argument("out", type=Path)
    p.add_argument("--labels-from", type=Path, default=None,
                   help="a parser folder's data.json (default: the default pipeline's parser in assets/models)")
    f = sub.add_parser("fit")
    s = sub.add_parser("score")
    for x in (f, s):
        x.add_argument("cache_dir", type=Path)
        x.add_argument("prior", type=Path)
        x.add_argument("out", type=Path)
        x.add_argument("--tags-cache", type=Path, default=Path("training/parse_eval_cache"))
        x.add_argument("--fit", type=Path, default=Path("metrics/lookup_weight_fit.json"),
                       help="parse_eval.py's fitted tag/lemma weights (how the default pipeline decodes tags)")
    s.add_argument("--prior-fit", type=Path, required=True)
    s.add_argument("--splits", default="agdt_test,ud_perseus_test,ud_proiel_test,papygreek_test")
    k = sub.add_parser("pipeline")
    k.add_argument("out", type=Path)
    k.add_argument("--splits", default="fold0_dev,papygreek_dev,papygreek_test")
    for x in (c, f, s, k):
        x.add_argument("--mirror", type=Path, default=None)
    a = ap.parse_args(argv)
    project = Path(__file__).resolve().parent.parent
    import os

    mirror = getattr(a, "mirror", None) or Path(os.environ.get("STOICHEIA_ASSET_MIRROR", "."))
    if a.step == "cache":
        cache(a.split, a.cache_dir, project, mirror)
    elif a.step == "prior":
        data = a.labels_from or project.parent.parent / PARSER_DATA
        prior(project, a.out, json.loads(Path(data).read_text(encoding="utf-8"))["labels"])
    elif a.step == "pipeline":
        pipeline_check(a.out, project, mirror, a.splits.split(","))
    elif a.step == "fit":
        fit(a.cache_dir, a.prior, a.out, a.tags_cache, a.fit, project, mirror)
    else:
        score(a.cache_dir, a.prior, a.out, a.tags_cache, a.fit, a.prior_fit, project, mirror, a.splits.split(","))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
