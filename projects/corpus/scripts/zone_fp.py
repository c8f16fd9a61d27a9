"""Measured false-positive rate of a zone index (``provenance zones``) on real word 5-grams.

Usage (repo root, after a full corpus run and the zone index build)::

    python projects/corpus/scripts/zone_fp.py projects/corpus/corpus assets/which_model/folds.npz \
        assets/which_model/folds_fp.json

Zone ``z`` is asked about 50,000 distinct 5-grams drawn from the held-out text of zone
``z + 5``; the exact 5-gram sets of every zone say which are truly absent from zone ``z``, and
the share of those the index reports is the measured false-positive rate (no false negative
is allowed: the script fails on one).
"""

import json
import sys
from pathlib import Path

import numpy as np

from stoicheia_spacy.provenance.bloom import BloomFilter
from stoicheia_spacy.provenance.index import iter_texts, zone_keys
from stoicheia_spacy.provenance.ngrams import CorpusNgrams


def main() -> None:
    corpus, index, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    sets = []
    for z in range(10):
        grams = CorpusNgrams(5)
        grams.add_texts(iter_texts(corpus / f"fold_{z}" / "test.jsonl"))
        sets.append(grams.distinct())
    bloom = BloomFilter.load(index)
    rng = np.random.default_rng(0)
    per_zone = {}
    fp_total = neg_total = 0
    for z in range(10):
        src = (z + 5) % 10  # zone z is asked about real 5-grams of another zone
        sample = rng.choice(sets[src], 50000, replace=False)
        truth = np.isin(sample, sets[z])
        hit = bloom.contains(zone_keys(sample, z))
        if not hit[truth].all():
            raise SystemExit(f"false negative in zone {z}")
        fp, neg = int((hit & ~truth).sum()), int((~truth).sum())
        per_zone[str(z)] = {"queried_from_zone": src, "negatives": neg, "false_positives": fp,
                            "rate": round(fp / neg, 5)}
        fp_total, neg_total = fp_total + fp, neg_total + neg
    report = {"index": str(index), "stated_fp_rate": bloom.fp_rate,
              "measured_fp_rate": round(fp_total / neg_total, 5), "negatives": neg_total,
              "per_zone": per_zone, "command": "python projects/corpus/scripts/zone_fp.py " + " ".join(sys.argv[1:])}
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("stated_fp_rate", "measured_fp_rate", "negatives")}))


if __name__ == "__main__":
    main()
