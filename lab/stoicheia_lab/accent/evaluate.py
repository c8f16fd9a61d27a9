"""``accent-eval``: score accentuation of stripped gold text (see ``projects/accent``).

Gold text is encoded, stripped of every plane but the letters (:func:`.predict.strip_planes`:
lower case, no diacritics, no spaces, no punctuation) and predicted back.  Metrics:
diacritic accuracy per letter and per gold word (all letters of the word right), word
segmentation P/R/F1 (exact word spans), punctuation F1 (position and class), capitals F1.
"""

from __future__ import annotations

import json
import lzma
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy.alphabet import BND_SENT_END, BND_WORD_END, CAP_UPPER, PUNCT_NONE
from stoicheia_spacy.codec import CharPlanes, encode_planes, word_spans

METRICS: tuple[str, ...] = ("dia_letter", "dia_word", "seg_p", "seg_r", "seg_f1", "punct_f1", "cap_f1")


def _f1(tp: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score(gold: Sequence[CharPlanes], pred: Sequence[CharPlanes]) -> dict[str, float]:
    """Micro-averaged metrics of predicted against gold planes (same letters)."""
    dia_ok = n = word_ok = n_words = 0
    seg = [0, 0, 0]
    pun = [0, 0, 0]
    cap = [0, 0, 0]
    for g, p in zip(gold, pred, strict=True):
        eq = g.diacritics == p.diacritics
        dia_ok += int(eq.sum())
        n += len(g)
        gs = word_spans(g)
        if len(gs):
            bad = np.add.reduceat((~eq).astype(np.int64), gs[:, 0])
            word_ok += int((bad == 0).sum())
            n_words += len(gs)
        pb = p.boundary.copy()
        pb[(pb != BND_WORD_END) & (pb != BND_SENT_END)] = 0
        ps = word_spans(CharPlanes(p.letters, pb, p.diacritics, p.capitals, p.punctuation, p.offsets))
        gset = {tuple(x) for x in gs.tolist()}
        pset = {tuple(x) for x in ps.tolist()}
        seg[0] += len(gset & pset)
        seg[1] += len(pset)
        seg[2] += len(gset)
        gp, pp = g.punctuation != PUNCT_NONE, p.punctuation != PUNCT_NONE
        pun[0] += int((gp & pp & (g.punctuation == p.punctuation)).sum())
        pun[1] += int(pp.sum())
        pun[2] += int(gp.sum())
        gc, pc = g.capitals == CAP_UPPER, p.capitals == CAP_UPPER
        cap[0] += int((gc & pc).sum())
        cap[1] += int(pc.sum())
        cap[2] += int(gc.sum())
    sp, sr, sf = _f1(*seg)
    return {"dia_letter": dia_ok / max(n, 1), "dia_word": word_ok / max(n_words, 1), "seg_p": sp,
            "seg_r": sr, "seg_f1": sf, "punct_f1": _f1(*pun)[2], "cap_f1": _f1(*cap)[2],
            "letters": float(n), "words": float(n_words)}


def read_ud_texts(path: str | Path, limit: int | None = None) -> list[str]:
    """The ``# text =`` lines of a (plain or .xz) CoNLL-U file."""
    opener: Any = lzma.open if str(path).endswith(".xz") else open
    out: list[str] = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# text = "):
                out.append(line[len("# text = "):].strip())
                if limit is not None and len(out) >= limit:
                    break
    return out


def read_dev_sample(path: str | Path, limit_letters: int | None = None) -> list[str]:
    """Texts of a JSONL dev sample, optionally cut (on a space) to ``limit_letters`` characters."""
    texts = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            text = json.loads(line)["text"]
            if limit_letters is not None and len(text) > limit_letters:
                text = text[: text.rfind(" ", 0, limit_letters)]
            texts.append(text)
    return texts


def gold_planes(texts: Sequence[str]) -> list[CharPlanes]:
    """Encoded gold texts (empty ones dropped)."""
    return [p for p in (encode_planes(t) for t in texts) if len(p)]


def markdown_table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """``results[dataset][arm] = metrics`` as a Markdown table (percentages)."""
    head = "| data | arm | letters | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + "---|" * (len(METRICS) + 3)]
    for data, arms in results.items():
        for arm, m in arms.items():
            cells = " | ".join(f"{100 * m[k]:.1f}" for k in METRICS)
            lines.append(f"| {data} | {arm} | {int(m['letters'])} | {cells} |")
    return "\n".join(lines)


LOGP_HEADS: tuple[str, ...] = ("boundary", "dia", "punct", "cap")


def load_logp_cache(path: str | Path) -> tuple[list[CharPlanes], list[dict[str, np.ndarray]]]:
    """Gold planes and per-letter head log-probabilities of one cached evaluation set
    (written by ``projects/accent/scripts/cache_logp.py``), split into sentences."""
    with np.load(Path(path), allow_pickle=False) as data:
        lengths = data["lengths"]
        cuts = np.cumsum(lengths)[:-1]
        split = {k: np.split(data[k], cuts) for k in data.files if k != "lengths"}
    gold = [CharPlanes(split["gold_letters"][i], split["gold_boundary"][i], split["gold_diacritics"][i],
                       split["gold_capitals"][i], split["gold_punctuation"][i],
                       np.arange(int(lengths[i]), dtype=np.int64), elided=split["gold_elided"][i])
            for i in range(len(lengths))]
    logp = [{h: split[f"logp_{h}"][i] for h in LOGP_HEADS} for i in range(len(lengths))]
    return gold, logp
