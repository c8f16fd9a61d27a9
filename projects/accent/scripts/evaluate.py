"""accent-eval: pretrained vs random-init vs lexicon on stripped gold text -> Markdown table.

usage: evaluate.py MIRROR LEXICON OUT.md [--quick] [--n N] [--model DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from stoicheia_lab.accent.evaluate import (
    gold_planes,
    markdown_table,
    read_dev_sample,
    read_ud_texts,
    score,
)

from stoicheia_spacy.accent.lexicon import LexiconAccentuator
from stoicheia_spacy.accent.predict import PlaneControl, predict_planes, strip_planes
from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.backbone import StoicheiaEncoder, load_backbone


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror")
    ap.add_argument("lexicon")
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true", help="100 sentences per set, 3000 chars of dev text")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    n = a.n or (100 if a.quick else None)
    mirror = Path(a.mirror)
    model_dir = a.model or default_model_dir()
    sets = {
        "UD Perseus test": read_ud_texts(mirror / "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz", n),
        "UD PROIEL test": read_ud_texts(mirror / "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz", n),
        "dev sample": read_dev_sample(Path(model_dir) / "dev_sample.jsonl", 3000 if a.quick else None),
    }
    pretrained = load_backbone(model_dir)
    torch.manual_seed(0)
    random_init = StoicheiaEncoder(pretrained.config).eval()
    lexicon = LexiconAccentuator.from_disk(a.lexicon)
    control = PlaneControl(boundary="predict", diacritics="predict", punctuation="predict", capitals="predict")
    results: dict[str, dict[str, dict[str, float]]] = {}
    for name, texts in sets.items():
        gold = gold_planes(texts)
        bare = [strip_planes(g) for g in gold]
        arms = {}
        for arm, model in (("pretrained", pretrained), ("random-init", random_init)):
            preds = []
            for i in range(0, len(bare), 32):
                preds += [p.planes for p in predict_planes(model, bare[i:i + 32], control, lexicon=None)]
            arms[arm] = score(gold, preds)
        arms["lexicon+DP"] = score(gold, [lexicon.predict(b) for b in bare])
        results[name] = arms
        print(name, json.dumps({k: round(v["dia_letter"], 4) for k, v in arms.items()}), flush=True)
    table = markdown_table(results)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(table + "\n", encoding="utf-8")
    Path(a.out).with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
