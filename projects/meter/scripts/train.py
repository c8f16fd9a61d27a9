"""Train the scanner heads on silver data with the backbone frozen (CPU, minutes).

Hidden states come from the real ``stoicheia_encoder`` pipe (``build_pipeline``), are
computed once per line (frozen backbone, grad_factor 0) and the torch heads are trained
on them; the result is a ``stoicheia_scanner`` folder (``heads.json``, ``heads.safetensors``)
that ``ScannerPipe.from_disk`` reads. A temperature for the macron head is fitted on
held-out silver lines (``stoicheia_lab.scoring.calibration``): it is a setting, written to
``train_report.json`` and ``OUT.settings.cfg`` beside the folder (the ``[components.stoicheia_scanner.settings]``
block to put in a pipeline's ``config.cfg``), not a file of the component folder.

    python projects/meter/scripts/train.py OUT [--lines 1500] [--epochs 30] [--seed 0] [--random-init]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import srsly
import torch
from stoicheia_lab.scan.norma import read_norma
from stoicheia_lab.scan.silver import build_silver

from stoicheia_spacy.scan.model import N_MACRON, ScannerHeads, rule_features


def mirror() -> Path:
    env = os.environ.get("STOICHEIA_ASSET_MIRROR")
    if not env:
        raise SystemExit("set STOICHEIA_ASSET_MIRROR to the open-data mirror")
    return Path(env)


def encode(nlp, texts: list[str], batch: int = 16) -> list[np.ndarray]:
    """Per-letter hidden stacks (L, n, d) as float16, one forward per batch."""
    enc = nlp.get_pipe("stoicheia_encoder")
    out = []
    for i in range(0, len(texts), batch):
        docs = [nlp.make_doc(t) for t in texts[i : i + batch]]
        for d in enc.predict(docs):
            out.append(np.asarray(d.hidden, dtype=np.float16))
    return out


def build_nlp(random_init: bool, seed: int):
    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.encoder.model import torch_backbone

    nlp = build_pipeline(str(default_model_dir()), components=False)  # encoder only
    if random_init:
        torch.manual_seed(seed)
        model = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)  # type: ignore[attr-defined]
        for m in model.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()  # type: ignore[operator]
    return nlp


def train_heads(hidden: list[np.ndarray], feats: list[np.ndarray], mac: list[np.ndarray], scan: list[np.ndarray],
                *, epochs: int, seed: int, lr: float = 2e-3, batch: int = 32) -> ScannerHeads:
    torch.manual_seed(seed)
    heads = ScannerHeads(hidden[0].shape[0], hidden[0].shape[2])
    opt = torch.optim.AdamW(heads.parameters(), lr=lr, weight_decay=0.01)
    rng = np.random.default_rng(seed)
    ce = torch.nn.CrossEntropyLoss(ignore_index=-1)
    for _ in range(epochs):
        heads.train()
        for b in np.array_split(rng.permutation(len(hidden)), max(1, len(hidden) // batch)):
            h = torch.as_tensor(np.concatenate([hidden[i] for i in b], axis=1)).float()
            f = torch.as_tensor(np.concatenate([feats[i] for i in b]))
            ym = torch.as_tensor(np.concatenate([mac[i] for i in b]).astype(np.int64))
            ys = torch.as_tensor(np.concatenate([scan[i] for i in b]).astype(np.int64))
            out = heads(h, f)
            loss = ce(out[:, :N_MACRON], ym) + ce(out[:, N_MACRON:], ys)
            opt.zero_grad()
            loss.backward()
            opt.step()
    heads.eval()
    return heads


def fit_temperature_on(heads: ScannerHeads, hidden, feats, mac) -> tuple[float, float]:
    """(temperature, accuracy) of the macron head on labelled held-out letters."""
    from stoicheia_lab.scoring.calibration import fit_temperature

    logits, labels = [], []
    with torch.no_grad():
        for h, f, y in zip(hidden, feats, mac, strict=True):
            out = heads(torch.as_tensor(h).float(), torch.as_tensor(f))[:, :N_MACRON].numpy()
            m = y >= 0
            logits.append(out[m])
            labels.append(y[m])
    lg, lb = np.concatenate(logits), np.concatenate(labels).astype(np.int64)
    return float(fit_temperature(lg, lb)), float((lg.argmax(1) == lb).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lines", type=int, default=1500)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--random-init", action="store_true", help="random backbone (control arm)")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, int(os.environ.get("STOICHEIA_THREADS", "1"))))
    t0 = time.time()
    data = mirror()
    norma = read_norma(data / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    silver, counts = build_silver(data, norma, max_lines=args.lines, seed=args.seed)
    nlp = build_nlp(args.random_init, args.seed)
    texts = [x.text for x in silver]
    hidden = encode(nlp, texts)
    from stoicheia_spacy.codec import encode_planes

    feats = [rule_features(encode_planes(t), t) for t in texts]
    mac = [x.macron.astype(np.int64) for x in silver]
    scan = [x.scan.astype(np.int64) for x in silver]
    n_dev = max(1, len(silver) // 10)
    heads = train_heads(hidden[n_dev:], feats[n_dev:], mac[n_dev:], scan[n_dev:], epochs=args.epochs, seed=args.seed)
    temperature, dev_acc = fit_temperature_on(heads, hidden[:n_dev], feats[:n_dev], mac[:n_dev])
    args.out.mkdir(parents=True, exist_ok=True)
    from safetensors.torch import save_file

    save_file({k: v.detach().contiguous() for k, v in heads.state_dict().items()}, str(args.out / "heads.safetensors"))
    srsly.write_json(args.out / "heads.json", heads.config)
    (args.out.parent / f"{args.out.name}.settings.cfg").write_text(
        '[components.stoicheia_scanner.settings]\n@misc = "stoicheia.ScannerSettings.v1"\n'
        f"temperature = {float(temperature)!r}\n", encoding="utf-8")
    report = {**counts, "train_lines": len(silver) - n_dev, "dev_lines": n_dev, "silver_dev_macron_acc": dev_acc,
              "temperature": temperature, "seed": args.seed, "random_init": args.random_init,
              "seconds": round(time.time() - t0, 1)}
    (args.out / "train_report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
