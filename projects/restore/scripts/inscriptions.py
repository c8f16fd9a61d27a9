"""The open inscriptions (IOSPE, IIP) as a restoration test set and as n-gram training text.

    python scripts/inscriptions.py samples --mirror M --fold 3 --per-length 100 --out samples/inscriptions
    python scripts/inscriptions.py train --mirror M --fold 3 --out training/inscriptions_train.txt

Documents: every EpiDoc file of ``M/epidoc/iospe`` and ``M/epidoc/iip`` read with
:func:`~stoicheia_spacy.leiden.epidoc.read_epidoc` in the evaluation view (``supplied="gap"``:
an editor's ``<supplied reason="lost">`` is a lacuna of its width, never text). A file that
does not read (malformed XML) is skipped with a logged warning naming it and why. Of the
edition only Greek is kept: letters of the Greek blocks with their diacritics, spaces and
punctuation; other scripts (Hebrew, Latin...) and digits are dropped. Letters an editor
added (``⟨…⟩``) are dropped too; unclear letters (dot below) and resolved abbreviations
(``<expan>``) stay in the context, as the papyri's regularised text has them, but never in a
gold string. Every lacuna is written ``…`` per lost letter (``-`` in the Ithaca records); one
of unknown or line extent as three, a range ``A-B`` as its rounded middle.

Split (as ``restore_eval.py samples`` splits the papyri by TM number): the last digit of the
inscription's id (the file name: ``iospe:3.123`` -> 3, ``iospe:5.88a`` -> 8, ``iip:jeru0123``
-> 3); digit ``fold`` is test, ``fold + 1`` dev, the other eight train.

Samples: the paper's protocol in ``restore_eval.py``'s record formats (``{split}.jsonl``:
``{id, L, start, gold, text}``, ``?`` x L at the target, ``-`` for the real lacunae;
``{split}.chat.jsonl``: the letters-only chat format). L = 1..10 cycled as the papyri's, the
gold a run of L certain Greek letters and single spaces, 20 random tries a document and visit,
fixed seed. The held-out documents are few (about 200 a digit), so they are visited in passes
(a seeded order) until the quota (``--per-length`` test gaps per L, half that for dev) is met
or a pass adds nothing; each document gives at most one gap per visit and no start twice;
then every L is cut to the same count. ``stats.json``: documents, letters, samples per L.

Training text (``train``): the train digits' certain text, one line per stretch between
lacunae (a lacuna or an editor's supplement breaks the line, so no n-gram spans one).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from restore_eval import (
    GAP_RE,
    correct_top1,
    load_split,
    recorded_argv,
    rescore_fused,
    score,
    write_split,
)
from stoicheia_lab.scoring.stats import mcnemar_exact

from stoicheia_spacy.errors import EpiDocError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.leiden.epidoc import read_epidoc
from stoicheia_spacy.leiden.model import Gap
from stoicheia_spacy.restore import WidthPrior
from stoicheia_spacy.restore.calibration import rerank
from stoicheia_spacy.restore.formats import ithaca_text

log = logging.getLogger("inscriptions")

COLLECTIONS = ("iospe", "iip")
LOST = "…"  # one lost letter (``ithaca_text`` writes it ``-``)
UNKNOWN_WIDTH = 3  # letters written for a lacuna of unknown or line extent
#: characters kept besides Greek letters and combining marks
PUNCTUATION = frozenset(" .,·;:ʹ͵’ʼ'")
#: span kinds whose letters are not on the stone (dropped)
DROPPED = frozenset({"added"})
#: span kinds kept in the context but never part of a gold string
DOUBTFUL = frozenset({"uncertain", "expansion", "restored", "erased", "superfluous", "correction", "insertion"})
MAX_PASSES = 10


def inscription_digit(identifier: str) -> int | None:
    """The last digit of an inscription's id (a trailing letter ignored), or None."""
    digits = re.findall(r"\d", identifier)
    return int(digits[-1]) if digits else None


def split_of(digit: int | None, fold: int) -> str | None:
    """``test`` for digit ``fold``, ``dev`` for ``fold + 1``, ``train`` otherwise (None: no digit)."""
    if digit is None:
        return None
    return {fold % 10: "test", (fold + 1) % 10: "dev"}.get(digit, "train")


def _greek(ch: str) -> bool:
    return "\u0370" <= ch <= "\u03ff" or "\u1f00" <= ch <= "\u1fff"


def _width(gap: Gap) -> int:
    if gap.max_width is None or gap.kind == "lines":
        return UNKNOWN_WIDTH
    return round((gap.min_width + gap.max_width) / 2)


def document_text(leiden: str) -> tuple[str, str]:
    """``(text, sure)`` of an edition's Leiden text: the Greek document with ``…`` per lost
    letter, and per character ``1`` where it may be gold (a certain Greek letter or space), else ``0``."""
    gapped = parse_gaps(leiden)
    text = gapped.text
    drop, doubt = [False] * len(text), [False] * len(text)
    for span in gapped.spans:
        target = drop if span.kind in DROPPED else doubt if span.kind in DOUBTFUL else None
        if target is not None:
            target[span.start : span.end] = [True] * (span.end - span.start)
    inserts: dict[int, int] = {}
    for gap in gapped.gaps:
        inserts[gap.start] = inserts.get(gap.start, 0) + _width(gap)
    clusters: list[tuple[str, bool]] = []  # a base character with its combining marks, may-be-gold
    for i in range(len(text) + 1):
        if i in inserts:
            clusters.append((LOST * inserts[i], False))
        if i == len(text) or drop[i]:
            continue
        ch = text[i]
        if unicodedata.combining(ch):
            if clusters and clusters[-1][0] and _greek(clusters[-1][0][0]):
                base, sure = clusters[-1]
                clusters[-1] = (base + ch, sure and not doubt[i])
        elif _greek(ch) or ch in PUNCTUATION or ch.isspace():
            clusters.append((" " if ch.isspace() else ch, not doubt[i] and (ch.isspace() or _greek(ch))))
        elif clusters and clusters[-1][0] != " ":  # another script or a digit: a word break
            clusters.append((" ", False))
    out: list[str] = []
    sure_marks: list[str] = []
    for chunk, sure in clusters:
        chunk = unicodedata.normalize("NFC", chunk)
        if chunk == " " and (not out or out[-1] == " "):
            continue
        out.append(chunk)
        sure_marks.append(("1" if sure else "0") * len(chunk))
    doc, sure_str = "".join(out), "".join(sure_marks)
    if doc.endswith(" "):
        doc, sure_str = doc[:-1], sure_str[:-1]
    return doc, sure_str


def read_inscriptions(mirror: str | Path, fold: int = 3) -> Iterator[dict]:
    """Records ``{id, source, digit, split, text, sure}`` of every readable inscription with
    Greek text, in file-name order; unreadable files are logged and skipped."""
    for name in COLLECTIONS:
        folder = Path(mirror) / "epidoc" / name
        files = sorted(folder.glob("*.xml"))
        if not files:
            raise SystemExit(f"no EpiDoc files in {folder}")
        for path in files:
            try:
                view = read_epidoc(path, supplied="gap")
            except EpiDocError as exc:
                log.warning("skipped %s/%s: %s", name, path.name, exc)
                continue
            text, sure = document_text(view.text) if view.text else ("", "")
            if not any(_greek(ch) for ch in text):
                continue
            identifier = f"{name}:{path.stem}"
            digit = inscription_digit(path.stem)
            yield {"id": identifier, "source": name, "digit": digit, "split": split_of(digit, fold),
                   "text": text, "sure": sure}


def letters(text: str) -> int:
    """Greek letters of a text."""
    return sum(1 for ch in text if _greek(ch))


def sample_split(docs: list[dict], per_length: int, rng: random.Random) -> list[dict]:
    """Gap records from ``docs`` (see the module docstring): equal numbers per L = 1..10."""
    order = list(docs)
    rng.shuffle(order)
    rows: list[dict] = []
    used: set[tuple[str, int]] = set()
    quota = per_length * 10
    for _ in range(MAX_PASSES):
        added = 0
        for record in order:
            if len(rows) >= quota:
                break
            L = len(rows) % 10 + 1
            text, sure = record["text"], record["sure"]
            for _ in range(20):
                if len(text) <= L + 20:
                    break
                start = rng.randrange(10, len(text) - L)
                gold = text[start : start + L]
                if ((record["id"], start) not in used and GAP_RE.match(gold) and "0" not in sure[start : start + L]
                        and not unicodedata.combining(text[start + L : start + L + 1] or " ")):
                    itext, istart = ithaca_text(text, start, L)
                    rows.append({"id": record["id"], "L": L, "start": istart, "gold": gold, "text": itext})
                    used.add((record["id"], start))
                    added += 1
                    break
        if not added or len(rows) >= quota:
            break
    by_length = Counter(r["L"] for r in rows)
    n = min(by_length.get(L, 0) for L in range(1, 11))
    kept: list[dict] = []
    for r in rows:
        if sum(1 for k in kept if k["L"] == r["L"]) < n:
            kept.append(r)
    return kept


def make_samples(docs: list[dict], fold: int, per_length: int, seed: int) -> dict[str, list[dict]]:
    """``{"test": [...], "dev": [...]}``: test from digit ``fold`` (``per_length`` per L at most),
    dev from ``fold + 1`` (half that), one seeded generator as the papyri's samples use."""
    rng = random.Random(seed)
    quota = {"test": per_length, "dev": max(1, per_length // 2)}
    return {split: sample_split([d for d in docs if d["split"] == split], quota[split], rng)
            for split in ("test", "dev")}


def stats(docs: list[dict], data: dict[str, list[dict]], skipped: list[str], args: argparse.Namespace) -> dict:
    out: dict = {"command": "python scripts/inscriptions.py " + " ".join(recorded_argv(args.argv)),
                 "split_rule": f"last digit of the inscription id: {args.fold} test, {(args.fold + 1) % 10} dev, "
                               "the other eight train",
                 "skipped_files": skipped, "collections": {}}
    for name in COLLECTIONS:
        out["collections"][name] = {split: {"documents": sum(1 for d in docs if d["source"] == name and d["split"] == split),
                                            "letters": sum(letters(d["text"]) for d in docs
                                                           if d["source"] == name and d["split"] == split)}
                                    for split in ("train", "dev", "test")}
    for split in ("train", "dev", "test"):
        part = [d for d in docs if d["split"] == split]
        entry: dict[str, Any] = {"documents": len(part), "letters": sum(letters(d["text"]) for d in part),
                 "certain_letters": sum(1 for d in part for ch, s in zip(d["text"], d["sure"], strict=True)
                                        if s == "1" and _greek(ch))}
        if split in data:
            rows = data[split]
            entry.update(samples=len(rows), samples_per_L={str(k): v for k, v in sorted(Counter(r["L"] for r in rows).items())},
                         documents_sampled=len({r["id"] for r in rows}))
        out[split] = entry
    return out


def score_cached(args: argparse.Namespace) -> int:
    """Known-width scores of decodings ``restore_eval.py evaluate`` cached (``--run ARM=FILE``,
    one per arm, the same test records): CER / top-1 / top-20 per L as ``evaluate`` scores them
    (the ``fused`` arm LM-rescored at ``--lm-rescore`` as the restorer does), exact McNemar on
    top-1 between every pair, CPU seconds per gap; for a session whose CPU cannot run the whole
    ``evaluate`` (its dev-fitted calibration needs the dev decodings)."""
    test = load_split(Path(args.samples), "test", args.per_length)
    metrics: dict[str, Any] = {"command": "python scripts/inscriptions.py " + " ".join(recorded_argv(args.argv)),
                               "n_test": len(test), "widths": "known", "arms": {}, "speed": {}, "mcnemar": {}}
    correct = {}
    for item in args.run:
        arm, _, file = item.partition("=")
        run = json.loads(Path(file).read_text(encoding="utf-8"))
        if run["n"] != len(test):
            raise SystemExit(f"{file}: {run['n']} decodings for {len(test)} test records")
        if arm == "fused" and args.lm_rescore > 0:
            run = rescore_fused({("test", "fused", "known"): run}, {"test": test}, args, grid=False)[("test", "fused", "known")]
        tops = [[c[0] for c in rerank([tuple(c) for c in cands], WidthPrior())[:20]] for cands in run["cands"]]
        metrics["arms"][arm] = score(test, tops)
        metrics["speed"][arm] = {"gaps": run["n"], "cpu_s_per_gap": run["cpu_s"] / max(run["n"], 1)}
        correct[arm] = correct_top1(test, tops)
    names = list(correct)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            r = mcnemar_exact(correct[a], correct[b])
            metrics["mcnemar"][f"{a} vs {b}"] = {"a_only": r.a_only, "b_only": r.b_only, "p": r.pvalue}
    out = Path(args.out)
    out.write_text(json.dumps(metrics, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for arm, sc in metrics["arms"].items():
        o = sc["overall"]
        log.info("%s: CER %.1f, top-1 %.1f, top-20 %.1f (%d gaps)", arm, o["cer"], o["top1"], o["top20"], o["n"])
    return 0


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("samples", help="frozen gap samples of the held-out inscriptions + stats.json")
    t = sub.add_parser("train", help="the train digits' certain text, one stretch between lacunae a line")
    for p in (s, t):
        p.add_argument("--mirror", required=True)
        p.add_argument("--fold", type=int, default=3)
        p.add_argument("--out", required=True)
    s.add_argument("--per-length", type=int, default=100, help="test gaps per L at most (dev: half)")
    s.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("score", help="known-width scores of cached evaluate decodings (see score_cached)")
    c.add_argument("--samples", required=True)
    c.add_argument("--per-length", type=int, default=None)
    c.add_argument("--run", action="append", required=True, metavar="ARM=FILE")
    c.add_argument("--lm", default=None, help="the fused arm's n-gram LM (its rescoring)")
    c.add_argument("--lm-rescore", type=float, default=1.0)
    c.add_argument("--window", type=int, default=24)
    c.add_argument("--slack", type=int, default=2)
    c.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    if args.cmd == "score":
        return score_cached(args)
    collect = _Collect()
    log.addHandler(collect)
    try:
        docs = list(read_inscriptions(args.mirror, args.fold))
    finally:
        log.removeHandler(collect)
    out = Path(args.out)
    if args.cmd == "train":
        lines = [part.strip() for d in docs if d["split"] == "train" for part in d["text"].split(LOST)]
        lines = [x for x in lines if letters(x)]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
        log.info("%s: %d lines, %d letters of %d train inscriptions", out, len(lines),
                 sum(letters(x) for x in lines), sum(1 for d in docs if d["split"] == "train"))
        return 0
    data = make_samples(docs, args.fold, args.per_length, args.seed)
    for split, rows in data.items():
        write_split(out, split, rows)
        log.info("%s: %d samples", split, len(rows))
    (out / "stats.json").write_text(json.dumps(stats(docs, data, collect.messages, args), indent=1,
                                               ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
