"""Write a spaCy training config that continues a trained pipeline (every component sourced).

``spacy train`` initializes every component it builds from a factory; a component that names a
``source`` instead keeps its weights and resumes training (Adam restarts). This turns a config of
record into such a continuation, so a CPU-budgeted arm can be trained in legs:

    python scripts/resume_config.py ../../assets/configs/parse_cnn.cfg \\
        training/cnn/fold0__seed0/model-last training/cnn_resume.cfg --batch-start 800
    python -m spacy train training/cnn_resume.cfg --code scripts/resume_config.py ...

spaCy 3.8's ``trainable_lemmatizer`` does not rebuild its tree-to-label table when read from
disk (only ``initialize`` fills it), so a sourced one trains every token towards label 0 and
its lemma accuracy collapses (78 to 32 on dev within 200 steps). The continuation config
therefore runs ``parse.rebuild_lemmatizer_labels.v1`` after initialisation (``--code`` this file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import spacy
from spacy.pipeline import EditTreeLemmatizer
from thinc.api import Config

REBUILD = "parse.rebuild_lemmatizer_labels.v1"


@spacy.registry.callbacks(REBUILD)
def rebuild_lemmatizer_labels() -> Any:
    """An ``[initialize.after_init]`` callback: give each edit-tree lemmatizer read from disk the
    tree-to-label table its ``initialize`` would have built from its labels."""

    def after_init(nlp: Any) -> Any:
        for _, pipe in nlp.components:
            if isinstance(pipe, EditTreeLemmatizer):
                pipe.tree2label = {tree: label for label, tree in enumerate(pipe.labels)}
        return nlp

    return after_init


def resume_config(config: Config, model: str, batch_start: float | None = None) -> Config:
    """``config`` with each pipeline component replaced by ``source = model``."""
    cfg = config.copy()
    for name in cfg["nlp"]["pipeline"]:
        cfg["components"][name] = {"source": model}
    cfg["initialize"]["after_init"] = {"@callbacks": REBUILD}
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
    print(f"wrote {args.out}: {', '.join(cfg['nlp']['pipeline'])} sourced from {args.model} "
          f"(spacy train it with --code {__file__})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
