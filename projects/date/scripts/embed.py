"""Cache per-layer mean-pooled backbone states of every PaDoC / in-the-wild papyrus.

One forward per document through the ``stoicheia_encoder`` pipe (the shared forward a pooled-state
``stoicheia_dater`` would read; the pretrained, random-init and stacked arms); writes ``ids`` (TM numbers) and ``layers`` (n_docs, depth + 1,
d_model) = mean over letters of each hidden state (of the first ``--max-chars`` characters: the cost of
the forward is what limits a shared CPU). ``--random-init`` loads a backbone of
the same shape with random weights (``stoicheia.BackboneLoader.v1`` random_init).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import spacy
import torch

import stoicheia_spacy.encoder.pipe  # noqa: F401  (registers the encoder factory)

SOURCE = "embedded:grc_stoicheia_doc_clean"


def build(random_init: bool) -> spacy.language.Language:
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"settings": {"store_logits": False}})
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {"loader": {
        "@misc": "stoicheia.BackboneLoader.v1", "source": SOURCE, "random_init": random_init, "seed": 0}}
    nlp.initialize()
    return nlp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--id-column", default="tm")
    parser.add_argument("--text-column", default="text_raw")
    parser.add_argument("--random-init", action="store_true")
    parser.add_argument("--max-chars", type=int, default=800, help="Read the first N characters of each text")
    parser.add_argument("--shard", default="0/1", help="K/N: embed rows K, K+N, ... (merge with --merge)")
    parser.add_argument("--merge", type=Path, nargs="*", help="Merge these shard files into OUT and exit")
    args = parser.parse_args()
    if args.merge:
        parts = [np.load(part) for part in args.merge]
        np.savez_compressed(args.out, ids=np.concatenate([p["ids"] for p in parts]),
                            layers=np.concatenate([p["layers"] for p in parts]))
        return
    torch.set_num_threads(1)
    shard, n_shards = (int(v) for v in args.shard.split("/"))
    frame = pd.read_csv(args.csv).iloc[shard::n_shards].reset_index(drop=True)
    nlp = build(args.random_init)
    pooled, ids, start = [], [], time.time()
    texts = frame[args.text_column].fillna("").astype(str).str.strip().str.slice(0, args.max_chars)
    for i, doc in enumerate(nlp.pipe(texts, batch_size=1)):  # one Doc per row: packing several makes attention quadratic in the row
        data = doc._.stoicheia
        hidden = np.asarray(data.hidden, dtype=np.float32) if data is not None and data.hidden is not None else None
        if hidden is None or hidden.shape[1] == 0:
            pooled.append(np.full((len(pooled[0]) if pooled else 7, 384), np.nan, dtype=np.float32))
        else:
            pooled.append(hidden.mean(axis=1))
        ids.append(int(frame[args.id_column].iloc[i]))
        if i % 50 == 0:
            print(f"{i}/{len(frame)} {time.time() - start:.0f}s", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, ids=np.array(ids), layers=np.stack(pooled))
    print(f"wrote {args.out} ({len(ids)} documents, {time.time() - start:.0f}s)")


if __name__ == "__main__":
    main()
