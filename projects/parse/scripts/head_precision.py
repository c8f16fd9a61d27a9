"""Issue 38, item 2: the morphosyntax heads with their matrices kept in bfloat16 against float32.

    python scripts/head_precision.py OUT.json [--splits agdt_test,...] [--mirror M]

Each split's gold words (``parse_eval.gold_sentences``, the same sentences and strides as
``parse_eval``) go through the default pipeline's encoder once per batch; the morphologizer,
lemmatizer and parser then annotate the same Docs twice: with the heads' weights as saved
(float32) and kept as bfloat16 (``stoicheia_spacy.heads.keep_weights``, the ``weight_dtype``
setting of the heads' architectures). Writes, per split and dtype, UPOS / XPOS / lemma accuracy
and (AGDT gold only) UAS / LAS, how many words' UPOS, XPOS, lemma, head and relation differ
between the two, the exact McNemar p on the discordant words (``parse_eval.mcnemar``), and the heads' CPU seconds
(one torch thread; the two dtypes go first on alternate batches).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from spacy.tokens import Doc

sys.path.insert(0, str(Path(__file__).parent))
from parse_eval import PIPES, SPLITS, gold_sentences, hits, mcnemar, nlp_and_pipes, no_space_after

from stoicheia_spacy.heads import keep_weights, kept_parameters, torch_module

FIELDS = ("upos", "xpos", "lemma", "head", "deprel")
DTYPES = ("float32", "bfloat16")


def annotations(docs: list[Any]) -> list[list[dict[str, Any]]]:
    """Every sentence's words with their predicted UPOS, XPOS, lemma, head (1-based, 0 root) and relation."""
    return [[{"upos": t.pos_, "xpos": t.tag_, "lemma": t.lemma_, "head": 0 if t.head.i == t.i else t.head.i + 1,
              "deprel": t.dep_} for t in doc] for doc in docs]


def run_split(split: str, nlp: Any, modules: list[Any], originals: list[dict[str, Any]], project: Path,
              mirror: Path, batch: int) -> dict[str, Any]:
    """One split annotated in float32 and in bfloat16 on the same encoder forward; the dtypes take
    turns at going first, batch by batch, so neither has the warm caches."""
    agdt, ud = gold_sentences(project, mirror, split)
    words = agdt if agdt is not None else ud
    assert words is not None
    pipes = [nlp.get_pipe(name) for name in PIPES[1:]]
    encoder = nlp.get_pipe(PIPES[0])
    pred: dict[str, list[list[dict[str, Any]]]] = {d: [] for d in DTYPES}
    cpu = dict.fromkeys(DTYPES, 0.0)
    for k, b in enumerate(range(0, len(words), batch)):
        docs = [Doc(nlp.vocab, words=[w["form"] for w in s], spaces=[not no_space_after(w) for w in s],
                    sent_starts=[True, *[False] * (len(s) - 1)]) for s in words[b:b + batch]]
        for doc in docs:
            if doc.has_extension("domain"):
                doc._.domain = SPLITS[split].get("domain")
        encoder.set_annotations(docs, encoder.predict(docs))
        for dtype in DTYPES if k % 2 == 0 else DTYPES[::-1]:
            for module, original in zip(modules, originals, strict=True):
                keep_weights(module, getattr(torch, dtype))
                if dtype == "float32":
                    module.load_state_dict(original)
            t0 = time.process_time()
            for pipe in pipes:
                pipe.set_annotations(docs, pipe.predict(docs))
            cpu[dtype] += time.process_time() - t0
            pred[dtype] += annotations(docs)
        print(f"{split}: {min(b + batch, len(words))}/{len(words)} sentences", flush=True)
    scored = ["upos", "lemma"] + (["xpos", "uas", "las"] if agdt is not None else [])
    if SPLITS[split].get("xpos", True) is False and "xpos" in scored:
        scored.remove("xpos")
    gold = [w for s in words for w in s]
    right: dict[str, dict[str, np.ndarray]] = {}
    for dtype in DTYPES:
        flat = [w for s in pred[dtype] for w in s]
        head = np.array([int(g["head"]) == p["head"] for g, p in zip(gold, flat, strict=True)])
        label = np.array([g["deprel"] == p["deprel"] for g, p in zip(gold, flat, strict=True)])
        right[dtype] = {**hits(words, pred[dtype]), "uas": head, "las": head & label}
    differ = {f: sum(p[f] != q[f] for a, b in zip(pred["float32"], pred["bfloat16"], strict=True)
                     for p, q in zip(a, b, strict=True)) for f in FIELDS}
    return {"name": SPLITS[split]["name"], "sentences": len(words), "words": len(gold),
            "gold": "AGDT" if agdt is not None else "UD (UPOS and lemma only)",
            "accuracy": {d: {m: round(100 * float(right[d][m].mean()), 2) for m in scored} for d in DTYPES},
            "words_differing": differ,
            "mcnemar": {m: mcnemar(right["float32"][m], right["bfloat16"][m]) for m in scored},
            "heads_cpu_seconds": {d: round(v, 2) for d, v in cpu.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--splits", default="agdt_test,ud_perseus_test,ud_proiel_test,papygreek_test")
    parser.add_argument("--mirror", type=Path, default=None)
    parser.add_argument("--batch", type=int, default=16)
    a = parser.parse_args(argv)
    torch.set_num_threads(1)
    mirror = a.mirror or Path(os.environ["STOICHEIA_ASSET_MIRROR"])
    project = Path(__file__).resolve().parent.parent
    # the weights as saved (float32 in the default's files), whatever weight_dtype its config sets
    nlp = nlp_and_pipes({f"components.{name}.model.weight_dtype": "float32" for name in PIPES[1:]})[0]
    modules = [torch_module(nlp.get_pipe(name).model.get_ref("head")) for name in PIPES[1:]]
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
