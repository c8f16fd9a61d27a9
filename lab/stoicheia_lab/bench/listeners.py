"""``python -m stoicheia_lab.bench.listeners [--n 200] [--threads 1] [--out JSON]``: where the
time of the components that read the encoder through a listener goes.

After one encoder pass over the first ``--n`` UD Perseus test sentences (batches of 32, as
:mod:`.pipeline` times them), times per component, in CPU seconds: its listener with the word
pooler alone (``stoicheia_listener>>stoicheia_word_pooler``: the scalar mix over the encoder's
layers and the mean over each word's letters), its model's whole forward (``predict``; the
parser's token vectors, its biaffine scorer being part of its decoding), and its whole ``pipe``
(forward, decoding and annotations). What is left after the forward is the component's own
Python. ``--threads`` holds for torch and for numpy's BLAS/OpenMP (as in :mod:`.pipeline`).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import torch
from threadpoolctl import threadpool_limits

from .pipeline import DEFAULT_SOURCE, sentences

LISTENING = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
POOLER = "stoicheia_listener>>stoicheia_word_pooler"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench.listeners")
    parser.add_argument("--source", default=DEFAULT_SOURCE)
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    parser.add_argument("--data", type=Path, default=Path(mirror) if mirror else None)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    with threadpool_limits(limits=args.threads):  # numpy's BLAS / OpenMP too, as in .pipeline
        return run(args, argv or [])


def run(args: argparse.Namespace, argv: list[str]) -> int:
    """The measurement of :func:`main`'s parsed ``args``."""
    torch.set_num_threads(args.threads)
    from stoicheia_spacy.assembly import build_pipeline

    texts, origin = sentences(args.data, args.n)
    nlp = build_pipeline(args.source)
    encoder: Any = nlp.get_pipe("stoicheia_encoder")
    docs = list(encoder.pipe([nlp.make_doc(t) for t in texts], batch_size=args.batch_size))
    batches = [docs[i:i + args.batch_size] for i in range(0, len(docs), args.batch_size)]
    result: dict[str, Any] = {"command": "python -m stoicheia_lab.bench.listeners " + " ".join(argv),
                              "sentences": len(texts), "sentences_from": origin, "threads": torch.get_num_threads(),
                              "timing": "CPU seconds (time.process_time)", "components": {}}
    for name in LISTENING:
        pipe: Any = nlp.get_pipe(name)
        model = pipe.model
        pooler = next(node for node in model.walk() if node.name == POOLER)
        forward = model.get_ref("tok2vec") if name == "stoicheia_parser" else model
        seconds = {}
        for part, run in (("listener_pooler", pooler.predict), ("forward", forward.predict)):
            start = time.process_time()
            for batch in batches:
                run(batch)
            seconds[part] = time.process_time() - start
        start = time.process_time()
        for batch in batches:
            list(pipe.pipe(batch, batch_size=args.batch_size))
        seconds["pipe"] = time.process_time() - start
        seconds["after_forward"] = seconds["pipe"] - seconds["forward"]
        result["components"][name] = seconds
        print(f"{name:26} " + "  ".join(f"{k} {v:6.3f}" for k, v in seconds.items()))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
