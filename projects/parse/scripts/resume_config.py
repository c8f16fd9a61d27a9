"""Write a spaCy training config that continues a trained pipeline (every component sourced).

``spacy train`` initializes every component it builds from a factory; a component that names a
``source`` instead keeps its weights and resumes training (Adam restarts). This turns a config of
record into such a continuation, so a CPU-budgeted arm can be trained in legs:

    python scripts/resume_config.py ../../assets/configs/parse_cnn.cfg \\
        training/cnn/fold0__seed0/model-last training/cnn_resume.cfg --batch-start 800
"""

from __future__ import annotations

import argparse
from pathlib import Path

from thinc.api import Config


def resume_config(config: Config, model: str, batch_start: float | None = None) -> Config:
    """``config`` with each pipeline component replaced by ``source = model``."""
    cfg = config.copy()
    for name in cfg["nlp"]["pipeline"]:
        cfg["components"][name] = {"source": model}
    if batch_start is not None:
        cfg["training"]["batcher"]["size"]["start"] = batch_start
    return cfg


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", type=Path)
    ap.add_argument("model", help="trained pipeline folder the components are sourced from")
    ap.add_argument("out", type=Path)
    ap.add_argument("--batch-start", type=float, default=None,
                    help="words per batch to restart the compounding batch size from")
    args = ap.parse_args(argv)
    cfg = resume_config(Config().from_disk(args.config, interpolate=False), args.model, args.batch_start)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cfg.to_disk(args.out)
    print(f"wrote {args.out}: {', '.join(cfg['nlp']['pipeline'])} sourced from {args.model}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
