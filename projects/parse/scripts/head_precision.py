"""Issue 38, item 2: the morphosyntax heads with their matrices kept in bfloat16 against float32.

    python scripts/head_precision.py OUT.json [--splits agdt_test,...] [--mirror M]

Each split's gold words (``parse_eval.gold_sentences``, the same sentences and strides as
``parse_eval``) go through the default pipeline's encoder once per batch; the morphologizer,
lemmatizer and parser then annotate the same Docs twice: with the heads' weights as saved
(float32) and kept as bfloat16 (``stoicheia_spacy.heads.keep_weights``, the ``weight_dtype``
setting of the heads' architectures). Writes, per split and dtype, UPOS / XPOS / lemma accuracy
and (AGDT gold only) UAS / LAS, how many words' UPOS, XPOS, lemma, head and relation differ
between the two, the exact McNemar p on the discordant words, and the heads' CPU seconds
(one torch thread).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).parent))
from parse_eval import PIPES, SPLITS, gold_sentences, no_space_after

FIELDS = ("upos", "xpos", "lemma", "head", "deprel")
DTYPES = ("float32", "bfloat16")


def annotations(docs: list[Any]) -> dict[str, list[Any]]:
    """Every word's predicted UPOS, XPOS, lemma, head (1-based in its sentence, 0 root) and relation."""
    out: dict[str, list[Any]] = {f: [] for f in FIELDS}
    for doc in docs:
        for t in doc:
            out["upos"].append(t.pos_)
            out["xpos"].append(t.tag_)
            out["lemma"].append(t.lemma_)
            out["head"].append(0 if t.head.i == t.i else t.head.i + 1)
            out["deprel"].append(t.dep_)
    return out


def mcnemar(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Exact McNemar test of two rows' per-word hits."""
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    p = binomtest(only_a, only_a + only_b).pvalue if only_a + only_b else 1.0
    return {"float32_only": only_a, "bfloat16_only": only_b, "p": float(p)}


def run_split(split: str, nlp: Any, modules: list[Any], originals: list[dict[str, Any]], project: Path,
              mirror: Path, batch: int) -> dict[str, Any]:
    import torch
    from spacy.tokens import Doc

    from stoicheia_spacy.heads import keep_weights

    agdt, ud = gold_sentences(project, mirror, split)
    words = agdt if agdt is not None else ud
    assert words is not None
    pipes = [nlp.get_pipe(name) for name in PIPES[1:]]
    encoder = nlp.get_pipe(PIPES[0])
    pred: dict[str, dict[str, list[Any]]] = {d: {f: [] for f in FIELDS} for d in DTYPES}
    cpu = dict.fromkeys(DTYPES, 0.0)
    for b in range(0, len(words), batch):
        docs = [Doc(nlp.vocab, words=[w["form"] for w in s], spaces=[not no_space_after(w) for w in s],
                    sent_starts=[True, *[False] * (len(s) - 1)]) for s in words[b:b + batch]]
        for doc in docs:
            if doc.has_extension("domain"):
                doc._.domain = SPLITS[split].get("domain")
        encoder.set_annotations(docs, encoder.predict(docs))
        for dtype in DTYPES:
            for module, original in zip(modules, originals, strict=True):
                keep_weights(module, getattr(torch, dtype))
                if dtype == "float32":
                    module.load_state_dict(original)
            t0 = time.process_time()
            for pipe in pipes:
                pipe.set_annotations(docs, pipe.predict(docs))
            cpu[dtype] += time.process_time() - t0
            for f, values in annotations(docs).items():
                pred[dtype][f] += values
        print(f"{split}: {min(b + batch, len(words))}/{len(words)} sentences", flush=True)
    gold = {f: [w[f] for s in words for w in s] for f in FIELDS}
    gold["head"] = [int(h) for h in gold["head"]]
    scored = ["upos", "lemma"] + (["xpos", "uas", "las"] if agdt is not None else [])
    if SPLITS[split].get("xpos", True) is False and "xpos" in scored:
        scored.remove("xpos")
    hits: dict[str, dict[str, np.ndarray]] = {}
    for dtype in DTYPES:
        p = pred[dtype]
        h = {f: np.array(p[f]) == np.array(gold[f]) for f in ("upos", "xpos", "lemma", "head")}
        hits[dtype] = {"upos": h["upos"], "xpos": h["xpos"], "lemma": h["lemma"], "uas": h["head"],
                       "las": h["head"] & (np.array(p["deprel"]) == np.array(gold["deprel"]))}
    n = len(gold["upos"])
    differ = {f: int(sum(x != y for x, y in zip(pred["float32"][f], pred["bfloat16"][f], strict=True)))
              for f in FIELDS}
    return {"name": SPLITS[split]["name"], "sentences": len(words), "words": n,
            "gold": "AGDT" if agdt is not None else "UD (UPOS and lemma only)",
            "accuracy": {d: {m: round(100 * float(hits[d][m].mean()), 2) for m in scored} for d in DTYPES},
            "words_differing": differ,
            "mcnemar": {m: mcnemar(hits["float32"][m], hits["bfloat16"][m]) for m in scored},
            "heads_cpu_seconds": {d: round(v, 2) for d, v in cpu.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--splits", default="agdt_test,ud_perseus_test,ud_proiel_test,papygreek_test")
    parser.add_argument("--mirror", type=Path, default=None)
    parser.add_argument("--batch", type=int, default=16)
    a = parser.parse_args(argv)
    import os

    import spacy
    import torch

    from stoicheia_spacy.heads import keep_weights, kept_parameters, torch_module

    torch.set_num_threads(1)
    mirror = a.mirror or Path(os.environ["STOICHEIA_ASSET_MIRROR"])
    project = Path(__file__).resolve().parent.parent
    nlp = spacy.load("grc_stoicheia_doc_clean")
    nlp.select_pipes(enable=list(PIPES))
    modules = [torch_module(nlp.get_pipe(name).model.get_ref("head")) for name in PIPES[1:]]
    for module in modules:  # the weights as saved (float32 in the embedded default's files)
        keep_weights(module, torch.float32)
    originals = [{k: v.clone() for k, v in m.state_dict().items()} for m in modules]
    result = {"command": "python scripts/head_precision.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "torch_threads": torch.get_num_threads(),
              "kept_bfloat16_values": {name: sum(p.numel() for p in kept_parameters(m)) for name, m in zip(PIPES[1:], modules, strict=True)},
              "splits": {}}
    for split in a.splits.split(","):
        result["splits"][split] = run_split(split, nlp, modules, originals, project, mirror, a.batch)
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(json.dumps(result["splits"][split], ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
