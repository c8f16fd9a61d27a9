"""How the form table's tag prior is shaped (issue 42: the default loses UPOS to the lookup on
UD PROIEL): the morphologizer's log-linear prior ``heads + w · log share`` at several weights,
against two other shapes on the same cached forward (``parse_eval.py cache``):

- ``mix<λ>``: the heads' distribution over the form's table tags mixed linearly with the table's
  shares, ``log((1 − λ) p_heads + λ share)``, which leaves a confident head alone;
- ``w<w>_n<n>``: the log-linear prior only for forms the table counts at least ``n`` times.

    python scripts/tag_prior_variants.py CACHE_DIR OUT.json --splits fold0_dev,ud_proiel_dev [--mirror M]

Writes UPOS and XPOS accuracy (%) per split and variant, the lookup baseline beside them (XPOS
null on UD PROIEL, whose XPOS are PROIEL's); lemmas are decoded once (tag weights change none).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logsumexp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import parse_eval as pe

Variant = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


def variants() -> dict[str, Variant]:
    """Every shape scored, by name: candidate scores from (heads' score, log share, form count)."""
    out: dict[str, Variant] = {}
    for w in (0.0, 1.0, 2.0, 4.0, 12.0):
        out[f"w{w:g}"] = lambda s, ls, n, w=w: s + w * ls
    for lam in (0.1, 0.3, 0.5, 0.7):
        out[f"mix{lam:g}"] = lambda s, ls, n, lam=lam: np.log((1 - lam) * np.exp(s - logsumexp(s)) + lam * np.exp(ls))
    for w in (2.0, 4.0, 12.0):
        for least in (5, 20, 100):
            out[f"w{w:g}_n{least}"] = lambda s, ls, n, w=w, least=least: s + (w if n >= least else 0.0) * ls
    return out


def candidates(record: dict[str, Any], morph: Any, table: Any) -> list[tuple[list[str], list[str], list[Any]]]:
    """Per sentence: the heads' joint decode, and per table-attested word its candidates' scores
    (``StoicheiaMorphologizer.table_scores``) and the form's count in the table."""
    out = []
    for forms, logits in zip(record["forms"], record["morph"], strict=True):
        upos, tags = morph.decode(logits)
        items: list[Any] = [None if got is None else
                            (got.tags, got.upos, got.heads, np.asarray(got.log_shares),
                             sum(n for _, _, n in table.analyses(form)))
                            for form, got in zip(forms, morph.table_scores(logits, forms, table), strict=True)]
        out.append((upos, tags, items))
    return out


def decode_with(cands: list[Any], fn: Variant) -> tuple[list[list[str]], list[list[str]]]:
    ups, xps = [], []
    for upos0, tags0, items in cands:
        upos, tags = list(upos0), list(tags0)
        for i, item in enumerate(items):
            if item is not None:
                names, names_upos, score, shares, count = item
                k = int(np.argmax(fn(score, shares, count)))
                upos[i], tags[i] = names_upos[k], names[k]
        ups.append(upos)
        xps.append(tags)
    return ups, xps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--splits", required=True)
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("STOICHEIA_ASSET_MIRROR", ".")))
    args = ap.parse_args(argv)
    project = Path(__file__).resolve().parents[1]
    morph, lem, table, train = pe.load_context(project, None)
    result: dict[str, Any] = {"variants": {}, "command": pe.command_line()}
    for split in args.splits.split(","):
        record = pickle.loads((args.cache_dir / f"{split}.pkl").read_bytes())
        gold, iv = pe.gold_words(record, args.mirror), pe.in_vocabulary(record, train)
        lemmas = pe.decode(record, morph, lem, table, (0.0, 2.0, True), ("lemmas",))[0][2]
        acc = pe.split_accuracy(pe.hits(gold, pe.pred_words(record, pe.decode(record, morph, lem, table, "lookup")[0])), iv)
        has_xpos = pe.SPLITS[split].get("xpos", True)
        rows = {"lookup": {"upos": acc["upos"], "xpos": acc["xpos"] if has_xpos else None}}
        cands = candidates(record, morph, table)
        for name, fn in variants().items():
            ups, xps = decode_with(cands, fn)
            acc = pe.split_accuracy(pe.hits(gold, pe.pred_words(record, (ups, xps, lemmas))), iv)
            rows[name] = {"upos": acc["upos"], "xpos": acc["xpos"] if has_xpos else None}
        result["variants"][split] = rows
        print(split, json.dumps({k: (v["upos"], v["xpos"]) for k, v in rows.items()}), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
