"""Cache the backbone's per-letter log-probabilities of stripped gold text (one forward).

usage: cache_logp.py MIRROR OUT_DIR [--n N] [--model DIR] [--sets perseus-test,...]

For every evaluation set, each gold sentence is stripped to lower-case scriptio continua
(:func:`stoicheia_spacy.accent.predict.strip_planes`), every plane is hidden, and the
boundary / dia / punct / cap head log-probabilities are stored in ``OUT_DIR/SET.npz``
(concatenated over sentences, with ``starts``) beside the gold planes, so that decoders are
tuned and scored against the cache without re-running the backbone.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from stoicheia_lab.accent.evaluate import gold_planes, read_ud_texts

from stoicheia_spacy.accent.predict import PlaneControl, model_inputs, run_heads, strip_planes
from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.backbone import load_backbone

UD = {
    "perseus-test": "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz",
    "proiel-test": "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz",
    "perseus-dev": "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-dev.conllu.xz",
    "proiel-dev": "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-dev.conllu.xz",
}
HEADS = ("boundary", "dia", "punct", "cap")
GOLD = ("letters", "boundary", "diacritics", "capitals", "punctuation")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror")
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=None, help="sentences per set")
    ap.add_argument("--model", default=None)
    ap.add_argument("--sets", default=",".join(UD))
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    model = load_backbone(a.model or str(default_model_dir()))
    control = PlaneControl(boundary="predict", diacritics="predict", punctuation="predict", capitals="predict")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in a.sets.split(","):
        t0 = time.time()
        gold = gold_planes(read_ud_texts(Path(a.mirror) / UD[name], a.n))
        inputs = [model_inputs(strip_planes(g), control)[0] for g in gold]
        logp: list[dict[str, np.ndarray]] = []
        for i in range(0, len(inputs), 32):
            logp += run_heads(model, inputs[i:i + 32])
        lengths = np.array([len(g) for g in gold], np.int64)
        arrays = {f"logp_{h}": np.concatenate([x[h] for x in logp]).astype(np.float32) for h in HEADS}
        arrays.update({f"gold_{k}": np.concatenate([getattr(g, k) for g in gold]) for k in GOLD})
        arrays["gold_elided"] = np.concatenate([g.elided if g.elided is not None else np.zeros(len(g), bool)
                                                for g in gold])
        np.savez_compressed(out / f"{name}.npz", lengths=lengths, **arrays)
        print(f"{name}: {len(gold)} sentences, {int(lengths.sum())} letters, {time.time() - t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
