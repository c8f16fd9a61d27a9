"""restore-lm: the bidirectional modified Kneser-Ney character 8-gram of the restorer.

    python scripts/kn_lm.py build --mirror M --fold 3 --samples samples/fold_3 --out training/kn_lm8.npz \\
        [--order 8] [--min-counts 1,1,1,1,1,2,2,2] [--literary-letters 15000000]

Training text, all of it open:

* the DDbDP papyri's **certain** letters (the duke-nlp token table: a token marked complete
  gives its regularised form; a reconstructed one is unknown; a partly reconstructed or
  incomplete one gives its letters outside ``[...]`` where its original and regularised forms
  have as many letters, else it is unknown; ``|gap=…|`` is unknown), every document whose TM
  number ends in ``fold`` or ``fold + 1`` and every sampled document left out;
* open literary text (Perseus, then First1K, then GLAUx, in that order, up to
  ``--literary-letters`` letters);
* the open inscriptions (IOSPE, IIP EpiDoc files) whose id does not end in ``fold`` or
  ``fold + 1``, with every supplied letter turned into a gap (read with ``supplied="gap"``).

Unknown letters cut the text: no n-gram across one is counted. Writes the ``.npz`` and a ``.json``
beside it (its digest, sizes, documents and letters per source, the ids left out, CPU seconds).
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

from stoicheia_spacy.alphabet import ALPHABET
from stoicheia_spacy.restore.kneser_ney import SPACE, UNK, build_kn, kn_digest, save_kn

_BASE = 0x100  # symbol s is written chr(_BASE + s) while a text is assembled
_TABLE = {ord(ch): chr(_BASE + i) for i, ch in enumerate(ALPHABET)} | {ord("ς"): chr(_BASE + ALPHABET.index("σ")),
                                                                      ord("ϲ"): chr(_BASE + ALPHABET.index("σ"))}
_KEEP = re.compile(f"[^{chr(_BASE)}-{chr(_BASE + UNK)}]")
_S_UNK, _S_SPACE = chr(_BASE + UNK), chr(_BASE + SPACE)


def symbols_of(text: str) -> str:
    """Letters of ``text`` (lower case, diacritics dropped, sigma folded) as symbol characters;
    ``\\x00`` marks an unknown letter, every other character is dropped."""
    nfd = unicodedata.normalize("NFD", text).lower().replace("\x00", _S_UNK)
    return _KEEP.sub("", nfd.translate(_TABLE))


def to_array(symbols: str) -> np.ndarray:
    return (np.frombuffer(symbols.encode("utf-16-le"), np.uint16) - _BASE).astype(np.uint8)


def words_array(text: str) -> np.ndarray:
    """A text's words (split on white space) as symbols, one ``SPACE`` between words."""
    return to_array(_S_SPACE.join(w for w in (symbols_of(x) for x in text.split()) if w))


def _token(orig: str, reg: str, completeness: str) -> str:
    """The certain letters of one DDbDP token, as symbols."""
    if completeness == "C":
        return symbols_of(re.sub(r"\|[^|]*\|", "", reg))
    if completeness == "F":
        return _S_UNK
    s = unicodedata.normalize("NFD", orig)
    s = re.sub(r"\|gap=[^|]*\|", "\x00", s)
    s = re.sub(r"\|[^|]*\|", "", s)
    s = re.sub(r"⟦[^⟧]*⟧", "", s)
    s = re.sub(r"\[([^\]]*)\]", lambda m: "\x00" * max(1, len(symbols_of(m.group(1)))), s)
    masked = symbols_of(s)
    letters = symbols_of(re.sub(r"\|[^|]*\|", "", reg))
    if len(masked) == len(letters) and _S_UNK not in letters:
        return "".join(u if u == _S_UNK else c for u, c in zip(masked, letters, strict=True))
    return masked if not letters else _S_UNK


def papyri(mirror: Path, held: set[int], sample_ids: set[str], stats: dict) -> Iterator[np.ndarray]:
    path = mirror / "papyri" / "duke_nlp_2018_ddbdp_tokens.tsv.xz"
    doc, tm, words = None, None, []

    def flush() -> np.ndarray | None:
        if doc is None:
            return None
        digit = int(tm[-1]) if tm and tm[-1].isdigit() else None
        if digit in held or f"ddbdp:{doc}" in sample_ids:
            stats["left_out_documents"] += 1
            return None
        stats["documents"] += 1
        return to_array(_S_SPACE.join(w for w in words if w))

    with lzma.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# newdoc"):
                if (arr := flush()) is not None:
                    yield arr
                m, t = re.search(r"file = (\S+)", line), re.search(r"TM = (\S+)", line)
                doc, tm, words = (m.group(1) if m else None), (t.group(1) if t else None), []
            elif line[:1].isdigit():
                cols = line.rstrip("\n").split("\t")
                if len(cols) > 5:
                    words.append(_token(cols[3], cols[4], cols[5]))
    if (arr := flush()) is not None:
        yield arr


def literary(mirror: Path, budget: int, stats: dict) -> Iterator[np.ndarray]:
    from stoicheia_lab.corpus import iter_records

    used = 0
    for source in ("perseus", "first1k", "glaux"):
        for record in iter_records(source, mirror):
            arr = words_array(record["text"])
            letters = np.cumsum(arr < SPACE)
            arr = arr[: int(np.searchsorted(letters, budget - used, side="right"))]
            used += int((arr < SPACE).sum())
            stats["documents"] += 1
            yield arr
            if used >= budget:
                return


def inscriptions(mirror: Path, held: set[int], sample_ids: set[str], stats: dict) -> Iterator[np.ndarray]:
    from stoicheia_spacy.errors import StoicheiaError
    from stoicheia_spacy.leiden.epidoc import read_epidoc

    for corpus in ("iospe", "iip"):
        for path in sorted((mirror / "epidoc" / corpus).glob("*.xml")):
            m = re.search(r"(\d)\D*$", path.stem)
            if (m and int(m.group(1)) in held) or f"{corpus}:{path.stem}" in sample_ids or path.stem in sample_ids:
                stats["left_out_documents"] += 1
                continue
            try:
                ed = read_epidoc(path, supplied="gap")
            except StoicheiaError:
                stats["unreadable"] += 1
                continue
            parts, cursor = [], 0
            for gap in ed.gaps:  # every gap (lost or supplied) is an unknown letter
                parts += [ed.text[cursor : gap.start], "\x00"]
                cursor = gap.end
            parts.append(ed.text[cursor:])
            text = "".join(parts)
            stats["documents"] += 1
            yield words_array(text)


def read_sources(args: argparse.Namespace) -> tuple[dict[str, list[np.ndarray]], dict]:
    """The training sequences per source and their counts (documents, letters, left out)."""
    mirror = Path(args.mirror)
    held = {args.fold, (args.fold + 1) % 10}
    sample_ids: set[str] = set()
    for folder in args.samples:
        for f in Path(folder).glob("*.jsonl"):
            sample_ids |= {json.loads(x)["id"] for x in f.read_text(encoding="utf-8").splitlines() if x}
    sources = {name: {"documents": 0, "left_out_documents": 0, "unreadable": 0} for name in
               ("papyri", "literary", "inscriptions")}
    seqs: dict[str, list[np.ndarray]] = {
        "papyri": list(papyri(mirror, held, sample_ids, sources["papyri"])) if args.papyri else [],
        "literary": list(literary(mirror, args.literary_letters, sources["literary"])) if args.literary_letters else [],
        "inscriptions": list(inscriptions(mirror, held, sample_ids, sources["inscriptions"])) if args.inscriptions else [],
    }
    for name, arrs in seqs.items():
        sym = np.concatenate(arrs) if arrs else np.zeros(0, np.uint8)
        sources[name]["letters"] = int((sym < SPACE).sum())
        sources[name]["unknown"] = int((sym == UNK).sum())
    return seqs, sources


def build(args: argparse.Namespace) -> int:
    t0, cpu0 = time.perf_counter(), time.process_time()
    seqs, sources = read_sources(args)
    held = {args.fold, (args.fold + 1) % 10}
    t_read = time.process_time() - cpu0
    mins = [int(x) for x in args.min_counts.split(",")] if args.min_counts else None
    lm = build_kn([a for arrs in seqs.values() for a in arrs], order=args.order, min_counts=mins)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_kn(lm, out)
    info = {"command": "python scripts/kn_lm.py " + " ".join(sys.argv[1:]), "order": args.order,
            "min_counts": mins or [1] * args.order, "ngrams_per_order": lm.sizes(), "bytes": out.stat().st_size,
            "sha256": kn_digest(lm), "sources": sources,
            "left_out_rule": f"TM / inscription id digit in {sorted(held)} or id in the samples",
            "cpu_s_read": t_read, "cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - t0}
    out.with_suffix(".json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    print(json.dumps(info, indent=1))
    return 0


def table(args: argparse.Namespace) -> int:
    """Size against dev accuracy of the ngram8 arm for each pruning (the text read once)."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from restore_eval import load_split, query, score

    from stoicheia_spacy.restore.kn_beam import kn_restore
    from stoicheia_spacy.restore.kneser_ney import load_kn

    cpu0 = time.process_time()
    seqs, sources = read_sources(args)
    all_seqs = [a for arrs in seqs.values() for a in arrs]
    dev = load_split(Path(args.samples[0]), "dev", args.dev_per_length)
    queries = [query(r, "known", 2) for r in dev]
    rows = []
    for spec in args.variants:
        mins = [int(x) for x in spec.split(",")]
        t = time.process_time()
        lm = build_kn(all_seqs, order=args.order, min_counts=mins)
        build_s = time.process_time() - t
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kn.npz"
            save_kn(lm, path)
            size = path.stat().st_size
            loaded = load_kn(path)
            t = time.process_time()
            cands = kn_restore(loaded, queries, beam=20, far=10)
            per_gap = (time.process_time() - t) / len(dev)
        o = score(dev, [[c.text for c in cs[:20]] for cs in cands])["overall"]
        rows.append({"min_counts": mins, "ngrams_per_order": lm.sizes(), "bytes": size, "build_cpu_s": build_s,
                     "dev_gaps": len(dev), "dev_cer": o["cer"], "dev_top1": o["top1"], "dev_top20": o["top20"],
                     "cpu_s_per_gap": per_gap})
        print(json.dumps(rows[-1]), flush=True)
    out = {"command": "python scripts/kn_lm.py " + " ".join(sys.argv[1:]), "sources": sources, "variants": rows, "cpu_s": time.process_time() - cpu0}
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kn_lm.py")
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--mirror", required=True)
    b.add_argument("--fold", type=int, default=3)
    b.add_argument("--samples", action="append", default=[], help="frozen samples folder(s): their ids are left out")
    b.add_argument("--order", type=int, default=8)
    b.add_argument("--min-counts", default=None, help="comma-separated raw-count threshold per order")
    b.add_argument("--literary-letters", type=int, default=15_000_000)
    b.add_argument("--no-inscriptions", dest="inscriptions", action="store_false")
    b.add_argument("--no-papyri", dest="papyri", action="store_false",
                   help="no papyri (with --literary-letters 0: the inscriptions' own LM, Run 14)")
    b.add_argument("--out", required=True)
    t = sub.add_parser("table", help="size against dev accuracy for several prunings")
    for a in b._actions[1:]:
        if a.dest not in ("min_counts", "out"):
            t._add_action(a)
    t.add_argument("--variants", nargs="+", required=True, help="min-counts specs, e.g. 1,1,1,1,1,1,2,2")
    t.add_argument("--dev-per-length", type=int, default=30)
    t.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    return build(args) if args.cmd == "build" else table(args)


if __name__ == "__main__":
    raise SystemExit(main())
