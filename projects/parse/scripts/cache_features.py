"""Cache the pooled word features the morphosyntax heads read, once per treebank sentence.

The backbone is frozen for the heads recipe, so its output never changes: each sentence of
a DocBin is encoded once and, for every head component, the word pooler's output (scalar
mix over the layers with that component's mix weights, then the mean over each word's
letters; words without a Greek letter get zeros here, the pooler's learned ``empty``
vector is added at training time) is written in fp16 to numbered ``.npz`` chunks:

    OUT/<key>/<split>/chunk_00000.npz  (feats_<component> (words, d) fp16, sent_lengths,
                                       token_lengths = letters per word, sent_index)
    OUT/<key>/meta.json                (backbone sha256, mixes, pooler, encoder settings)

``<key>`` hashes the backbone weights' sha256, the pooler name and the mix weights, so a
different backbone or head set never reads a stale cache. Sentences are taken in a seeded
shuffle of the file's order (``--shuffle``; ``sent_index`` is the position in the file's
sentence list), so any prefix of the chunks is a random sample and a run can stop and
``--limit`` can grow: finished chunks are skipped (resumable; each chunk is written to a
temporary name and renamed).

    python scripts/cache_features.py BACKBONE DATA.spacy OUT --split fold0_train
        [--heads embedded:grc_stoicheia_doc_clean] [--limit N] [--chunk 256] [--batch 16]
        [--shuffle 0] [--skip N] [--random-init]

``--heads`` names a pipeline whose head components give the mix weights (default: the
same source as BACKBONE when it has heads, else uniform weights). ``--random-init`` caches
a seeded random backbone of the same shape (the random-init control arm).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HEADS = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def backbone_sha256(nlp: Any) -> str:
    """sha256 of the encoder's weights (its serialized bytes: any backbone source works)."""
    from stoicheia_spacy.encoder.model import torch_backbone

    module = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().float().contiguous().numpy().tobytes())
    return digest.hexdigest()


def randomize_backbone(nlp: Any, seed: int = 0) -> None:
    """Re-initialise the encoder's backbone in place: the seeded random backbone of the same
    shape that the random-init control arm is cached from (and scored on)."""
    import torch

    from stoicheia_spacy.encoder.model import torch_backbone

    torch.manual_seed(seed)
    for p in torch_backbone(nlp.get_pipe("stoicheia_encoder").model).parameters():
        torch.nn.init.normal_(p, std=0.02)


def hidden_shape(nlp: Any) -> tuple[int, int]:
    """(layers, width) of the hidden states the encoder of ``nlp`` stores for each letter."""
    from spacy.tokens import Doc

    data = nlp.get_pipe("stoicheia_encoder").predict([Doc(nlp.vocab, words=["λόγος"])])[0]
    layers, _letters, width = np.asarray(data.hidden).shape
    return int(layers), int(width)


def head_mixes(heads: Any, n_layers: int) -> dict[str, list[float]]:
    """Each head component's scalar-mix logits (zeros, i.e. uniform, without a head pipeline)."""
    out = {name: [0.0] * n_layers for name in HEADS}
    if heads is None:
        return out
    for name in HEADS:
        if name not in heads.pipe_names:
            continue
        for node in heads.get_pipe(name).model.walk():
            if node.name == "stoicheia_word_pooler" and node.has_param("mix"):
                out[name] = [float(x) for x in np.asarray(node.get_param("mix"))]
    return out


def cache_key(sha: str, mixes: dict[str, list[float]], random_init: bool) -> str:
    spec = {"backbone_sha256": sha, "pooler": "stoicheia.WordPooler.v1", "random_init": random_init,
            "mixes": {k: np.asarray(v, dtype=np.float32).tobytes().hex() for k, v in mixes.items()}}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def pool(hidden: np.ndarray, token_lengths: np.ndarray, logits: list[float]) -> np.ndarray:
    """The WordPooler's forward without the ``empty`` vector: softmax mix, mean per word."""
    w = np.exp(np.asarray(logits, dtype=np.float64))
    w = (w / w.sum()).astype(np.float32)
    mixed = np.tensordot(w, np.asarray(hidden, dtype=np.float32), axes=(0, 0))
    out = np.zeros((len(token_lengths), mixed.shape[1]), dtype=np.float32)
    ends = np.cumsum(token_lengths)
    starts = ends - token_lengths
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        if b > a:
            out[i] = mixed[a:b].mean(axis=0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("backbone")
    ap.add_argument("data", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--split", required=True, help="folder name of this DocBin's cache")
    ap.add_argument("--heads", default=None, help="pipeline whose heads give the mix weights")
    ap.add_argument("--limit", type=int, default=0, help="first N sentences of the shuffled order (0: all)")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the chunks that hold the first N sentences of the order (e.g. a set the "
                         "heads being continued were already trained on)")
    ap.add_argument("--part", default="0/1", help="I/N: only chunks k with k %% N == I (N processes share a split)")
    ap.add_argument("--chunk", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--shuffle", type=int, default=0, help="seed of the sentence order (-1: file order)")
    ap.add_argument("--random-init", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)

    import torch
    from spacy.tokens import Doc, DocBin
    from tqdm import tqdm

    from stoicheia_spacy.assembly import build_pipeline

    torch.set_num_threads(args.threads)
    heads_src = args.heads or (None if args.random_init else args.backbone)
    heads: Any = None
    if heads_src == args.backbone:  # one pipeline: its encoder encodes, its heads give the mixes
        nlp = heads = build_pipeline(args.backbone)
    else:
        nlp = build_pipeline(args.backbone, components=False)
        if heads_src:
            try:
                heads = build_pipeline(heads_src)
            except Exception as exc:  # a bare checkpoint has no heads: uniform mixes
                print(f"no head pipeline from {heads_src} ({exc.__class__.__name__}): uniform mixes",
                      file=sys.stderr)
    if args.random_init:
        randomize_backbone(nlp)
    encoder = nlp.get_pipe("stoicheia_encoder")
    encoder.configure(store_logits=False, store_hidden=True, states="all")  # it pools the whole stack itself
    n_layers, _width = hidden_shape(nlp)
    mixes = head_mixes(heads, n_layers)
    del heads
    sha = backbone_sha256(nlp)
    key = cache_key(sha, mixes, args.random_init)
    root = args.out / key
    split_dir = root / args.split
    split_dir.mkdir(parents=True, exist_ok=True)
    meta = {"backbone": args.backbone, "backbone_sha256": sha, "random_init": args.random_init,
            "pooler": "stoicheia.WordPooler.v1", "n_layers": n_layers, "mixes": mixes, "dtype": "float16"}
    (root / "meta.json").write_text(json.dumps(meta, indent=1))

    sents = [s.as_doc() for d in DocBin().from_disk(args.data).get_docs(nlp.vocab) for s in d.sents]
    order = list(range(len(sents)))
    if args.shuffle >= 0:
        random.Random(args.shuffle).shuffle(order)
    if args.limit:
        order = order[: args.limit]
    (split_dir / "split.json").write_text(json.dumps(
        {"data": str(args.data), "n_sentences_file": len(sents), "shuffle": args.shuffle,
         "chunk": args.chunk, "limit": args.limit, "skip": args.skip}, indent=1))
    chunks = [order[i : i + args.chunk] for i in range(0, len(order), args.chunk)]
    part, n_parts = (int(x) for x in args.part.split("/"))
    todo = [(k, c) for k, c in enumerate(chunks)
            if k % n_parts == part and (k + 1) * args.chunk > args.skip
            and not (split_dir / f"chunk_{k:05d}.npz").exists()]
    n_words = sum(len(sents[i]) for _, c in todo for i in c)
    print(f"cache {root.name}/{args.split}: {len(chunks)} chunks, {len(todo)} to do ({n_words} words)", flush=True)
    bar = tqdm(total=n_words, unit="w", disable=args.quiet, mininterval=10, file=sys.stdout)
    t0 = time.perf_counter()
    for k, chunk in todo:
        feats: dict[str, list[np.ndarray]] = {name: [] for name in HEADS}
        tok_lengths: list[np.ndarray] = []
        by_len = sorted(range(len(chunk)), key=lambda j: len(sents[chunk[j]]))
        outputs: dict[int, Any] = {}
        for b in range(0, len(by_len), args.batch):
            idx = by_len[b : b + args.batch]
            docs = [Doc(nlp.vocab, words=[t.text for t in sents[chunk[j]]],
                        spaces=[bool(t.whitespace_) for t in sents[chunk[j]]]) for j in idx]
            for j, data in zip(idx, encoder.predict(docs), strict=True):
                outputs[j] = data
            bar.update(sum(len(d) for d in docs))
        for j in range(len(chunk)):
            data = outputs[j]
            lengths = np.asarray(data.token_lengths, dtype=np.int64)
            tok_lengths.append(lengths)
            hidden = np.asarray(data.hidden, dtype=np.float32)
            for name in HEADS:
                feats[name].append(pool(hidden, lengths, mixes[name]))
        arrays = {f"feats_{name}": np.concatenate(v).astype(np.float16) for name, v in feats.items()}
        arrays["token_lengths"] = np.concatenate(tok_lengths).astype(np.int32)
        arrays["sent_lengths"] = np.asarray([len(sents[i]) for i in chunk], dtype=np.int32)
        arrays["sent_index"] = np.asarray(chunk, dtype=np.int64)
        tmp = split_dir / f".chunk_{k:05d}.tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, split_dir / f"chunk_{k:05d}.npz")
        with (split_dir / "cpu_seconds.log").open("a") as log:  # process CPU time spent, one line a chunk
            log.write(f"{k}\t{args.part}\t{time.process_time():.1f}\t{time.perf_counter() - t0:.1f}\n")
    bar.close()
    print(f"done in {time.perf_counter() - t0:.0f}s -> {split_dir}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
