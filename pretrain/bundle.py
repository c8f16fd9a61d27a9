"""The portable training bundle: everything a GPU window trains on, in one small folder.

``python -m pretrain bundle --mirror $STOICHEIA_ASSET_MIRROR --out .bundle/`` writes::

    .bundle/manifest.json               counts, sizes and sha256 of every file
    .bundle/pretrain/{train,dev}.planes.xz, {train,dev}.index.npz
                                        the doc-clean corpus (projects/corpus workflow output),
                                        pre-encoded (pretrain.planes)
    .bundle/treebank/fold0_{train,dev}.spacy.xz
                                        fold-0 treebank DocBins (projects/parse `data` workflow),
                                        xz msgpack (`--unpack-treebank DIR` writes .spacy files)
    .bundle/papyri/ddbdp.jsonl.xz       DDbDP documentary text (restoration fine-tuning;
                                        `{"id", "text", "work", ...}` per line)
    .bundle/scansion/silver.jsonl.xz    Norma-screened Hypotactic silver lines
                                        (`{"text", "scan", "macron", "meter"}` per line)

The doc-clean corpus and the treebank folds are read from the workflows' outputs
(``--corpus``, ``--treebank``); papyri and scansion straight from the mirror. The total is
checked against ``--max-mib`` (45 by default, so code + bundle travel in one 64 MiB transfer).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import lzma
import shutil
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stoicheia_lab.corpus.fetch import sha256_of

from stoicheia_spacy.errors import CorpusError, StoicheiaError

from .config import TIER_NAMES
from .planes import write_plane_corpus

log = logging.getLogger(__name__)

FORMAT = "stoicheia-training-bundle/1"
PARTS = ("pretrain", "treebank", "papyri", "scansion")


HOLDOUT_N = 8


def _ngrams(text: str, n: int = HOLDOUT_N) -> set[tuple[str, ...]]:
    from stoicheia_spacy.textnorm import word_keys

    keys = word_keys(text)
    return {tuple(keys[i : i + n]) for i in range(len(keys) - n + 1)}


def read_holdout(path: Path | None) -> tuple[set[str], set[tuple[str, ...]]]:
    """Ids and word 8-grams of held-out text (e.g. a shipped model's ``dev_sample.jsonl``)."""
    ids: set[str] = set()
    grams: set[tuple[str, ...]] = set()
    if path is None or not path.is_file():
        return ids, grams
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            ids.add(str(rec.get("id")))
            grams |= _ngrams(rec["text"])
    return ids, grams


def _work_key(rec: dict[str, Any], shuffle: bool) -> tuple[str, ...]:
    work, rid = str(rec.get("work") or ""), str(rec.get("id") or "")
    if not shuffle:
        return (work, rid)
    return (hashlib.blake2b((work or rid).encode("utf-8"), digest_size=8).hexdigest(), work, rid)


def _doc_clean_records(path: Path, counts: dict[str, int],
                       holdout: tuple[set[str], set[tuple[str, ...]]] = (set(), set()),
                       *, shuffle_works: bool = False) -> Iterator[tuple[Any, int]]:
    from stoicheia_spacy.codec import encode_planes

    ids, grams = holdout
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    # editions of one work from several sources side by side, so that xz finds their shared text;
    # ``shuffle_works`` orders the works by a hash of their name (a capped corpus is then a
    # seeded sample of whole works rather than the first works of the alphabet)
    rows.sort(key=lambda r: _work_key(r, shuffle_works))
    for rec in rows:
        if ids and (str(rec.get("id")) in ids or not grams.isdisjoint(_ngrams(rec["text"]))):
            counts["held_out_dropped"] = counts.get("held_out_dropped", 0) + 1
            continue
        try:
            planes = encode_planes(rec["text"])
        except StoicheiaError:
            counts["codec_rejected"] = counts.get("codec_rejected", 0) + 1
            continue
        tier = str(rec.get("tier") or "gold").lower()
        yield planes, TIER_NAMES.index(tier) if tier in TIER_NAMES else 0


def build_pretrain(corpus: Path, out: Path, *, limit: int | None = None, holdout: Path | None = None,
                   max_bytes: dict[str, int] | None = None) -> dict[str, Any]:
    """Pre-encode ``corpus/doc_clean/{train,dev}.jsonl`` into ``out``; training records that
    share an id or a word 8-gram with ``holdout`` (the text ``bench quality`` scores) are left out.
    ``max_bytes`` caps a split's compressed planes (whole works in a seeded order, see
    ``write_plane_corpus``)."""
    held = read_holdout(holdout)
    result: dict[str, Any] = {}
    for split in ("train", "dev"):
        path = corpus / "doc_clean" / f"{split}.jsonl"
        if not path.is_file():
            raise CorpusError(
                f"{path} is missing: run the corpus workflow first "
                "(cd projects/corpus && python -m weasel run all . --vars.sample 0)"
            )
        counts: dict[str, int] = {}
        cap = (max_bytes or {}).get(split)
        records = _doc_clean_records(path, counts, held if split == "train" else (set(), set()),
                                     shuffle_works=cap is not None)
        if limit is not None:
            records = (r for i, r in enumerate(records) if i < limit)
        result[split] = write_plane_corpus(records, out, split, max_bytes=cap) | counts
    return result


def build_treebank(treebank: Path, out: Path) -> dict[str, Any]:
    """The fold-0 train/dev DocBins of the parse workflow, their msgpack recompressed with xz
    (a third of the size of the zlib ``.spacy`` files; ``unpack_treebank`` restores them)."""
    from spacy.tokens import DocBin

    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, Any] = {}
    for split in ("train", "dev"):
        src = treebank / "fold0" / f"{split}.spacy"
        if not src.is_file():
            raise CorpusError(f"{src} is missing: run the parse data workflow (cd projects/parse && python -m weasel run data)")
        data = src.read_bytes()
        with lzma.open(out / f"fold0_{split}.spacy.xz", "wb", preset=9) as fh:
            fh.write(zlib.decompress(data))
        docbin = DocBin().from_bytes(data)
        counts[split] = {"docs": len(docbin), "tokens": sum(len(t) for t in docbin.tokens)}
    return counts


def unpack_treebank(bundle: str | Path, out: str | Path) -> list[Path]:
    """Write the bundle's fold-0 DocBins as ``out/fold0/{train,dev}.spacy`` (spaCy's format)."""
    written = []
    for split in ("train", "dev"):
        with lzma.open(Path(bundle) / "treebank" / f"fold0_{split}.spacy.xz", "rb") as fh:
            raw = fh.read()
        dst = Path(out) / "fold0" / f"{split}.spacy"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(zlib.compress(raw))
        written.append(dst)
    return written


def _write_jsonl_xz(rows: Iterator[dict[str, Any]], path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with lzma.open(path, "wt", encoding="utf-8", preset=9) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def build_papyri(mirror: Path, out: Path, *, limit: int | None = None) -> dict[str, Any]:
    """DDbDP records of the mirror as JSON lines (xz)."""
    from stoicheia_lab.corpus import iter_records

    letters = 0

    def rows() -> Iterator[dict[str, Any]]:
        nonlocal letters
        for rec in iter_records("ddbdp", mirror, limit):
            letters += len(rec["text"])
            yield rec

    n = _write_jsonl_xz(rows(), out / "ddbdp.jsonl.xz")
    return {"records": n, "characters": letters}


def build_scansion(mirror: Path, out: Path, *, limit: int | None = None) -> dict[str, Any]:
    """Norma-screened silver scansion lines (``stoicheia_lab.scan.silver``)."""
    from stoicheia_lab.scan.norma import read_norma
    from stoicheia_lab.scan.silver import build_silver

    norma = read_norma(mirror / "scansion" / "norma_syllabarum_graecarum.tar.xz")
    lines, counts = build_silver(mirror, norma, max_lines=limit)
    rows = ({"text": x.text, "scan": x.scan.tolist(), "macron": x.macron.tolist(), "meter": x.meter} for x in lines)
    _write_jsonl_xz(rows, out / "silver.jsonl.xz")
    return counts


def write_manifest(out: Path, counts: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    files: dict[str, dict[str, Any]] = {
        str(p.relative_to(out)): {"bytes": p.stat().st_size, "sha256": sha256_of(p)}
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }
    manifest = {
        "format": FORMAT,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": settings,
        "counts": counts,
        "files": files,
        "total_bytes": sum(f["bytes"] for f in files.values()),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def verify_bundle(bundle: str | Path) -> dict[str, Any]:
    """Check every file of a bundle against its manifest (``CorpusError`` on a mismatch)."""
    bundle = Path(bundle)
    path = bundle / "manifest.json"
    if not path.is_file():
        raise CorpusError(f"{bundle} is not a training bundle (no manifest.json)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise CorpusError(f"{path}: unknown format {manifest.get('format')!r}")
    for rel, meta in manifest["files"].items():
        f = bundle / rel
        if not f.is_file() or f.stat().st_size != meta["bytes"] or sha256_of(f) != meta["sha256"]:
            raise CorpusError(f"{f}: missing or does not match the manifest")
    return manifest


def is_bundle(path: str | Path) -> bool:
    return (Path(path) / "manifest.json").is_file()


def build_bundle(
    out: str | Path,
    *,
    mirror: str | Path,
    corpus: str | Path,
    treebank: str | Path,
    parts: Sequence[str] = PARTS,
    limit: int | None = None,
    max_mib: float = 45.0,
    holdout: str | Path | None = None,
) -> dict[str, Any]:
    """Build the bundle's ``parts`` into ``out`` and write its manifest."""
    out, mirror = Path(out), Path(mirror)
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise CorpusError(f"unknown bundle parts {sorted(unknown)}; known: {PARTS}")
    out.mkdir(parents=True, exist_ok=True)
    old = json.loads((out / "manifest.json").read_text(encoding="utf-8")) if (out / "manifest.json").is_file() else {}
    counts: dict[str, Any] = dict(old.get("counts", {}))  # parts built earlier keep their counts
    seconds: dict[str, float] = dict(old.get("settings", {}).get("seconds", {}))
    for part in parts:
        t0 = time.perf_counter()
        shutil.rmtree(out / part, ignore_errors=True)
        if part == "pretrain":
            counts[part] = build_pretrain(Path(corpus), out / part, limit=limit,
                                          holdout=Path(holdout) if holdout else None)
        elif part == "treebank":
            counts[part] = build_treebank(Path(treebank), out / part)
        elif part == "papyri":
            counts[part] = build_papyri(mirror, out / part, limit=limit)
        else:
            counts[part] = build_scansion(mirror, out / part, limit=limit)
        seconds[part] = round(time.perf_counter() - t0, 1)
        log.info("bundle part %s: %s (%.0f s)", part, counts[part], seconds[part])
    built = sorted(set(old.get("settings", {}).get("parts", [])) | set(parts), key=PARTS.index)
    manifest = write_manifest(out, counts, {"parts": built, "limit": limit, "seconds": seconds,
                                            "holdout": str(holdout) if holdout else None})
    mib = manifest["total_bytes"] / 2**20
    if mib > max_mib:
        raise CorpusError(f"the bundle is {mib:.1f} MiB, over the {max_mib} MiB limit")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pretrain bundle", description=__doc__.splitlines()[0])
    p.add_argument("--mirror", help="the open-data mirror (papyri, scansion)")
    p.add_argument("--out", default=".bundle")
    p.add_argument("--corpus", default="projects/corpus/corpus", help="corpus workflow output (doc_clean/)")
    p.add_argument("--treebank", default="projects/parse/corpus", help="parse data workflow output (fold0/)")
    p.add_argument("--parts", default=",".join(PARTS))
    p.add_argument("--limit", type=int, help="records per part (tests and samples)")
    p.add_argument("--holdout", default="assets/models/grc_stoicheia_doc_clean/dev_sample.jsonl",
                   help="held-out text kept out of the training planes (bench quality's sample); '' for none")
    p.add_argument("--max-mib", type=float, default=45.0)
    p.add_argument("--verify", action="store_true", help="only check an existing bundle against its manifest")
    p.add_argument("--unpack-treebank", metavar="DIR", help="write the bundle's DIR/fold0/{train,dev}.spacy and stop")
    args = p.parse_args(list(argv or []))
    try:
        if args.unpack_treebank:
            print([str(p) for p in unpack_treebank(args.out, args.unpack_treebank)])
            return 0
        if args.verify:
            manifest = verify_bundle(args.out)
        else:
            if not args.mirror:
                p.error("--mirror is required to build a bundle")
            manifest = build_bundle(
                args.out, mirror=args.mirror, corpus=args.corpus, treebank=args.treebank,
                parts=[s.strip() for s in args.parts.split(",") if s.strip()], limit=args.limit,
                max_mib=args.max_mib, holdout=args.holdout or None,
            )
    except StoicheiaError as exc:
        print(f"error: {exc}")
        return 2
    print(json.dumps({"total_mib": round(manifest["total_bytes"] / 2**20, 2), "counts": manifest["counts"]}, ensure_ascii=False))
    return 0
