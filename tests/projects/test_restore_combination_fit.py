"""restore-eval's fit of the combination weights (the `combined` arm) on cached candidates: a bucket
whose gold only the backbone finds gets a backbone weight; the default weights (which also serve
hidden and range widths, never decoded by the backbone on dev) do not, unless asked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.restore.formats import ithaca_text
from stoicheia_spacy.restore.kneser_ney import SPACE, build_kn, save_kn

SCRIPTS = Path(__file__).resolve().parents[2] / "projects" / "restore" / "scripts"
SALE = ("Ἀπολλώνιος Ἡρακλείδου Σαραπίωνι χαίρειν. ὁμολογῶ πεπρακέναι σοι ὄνον θήλειαν λευκὴν καὶ ἀπέχω "
        "τὴν τιμὴν ἀργυρίου δραχμὰς ἑκατὸν καὶ βεβαιώσω πάσῃ βεβαιώσει. ἔρρωσο.")


def _restore_eval():
    sys.path.insert(0, str(SCRIPTS))
    try:
        return __import__("restore_eval")
    finally:
        sys.path.remove(str(SCRIPTS))


def _symbols(text: str) -> np.ndarray:
    p = encode_planes(text)
    return np.insert(p.letters.astype(np.int64), np.flatnonzero(p.boundary > 0) + 1, SPACE)


def test_only_known_width_buckets_weigh_the_backbone(tmp_path):
    restore_eval = _restore_eval()
    lm_path = tmp_path / "kn.npz"
    save_kn(build_kn([_symbols(SALE)] * 3, order=8), lm_path)
    dev: list[dict[str, Any]] = []
    for word in ("πεπρακέναι", "θήλειαν", "ἀργυρίου", "βεβαιώσω"):  # gaps of 7-10 letters
        start = SALE.index(word)
        text, istart = ithaca_text(SALE, start, len(word))
        dev.append({"id": word, "L": len(word), "start": istart, "gold": word, "text": text})
    # the n-gram proposes a wrong reading only; the backbone also finds the gold, scored above it
    ngram = {"cands": [[["α" * r["L"], -5.0, r["L"]]] for r in dev]}
    backbone = {"cands": [[[r["gold"], -1.0, r["L"]], ["α" * r["L"], -30.0, r["L"]]] for r in dev]}
    runs = {("dev", "ngram8", "known"): ngram, ("dev", "finetuned", "known"): backbone}
    args = argparse.Namespace(kn_lm=str(lm_path), kn_backbone_weights=[0.0, 0.5, 1.0], slack=2, kn_far=10,
                              kn_min_gaps=4, kn_default_backbone=False)
    weights, table = restore_eval.fit_combination(runs, {"dev": dev}, args)
    assert weights["7-10"][0] > 0  # the bucket's own fit weighs the backbone
    assert weights["default"][0] == 0  # the default (hidden / range widths too) does not
    assert table["7-10"]["backbone 0, rev 1"] > table["7-10"]["backbone 0.5, rev 1"]
    args.kn_default_backbone = True
    weights, _ = restore_eval.fit_combination(runs, {"dev": dev}, args)
    assert weights["default"][0] > 0
    args.kn_min_gaps = 5  # too few dev gaps for a bucket of its own: only the default is fitted
    weights, _ = restore_eval.fit_combination(runs, {"dev": dev}, args)
    assert set(weights) == {"default"}
