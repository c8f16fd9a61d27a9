"""GLAUx passages for literary attribution and dating, with their pooled backbone states.

Reads the GLAUx texts of the mirror (``text/glaux_text_with_metadata.jsonl.xz``, per-text
date range, genre, dialect and author), keeps texts with a dialect, a genre and at least
``--chars`` characters, at most ``--per-author`` texts per author and ``--max-texts`` texts in
all (seeded sample), and cuts up to ``--per-text`` passages of ``--chars`` characters (evenly
spaced, starting and ending on a word boundary) from each. One forward per passage through the
``stoicheia_encoder`` pipe (the shared forward the ``stoicheia_dater`` / ``stoicheia_attributor``
read); writes ``OUT.jsonl`` (one passage per line: ``text_id``, ``tlg``, ``author``, ``genre``,
``dialect``, ``year`` = mid-point of the date range, ``in_pretraining`` and ``text``) and ``OUT.npz``
(``layers``: (n_passages, depth + 1, d_model), mean over letters of each hidden state).

``in_pretraining``: the shipped backbone's corpus (``projects/pretrain/scripts/build_corpus.py``)
holds every GLAUx record except its dev slice (``pretrain.data.is_dev`` on ``glaux:<tlg>``, 0.5 %).
"""

from __future__ import annotations

import argparse
import json
import lzma
import time
from pathlib import Path

import numpy as np
import torch
from embed import build

from pretrain.data import is_dev

DEV_FRACTION = 0.005  # pretrain.config DataConfig.dev_fraction of the shipped run


def passages(text: str, chars: int, count: int) -> list[str]:
    """Up to ``count`` evenly spaced passages of about ``chars`` characters on word boundaries."""
    text = " ".join(text.split())
    if len(text) < chars:
        return []
    n = min(count, len(text) // chars)
    starts = np.linspace(0, len(text) - chars, n).astype(int) if n > 1 else [0]
    out = []
    for start in starts:
        begin = text.rfind(" ", 0, int(start) + 1) + 1 if start else 0
        piece = text[begin:begin + chars]
        cut = piece.rfind(" ")
        out.append(piece[:cut] if cut > chars // 2 else piece)
    return out


def select(path: Path, chars: int, per_text: int, per_author: int, max_texts: int, seed: int) -> list[dict]:
    """The passage records (without states) of the sampled texts."""
    texts = []
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            meta = record["metadata"]
            if not meta.get("DIALECT") or not meta.get("GENRE_STANDARD"):
                continue
            body = " ".join(record["sentences"])
            if len(body) < chars:
                continue
            texts.append((meta, record["tlg"], body))
    order = np.random.default_rng(seed).permutation(len(texts))
    by_author: dict[str, int] = {}
    rows: list[dict] = []
    kept = 0
    for index in order:
        meta, tlg, body = texts[index]
        author = meta["AUTHOR_STANDARD"]
        if by_author.get(author, 0) >= per_author:
            continue
        by_author[author] = by_author.get(author, 0) + 1
        year = (float(meta["STARTDATE"]) + float(meta["ENDDATE"])) / 2
        for piece in passages(body, chars, per_text):
            rows.append({"text_id": meta["GLAUX_TEXT_ID"], "tlg": tlg, "author": author,
                         "genre": meta["GENRE_STANDARD"], "dialect": meta["DIALECT"], "year": year,
                         "in_pretraining": not is_dev(f"glaux:{tlg}", DEV_FRACTION), "text": piece})
        kept += 1
        if kept >= max_texts:
            break
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("glaux", type=Path, help="text/glaux_text_with_metadata.jsonl.xz of the mirror")
    parser.add_argument("out", type=Path, help="Output stem: OUT.jsonl and OUT.npz")
    parser.add_argument("--chars", type=int, default=400)
    parser.add_argument("--per-text", type=int, default=2)
    parser.add_argument("--per-author", type=int, default=6)
    parser.add_argument("--max-texts", type=int, default=450)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = select(args.glaux, args.chars, args.per_text, args.per_author, args.max_texts, args.seed)
    print(f"{len(rows)} passages of {len({r['text_id'] for r in rows})} texts, "
          f"{len({r['author'] for r in rows})} authors", flush=True)
    nlp = build(random_init=False)
    pooled, start = [], time.time()
    for i, doc in enumerate(nlp.pipe([r["text"] for r in rows], batch_size=1)):
        pooled.append(np.asarray(doc._.stoicheia.hidden, dtype=np.float32).mean(axis=1))
        if i % 50 == 0:
            print(f"{i}/{len(rows)} {time.time() - start:.0f}s", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.with_suffix(".jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    np.savez_compressed(args.out.with_suffix(".npz"), layers=np.stack(pooled))
    print(f"wrote {args.out}.jsonl/.npz ({len(rows)} passages, {time.time() - start:.0f}s)")


if __name__ == "__main__":
    main()
