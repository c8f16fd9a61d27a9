"""Build the parallels index (stoicheia_spacy.parallels.index) of the open corpus from the mirror.

    python scripts/parallels_index.py --mirror M --fold 3 --samples samples/fold_3 --out training/parallels

* the DDbDP papyri (duke-nlp 2018 tokens): every document whose TM number does not end in ``fold``
  or ``fold + 1`` (the restore-eval folds, as the n-gram LMs) and is not sampled; per letter whether
  the DDbDP editor supplied it (``[...]`` in ORIGINAL, the letters read from REGULARIZED), lost
  letters (``|gap=N|``, unsupplied brackets) as separators, line numbers from the ROW column;
* the Perseus literary texts (no line numbers);
* with ``--inscriptions``, the open inscriptions' training part (IOSPE, IIP; id digits other than
  ``fold``, ``fold + 1``, read as ``scripts/inscriptions.py`` reads them: every supplied or lost
  letter a separator, so an editor's supplement is never evidence). ``--no-papyri --no-literary
  --inscriptions`` builds the inscriptions' own small index (issue 43, Run 14).

Writes the index folder and ``parallels_build.json`` beside it (documents, letters, bytes, CPU seconds).
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import sys
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from stoicheia_spacy.parallels.index import Document, build_index, letters_of

_BAR = re.compile(r"\|[^|]*\|")
_GAP = re.compile(r"\|gap=[^|]*\|")
_ERASED = re.compile(r"⟦[^⟧]*⟧")
_BRACKET = re.compile(r"\[([^\]]*)\]")
_LINE = re.compile(r"\d+")


def _n(text: str) -> int:
    return int((letters_of(text) != 24).sum()) if text else 0


def token(orig: str, reg: str, completeness: str) -> tuple[np.ndarray, np.ndarray]:
    """One DDbDP token's letters and which of them the editor supplied."""
    letters = letters_of(_BAR.sub("", reg))
    if completeness == "C":
        return letters, np.zeros(len(letters), bool)
    if completeness == "F":
        return letters, np.ones(len(letters), bool)
    s = unicodedata.normalize("NFD", orig)
    s = _GAP.sub("\x00", s)
    s = _BAR.sub("", s)
    s = _ERASED.sub("", s)
    marks = _BRACKET.sub(lambda m: "\x00" * max(1, len(letters_of(m.group(1)))), s)
    masked = letters_of(marks)
    sep = 24
    if len(masked) == len(letters) and not (letters == sep).any():
        return letters, masked == sep
    return masked, np.zeros(len(masked), bool)


def papyri(mirror: Path, held: set[int], sample_ids: set[str], stats: dict) -> Iterator[Document]:
    path = mirror / "papyri" / "duke_nlp_2018_ddbdp_tokens.tsv.xz"
    doc: str | None = None
    tm: str | None = None
    toks: list[tuple[np.ndarray, np.ndarray]] = []
    lines: list[tuple[int, int]] = []
    offset = 0
    last_line = -1

    def flush() -> Document | None:
        if doc is None or not toks:
            return None
        digit = int(tm[-1]) if tm and tm[-1].isdigit() else None
        if digit in held or f"ddbdp:{doc}" in sample_ids:
            stats["left_out"] += 1
            return None
        letters = np.concatenate([t[0] for t in toks])
        supplied = np.concatenate([t[1] for t in toks])
        space = np.zeros(len(letters), bool)
        ends = np.cumsum([len(t[0]) for t in toks]) - 1
        space[ends[ends >= 0]] = True
        stats["documents"] += 1
        return Document(id=doc, source="ddbdp", letters=letters, supplied=supplied, space_after=space,
                        lines=list(lines), tm=tm)

    with lzma.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# newdoc"):
                if (d := flush()) is not None:
                    yield d
                m, t = re.search(r"file = (\S+)", line), re.search(r"TM = (\S+)", line)
                doc, tm, toks, lines, offset, last_line = (m.group(1) if m else None), (t.group(1) if t else None), \
                    [], [], 0, -1
            elif line[:1].isdigit():
                cols = line.rstrip("\n").split("\t")
                if len(cols) > 5:
                    pair = token(cols[3], cols[4], cols[5])
                    if not len(pair[0]):
                        continue
                    row = _LINE.match(cols[1])
                    if row and int(row.group()) != last_line:
                        last_line = int(row.group())
                        lines.append((offset, last_line))
                    toks.append(pair)
                    offset += len(pair[0])
    if (d := flush()) is not None:
        yield d


def literary(mirror: Path, stats: dict) -> Iterator[Document]:
    from stoicheia_lab.corpus import iter_records

    for record in iter_records("perseus", mirror):
        words = [w for w in (letters_of(x) for x in record["text"].split()) if len(w)]
        if not words:
            continue
        letters = np.concatenate(words)
        space = np.zeros(len(letters), bool)
        space[np.cumsum([len(w) for w in words]) - 1] = True
        stats["literary"] += 1
        yield Document(id=str(record["id"]), source="literary", letters=letters,
                       supplied=np.zeros(len(letters), bool), space_after=space)


def _words(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Letters (``…`` as :data:`SEP`) and word ends of a text with spaces."""
    words = [w for w in (letters_of(x.replace("…", "\x00")) for x in text.split()) if len(w)]
    if not words:
        return np.zeros(0, np.uint8), np.zeros(0, bool)
    letters = np.concatenate(words)
    space = np.zeros(len(letters), bool)
    space[np.cumsum([len(w) for w in words]) - 1] = True
    return letters, space


def inscriptions(mirror: Path, fold: int, sample_ids: set[str], stats: dict) -> Iterator[Document]:
    """The training part of the open inscriptions (module doc), one document each."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from inscriptions import read_inscriptions

    for record in read_inscriptions(mirror, fold):
        if record["split"] != "train" or record["id"] in sample_ids:
            stats["inscriptions_left_out"] += 1
            continue
        letters, space = _words(record["text"])
        if not len(letters):
            continue
        stats["inscriptions"] += 1
        yield Document(id=record["id"], source="inscription", letters=letters,
                       supplied=np.zeros(len(letters), bool), space_after=space)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="parallels_index.py")
    ap.add_argument("--mirror", required=True)
    ap.add_argument("--fold", type=int, default=3)
    ap.add_argument("--samples", action="append", default=[], help="frozen samples folder(s): their ids are left out")
    ap.add_argument("--no-literary", dest="literary", action="store_false")
    ap.add_argument("--no-papyri", dest="papyri", action="store_false")
    ap.add_argument("--inscriptions", action="store_true", help="add the inscriptions' training part")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    cpu0, t0 = time.process_time(), time.perf_counter()
    mirror = Path(a.mirror)
    held = {a.fold, (a.fold + 1) % 10}
    sample_ids: set[str] = set()
    for folder in a.samples:
        for f in Path(folder).glob("*.jsonl"):
            sample_ids |= {json.loads(x)["id"] for x in f.read_text(encoding="utf-8").splitlines() if x}
    stats = {"documents": 0, "left_out": 0, "literary": 0, "inscriptions": 0, "inscriptions_left_out": 0}

    def docs() -> Iterator[Document]:
        if a.papyri:
            yield from papyri(mirror, held, sample_ids, stats)
        if a.literary:
            yield from literary(mirror, stats)
        if a.inscriptions:
            yield from inscriptions(mirror, a.fold, sample_ids, stats)

    info = build_index(docs(), a.out)
    out = Path(a.out)
    size = sum(f.stat().st_size for f in out.iterdir())
    record = {"command": "python scripts/parallels_index.py " + " ".join(argv or sys.argv[1:]),
              "held_out_tm_digits": sorted(held), "papyri_documents": stats["documents"],
              "papyri_left_out": stats["left_out"], "literary_documents": stats["literary"],
              "inscription_documents": stats["inscriptions"], "inscriptions_left_out": stats["inscriptions_left_out"],
              **info,
              "bytes": size, "cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - t0}
    (out.parent / f"{out.name}_build.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
