"""restore-eval: frozen gap samples from held-out papyri in the published formats, the arms,
CER / top-1 / top-20 per L with known, hidden and range widths, McNemar tests, a width prior
and per-bucket temperatures fitted on dev, ECE, speed, a markdown table and plots.

    python scripts/restore_eval.py samples --mirror M --fold 3 --per-length 300 --out samples/fold_3
    python scripts/restore_eval.py convert --samples samples/fold_3      # old records -> the formats below
    python scripts/restore_eval.py evaluate --samples samples/fold_3 --mirror M --out results/fold_3
        [--overlay DIR] [--arms fused,finetuned,pretrained,random_init,ngram] [--lm LM.npz] [--per-length N]
        [--only-known | --decode SPLIT:MODE,...] [--shard K/N]   # parallel workers filling OUT/cache

Sample files (per split): ``{split}.jsonl`` in the published Ithaca record format
``{id, L, start, gold, text}`` (``text`` holds ``?`` × L at the target, ``-`` for real lacunae)
and ``{split}.chat.jsonl`` in the chat format of the recently-edited-documents release
(``[N letters missing]``, N = letters only). Documents of ``iter_records("ddbdp", mirror)`` (or
``--corpus`` JSON lines ``{id, text}``) whose identifier (TM / PHI number) ends in ``fold`` (test)
or ``(fold + 1) % 10`` (dev); one gap per document, L = 1…10 in equal numbers, fixed seed; the
gap is a run of L characters of Greek letters and single spaces (spaces count).

Arms: ``fused`` (the finetuned backbone fused with the character n-gram LM of ``--lm`` at
``--lm-weight``, :class:`~stoicheia_spacy.restore.fusion.FusedScorer`: the shipped default),
``finetuned`` (the backbone with the restoration overlay of ``--overlay``, default the
shipped one), ``pretrained`` (the backbone, zero-shot), ``random_init`` (same shape, random
weights: the control), ``ngram`` (a 6-gram LM on the training papyri, same beam) and ``lm``
(the fused arm's n-gram LM of ``--lm`` alone, same beam). Widths:
``known`` (L), ``hidden`` (unknown: letter counts 1..max_letters enumerated), ``range`` (L±slack),
``chat`` (N letters, word breaks free). Hidden and range candidates are ranked with the width prior
fitted on dev (rank rule and length bonus by dev CER, prior = dev width frequencies); temperatures
and the top candidate's confidence (Platt scaling) per width bucket are fitted on dev and ECE is
reported on dev and test; ``--lm-weights`` refits the fused arm's in-beam LM weight on dev. Scores: CER on bare
letters (diacritics stripped, sigma folded, spaces count), and the Levenshtein CER under the
release's normalisation (``release``). Decodings are cached under OUT/cache, so an interrupted run
resumes. ``calibration.json`` holds the fitted restorer settings (the shipped restorer's ``[components.stoicheia_restorer.settings]`` in config.cfg).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stoicheia_spacy.restore.formats import (
    bare,
    ithaca_text,
    parse_chat,
    release_cer,
    release_match,
    to_chat,
)
from stoicheia_spacy.restore.ngram_lm import NgramScorer  # the n-gram arm

GAP_RE = re.compile(r"^[\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f]+(?: [\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f]+)*$")
ARMS = ("fused", "finetuned", "pretrained", "random_init", "ngram", "lm", "ngram8", "combined")
MODES = ("known", "hidden", "range", "chat")


def make_samples(mirror: str, fold: int, per_length: int, seed: int, limit: int | None,
                 corpus: str | None = None) -> dict[str, list[dict]]:
    from finetune import documents, tm_digit

    rng = random.Random(seed)
    want = {"test": fold, "dev": (fold + 1) % 10}
    quota = {"test": per_length, "dev": max(1, per_length // 2)}
    out: dict[str, list[dict]] = {"test": [], "dev": []}
    for record in documents(mirror, limit, corpus):
        digit = tm_digit(record)
        split = next((s for s, d in want.items() if d == digit), None)
        if split is None or len(out[split]) >= quota[split] * 10:
            continue
        L = len(out[split]) % 10 + 1
        text = record["text"]
        for _ in range(20):
            if len(text) <= L + 20:
                break
            start = rng.randrange(10, len(text) - L)
            gold = text[start : start + L]
            if GAP_RE.match(gold) and len(gold) == L and not unicodedata.combining(text[start + L : start + L + 1] or " "):
                itext, istart = ithaca_text(text, start, L)
                out[split].append({"id": record["id"], "L": L, "start": istart, "gold": gold, "text": itext})
                break
        if all(len(out[s]) >= quota[s] * 10 for s in out):
            break
    return out


def fit_ngram(mirror: str, fold: int, limit: int) -> object:
    from finetune import tm_digit
    from stoicheia_lab.corpus import iter_records

    from stoicheia_spacy.codec import encode_planes
    from stoicheia_spacy.restore.char_ngram import SPACE, CharNgramLM

    seqs = []
    for record in iter_records("ddbdp", mirror, limit):
        if tm_digit(record) in (fold, (fold + 1) % 10):
            continue
        p = encode_planes(record["text"])
        final = p.boundary > 0
        seqs.append(np.insert(p.letters.astype(np.int64), np.flatnonzero(final) + 1, SPACE))
    return CharNgramLM(order=6).fit(seqs)


def recorded_argv(argv: list[str]) -> list[str]:
    """``argv`` as a metrics file records it: the value of ``--mirror`` that is
    ``$STOICHEIA_ASSET_MIRROR`` is written as that name, not as this machine's path."""
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    return ["$STOICHEIA_ASSET_MIRROR" if mirror and a == mirror and i and argv[i - 1] == "--mirror" else a
            for i, a in enumerate(argv)]


class KnArm:
    """The ``ngram8`` arm: the bidirectional Kneser-Ney 8-gram's own two-sided beam
    (:func:`~stoicheia_spacy.restore.kn_beam.kn_restore`), candidates ranked by ``fwd + rev``."""

    def __init__(self, path: str, beam: int, far: int, max_letters: int) -> None:
        from stoicheia_spacy.restore.kneser_ney import load_kn

        self.lm, self.beam, self.far, self.max_letters = load_kn(path), beam, far, max_letters
        self.forwards = 0

    def restore(self, queries: list) -> list[list[tuple[str, float, int]]]:
        from stoicheia_spacy.restore.kn_beam import kn_restore

        res = kn_restore(self.lm, queries, beam=self.beam, far=self.far, max_letters=self.max_letters)
        return [[(c.text, c.score, c.width) for c in cands] for cands in res]


def combined_runs(runs: dict, splits: dict, args: argparse.Namespace, weights: dict) -> dict:
    """The ``combined`` arm's runs: per run of both the backbone (``finetuned``) and ``ngram8``, the
    union of their candidates scored by :func:`~stoicheia_spacy.restore.combine.combine` with the
    width bucket's weights."""
    from stoicheia_spacy.restore.combine import combine, weights_for

    lm = knlm(args.kn_lm)
    out = {}
    for (split, arm, mode), run in runs.items():
        if arm != "ngram8":
            continue
        bb = runs.get((split, "finetuned", mode))
        if bb is None:  # no bucket weighs the backbone (else its run is required)
            if any(weights_for(weights, bucket_of(r, mode))[0] > 0 for r in splits[split]):
                continue
            bb = {"cands": [[] for _ in run["cands"]], "cpu_s": 0.0, "wall_s": 0.0, "forwards": 0}
        cands = []
        for r, b, g in zip(splits[split], bb["cands"], run["cands"], strict=True):
            q = query(r, mode, args.slack)
            kn = knfeatures(lm, q, g, args.kn_far)
            w = weights_for(weights, bucket_of(r, mode))
            cands.append([list(c) for c in combine(lm, q, [tuple(x) for x in b], kn, w, far=args.kn_far)])
        out[(split, "combined", mode)] = {"cands": cands, "cpu_s": bb["cpu_s"] + run["cpu_s"],
                                          "wall_s": bb["wall_s"] + run["wall_s"], "forwards": bb["forwards"],
                                          "n": run["n"]}
    return out


@functools.lru_cache(maxsize=2)
def knlm(path: str) -> Any:
    from stoicheia_spacy.restore.kneser_ney import load_kn

    return load_kn(path)


def knfeatures(lm: Any, q: Any, cands: list, far: int) -> list:
    """The ``ngram8`` run's candidates of one gap with their ``fwd`` / ``rev`` scores again."""
    from stoicheia_spacy.restore.kn_beam import (
        KnCandidate,
        gap_symbols,
        score_texts,
        text_to_symbols,
    )

    if not cands:
        return []
    left, right = gap_symbols(q)
    fwd, rev = score_texts(lm, left, right, [text_to_symbols(c[0]) for c in cands], far)
    return [KnCandidate(c[0], int(c[2]), float(f), float(r)) for c, f, r in zip(cands, fwd, rev, strict=True)]


def fit_combination(runs: dict, splits: dict, args: argparse.Namespace) -> tuple[dict, dict]:
    """The ``combined`` arm's weights per width bucket of the known-width dev gaps (a bucket with
    ``--kn-min-gaps`` of them; ``default`` pooled, backbone weight 0 unless ``--kn-default-backbone``),
    by dev CER of the top candidate over a grid (backbone weight, right-to-left weight; fwd fixed at 1;
    length 0 for one known width), and the grid's dev CER table. Each gap's union and its features are
    computed once (:func:`~stoicheia_spacy.restore.combine.combine` with unit weights)."""
    from stoicheia_spacy.restore.combine import combine

    dev = splits["dev"]
    lm = knlm(args.kn_lm)
    ng = runs[("dev", "ngram8", "known")]["cands"]
    bb_run = runs.get(("dev", "finetuned", "known"))  # absent when only backbone weight 0 is tried
    bb = bb_run["cands"] if bb_run else [[] for _ in ng]
    grid = [(b, rv) for b in (args.kn_backbone_weights if bb_run else [0.0]) for rv in (0.5, 1.0, 1.5)]
    cer = np.zeros((len(grid), len(dev)))
    for i, r in enumerate(dev):
        q = query(r, "known", args.slack)
        feats = knfeatures(lm, q, ng[i], args.kn_far)
        backbone = [tuple(x) for x in bb[i]]
        # the union's features, read back from combine() with one weight at a time
        rows: dict[str, list[float]] = {}
        for k, w in enumerate(((1.0, 0, 0, 0), (1.0, 1.0, 0, 0), (1.0, 0, 1.0, 0))):
            for text, value, _ in combine(lm, q, backbone, feats, w, far=args.kn_far):
                rows.setdefault(text, [0.0, 0.0, 0.0])[k] = value - (rows[text][0] if k else 0.0)
        kn_only = {c.text for c in feats}  # a backbone weight of 0 consults the n-gram's candidates only
        texts = list(rows)
        X = np.array([rows[t] for t in texts]) if texts else np.zeros((0, 3))
        costs = np.array([ours_cer(t, r["gold"]) for t in texts]) if texts else np.zeros(0)
        only = np.array([t in kn_only for t in texts], dtype=bool)
        for gi, (b, rv) in enumerate(grid):
            if not len(texts):
                cer[gi, i] = 1.0
                continue
            score = b * X[:, 0] + X[:, 1] + rv * X[:, 2]
            if b == 0:
                score = np.where(only, score, -np.inf)
            cer[gi, i] = costs[int(np.argmax(score))] if np.isfinite(score).any() else 1.0
    buckets = [bucket_of(r, "known") for r in dev]
    table, weights = {}, {}
    pooled = cer.mean(1)
    # ``default`` also serves the hidden and range widths, whose backbone decodings are neither fitted
    # nor affordable here (enumerated widths): it weighs the backbone only with --kn-default-backbone
    allowed = np.array([args.kn_default_backbone or b == 0 for b, _ in grid])
    best = int(np.argmin(np.where(allowed, pooled, np.inf)))
    weights["default"] = [grid[best][0], 1.0, grid[best][1], 0.0]
    for bucket in sorted(set(buckets)):
        sel = np.array([b == bucket for b in buckets])
        per = cer[:, sel].mean(1)
        table[bucket] = {f"backbone {b:g}, rev {rv:g}": 100 * float(c) for (b, rv), c in zip(grid, per, strict=True)}
        if sel.sum() >= args.kn_min_gaps:  # ties go to the first (the smallest backbone weight)
            k = int(np.argmin(per))
            weights[bucket] = [grid[k][0], 1.0, grid[k][1], 0.0]
    table["pooled"] = {f"backbone {b:g}, rev {rv:g}": 100 * float(c) for (b, rv), c in zip(grid, pooled, strict=True)}
    return weights, table


def is_ithaca(record: dict) -> bool:
    s, L = record["start"], record["L"]
    return record["text"][s : s + L] == "?" * L


def to_ithaca(record: dict) -> dict:
    if is_ithaca(record):
        return record
    text, start = ithaca_text(record["text"], record["start"], record["L"])
    return {**record, "start": start, "text": text}


def write_split(out: Path, split: str, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{split}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (out / f"{split}.chat.jsonl").write_text(
        "".join(json.dumps(to_chat(r), ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def load_split(samples: Path, split: str, per_length: int | None) -> list[dict]:
    rows = [to_ithaca(json.loads(x)) for x in (samples / f"{split}.jsonl").read_text(encoding="utf-8").splitlines() if x]
    if per_length:
        rows = [r for L in range(1, 11) for r in [t for t in rows if t["L"] == L][:per_length]]
    return rows


def query(record: dict, mode: str, slack: int):
    """The beam-search query of a record under a width mode."""
    from stoicheia_spacy.leiden import parse_gaps
    from stoicheia_spacy.restore import build_queries

    letters = None
    if mode == "chat":
        text, _, letters, _ = parse_chat(to_chat(record))
    else:
        text = record["text"]
    [target] = [t for t in build_queries(parse_gaps(text)) if t.gap.kind == "target"]
    L = record["L"]
    widths = {"known": (L,), "hidden": None, "range": tuple(range(max(1, L - slack), L + slack + 1)),
              "chat": (L,)}[mode]
    return dataclasses.replace(target.query, widths=widths, letters=letters)


def decode(scorer, records: list[dict], mode: str, args: argparse.Namespace, cache: Path) -> dict:
    """Candidates ``[(text, logprob, width)]`` per record (all kept for re-ranking), CPU seconds."""
    from stoicheia_spacy.restore import beam_search

    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    if getattr(args, "shard", None):  # a worker: every N-th record from K into its own cache file
        k, n = args.shard
        records, cache = records[k::n], cache.with_name(f"{cache.stem}.shard{k}of{n}.json")
        if cache.is_file():
            return json.loads(cache.read_text(encoding="utf-8"))
    elif merged := merge_shards(cache, len(records)):
        return merged
    if args.cached_only:
        return None
    scorer = scorer()  # a factory: models are built only for runs not cached yet
    out: list = []
    cpu, wall, forwards0 = time.process_time(), time.perf_counter(), getattr(scorer, "forwards", 0)
    step = max(args.chunk, len(records) // 20 // args.chunk * args.chunk)  # about 20 progress lines a run
    for i in range(0, len(records), args.chunk):
        qs = [query(r, mode, args.slack) for r in records[i : i + args.chunk]]
        if hasattr(scorer, "restore"):  # the n-gram's own beam
            out.extend(scorer.restore(qs))
        else:
            res = beam_search(scorer, qs, beam=args.beam, n_best=200, context=args.window,
                              max_letters=args.max_letters, unmask=args.unmask, final_forward=not args.no_final_forward)
            out.extend([[(c.text, c.logprob, c.width) for c in cands] for cands in res])
        if (i + args.chunk) % step == 0 or len(out) == len(records):
            used = time.process_time() - cpu
            print(f"{cache.stem}: {len(out)}/{len(records)} gaps, {used / len(out):.2f} CPU-s/gap, "
                  f"{time.perf_counter() - wall:.0f} s", file=sys.stderr, flush=True)
    data = {"cands": out, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
            "forwards": getattr(scorer, "forwards", 0) - forwards0, "n": len(records)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return data


def rerank_top(cands: list) -> str:
    """The top candidate's text of a known-width run (plain ranking), "" when there is none."""
    from stoicheia_spacy.restore import WidthPrior
    from stoicheia_spacy.restore.calibration import rerank

    top = rerank([tuple(c) for c in cands], WidthPrior())[:1]
    return top[0][0] if top else ""


@functools.lru_cache(maxsize=2)
def joint_rescorer(lm: str, window: int) -> Any:
    """The n-gram LM's joint log-probability of a filled window (weight 1), loaded once per run."""
    from stoicheia_spacy.restore.ngram_lm import LMRescorer, load_lm

    return LMRescorer(load_lm(lm), 1.0, window)


def rescore_fused(runs: dict, splits: dict, args: argparse.Namespace, grid: bool = True) -> dict:
    """Add ``--lm-rescore`` × the n-gram LM's joint log-probability of each filled window to the
    fused arm's candidates (as the restorer does, :class:`~stoicheia_spacy.restore.ngram_lm.LMRescorer`),
    in place; returns the dev CER per width mode for weights 0, 0.5, 1, 2 (the check of the weight),
    or with ``grid=False`` the runs themselves."""
    from stoicheia_spacy.restore import WidthPrior
    from stoicheia_spacy.restore.calibration import rerank
    joint = joint_rescorer(args.lm, args.window)
    table: dict = {}
    for (split, arm, mode), run in runs.items():
        if arm != "fused":
            continue
        records = splits[split]
        extra = [joint(query(r, mode, args.slack), [c[0] for c in cands]) if cands else []
                 for r, cands in zip(records, run["cands"], strict=True)]
        if split == "dev" and grid:
            prior = WidthPrior("total", 0.2, ()) if mode in ("hidden", "range") else WidthPrior()
            for w in (0.0, 0.5, 1.0, 2.0):
                tops = [rerank([(c[0], c[1] + w * e, c[2]) for c, e in zip(cands, ex, strict=True)], prior)[:1]
                        for cands, ex in zip(run["cands"], extra, strict=True)]
                table.setdefault(mode, {})[str(w)] = 100 * float(np.mean(
                    [ours_cer(t[0][0] if t else "", r["gold"]) for t, r in zip(tops, records, strict=True)]))
        run["cands"] = [[(c[0], c[1] + args.lm_rescore * e, c[2]) for c, e in zip(cands, ex, strict=True)]
                        for cands, ex in zip(run["cands"], extra, strict=True)]
    return table if grid else runs


def merge_shards(cache: Path, n_records: int) -> dict | None:
    """The shard files ``{stem}.shard{K}of{N}.json`` of one run merged back into record order and
    written to ``cache`` (CPU seconds summed, wall seconds the slowest shard's), or None when the
    shards of no N are all there."""
    for n in sorted({int(m.group(1)) for f in cache.parent.glob(f"{cache.stem}.shard*of*.json")
                     if (m := re.search(r"of(\d+)\.json$", f.name))}):
        files = [cache.with_name(f"{cache.stem}.shard{k}of{n}.json") for k in range(n)]
        if not all(f.is_file() for f in files):
            continue
        parts = [json.loads(f.read_text(encoding="utf-8")) for f in files]
        if sum(p["n"] for p in parts) != n_records:
            continue
        cands = [parts[i % n]["cands"][i // n] for i in range(n_records)]
        data = {"cands": cands, "cpu_s": sum(p["cpu_s"] for p in parts), "wall_s": max(p["wall_s"] for p in parts),
                "forwards": sum(p["forwards"] for p in parts), "n": n_records, "shards": n}
        cache.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return data
    return None


def ours_cer(pred: str, gold: str) -> float:
    from stoicheia_lab.scoring.cer import cer

    return cer(bare(pred), bare(gold))


def score(records: list[dict], tops: list[list[str]]) -> dict:
    """CER (bare letters) and release-normalised CER, top-1/top-20, overall and per L."""
    rows = []
    for r, cands in zip(records, tops, strict=True):
        pred = cands[0] if cands else ""
        g = bare(r["gold"])
        rows.append((r["L"], ours_cer(pred, r["gold"]), release_cer(pred, r["gold"]),
                     bool(cands) and bare(pred) == g, any(bare(c) == g for c in cands[:20]),
                     release_match(pred, r["gold"])))
    def agg(sel: list) -> dict:
        a = np.array([x[1:] for x in sel], dtype=float)
        return {"n": len(sel), "cer": 100 * a[:, 0].mean(), "cer_release": 100 * a[:, 1].mean(),
                "top1": 100 * a[:, 2].mean(), "top20": 100 * a[:, 3].mean(), "top1_release": 100 * a[:, 4].mean()}
    return {"overall": agg(rows), "per_L": {L: agg([x for x in rows if x[0] == L]) for L in sorted({x[0] for x in rows})}}


def correct_top1(records: list[dict], tops: list[list[str]]) -> np.ndarray:
    return np.array([bool(c) and bare(c[0]) == bare(r["gold"]) for r, c in zip(records, tops, strict=True)])


def bucket_of(record: dict, mode: str) -> str:
    from stoicheia_spacy.restore import width_bucket

    return {"hidden": "unknown", "range": "range"}.get(mode) or width_bucket((record["L"],))


def sha256_of(*files: Path, h: Any = None) -> Any:
    """A sha256 fed with the files' bytes (continuing ``h`` when given); ``.hexdigest()[:10]``
    names the weights a cached run was decoded with."""
    h = h or hashlib.sha256()
    for f in files:
        with open(f, "rb") as handle:
            while block := handle.read(1 << 22):
                h.update(block)
    return h


def records_digest(records: list[dict]) -> str:
    """A short sha256 of the gap records (cached runs are reused only on the same samples)."""
    return hashlib.sha256(json.dumps(records, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:10]


def overlay_file(overlay: Path) -> Path:
    from stoicheia_spacy.backbone.overlay import OVERLAY_NAME

    return overlay / OVERLAY_NAME if overlay.is_dir() else overlay


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished worker processes."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_workers(pending: list[tuple[str, str, str]], args: argparse.Namespace, logs: Path) -> None:
    """Decode the pending runs in ``args.workers`` processes at once: each model run split into
    that many ``--shard`` workers (the n-gram arm in one), filling the cache that the caller then
    merges and scores. Progress goes to ``logs/``; a failed worker stops the evaluation."""
    tasks = []
    for split, arm, mode in pending:
        n = 1 if arm in ("ngram", "lm", "ngram8") else args.workers
        for k in range(n):
            name = f"{split}_{arm}_{mode}" + (f".shard{k}of{n}" if n > 1 else "")
            cmd = [sys.executable, str(Path(__file__).resolve()), *args.argv, "--workers", "1", "--arms", arm,
                   "--decode", f"{split}:{mode}", *(["--shard", f"{k}/{n}"] if n > 1 else [])]
            tasks.append((name, cmd))
    if not tasks:
        return
    logs.mkdir(parents=True, exist_ok=True)
    print(f"decoding {len(pending)} runs in {len(tasks)} worker processes, {args.workers} at a time "
          f"(progress: {logs}/*.log)", file=sys.stderr, flush=True)
    start, done = time.perf_counter(), [0]

    def work(task: tuple[str, list[str]]) -> None:
        name, cmd = task
        with open(logs / f"{name}.log", "w", encoding="utf-8") as log:
            code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
        if code:
            raise SystemExit(f"worker {name} failed (exit {code}); see {logs / (name + '.log')}")
        done[0] += 1
        print(f"[{done[0]}/{len(tasks)}] {name} done, {time.perf_counter() - start:.0f} s",
              file=sys.stderr, flush=True)

    with ThreadPoolExecutor(args.workers) as pool:
        list(pool.map(work, tasks))


def evaluate(args: argparse.Namespace) -> int:
    from stoicheia_lab.scoring.calibration import expected_calibration_error, reliability_diagram
    from stoicheia_lab.scoring.stats import mcnemar_exact

    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.backbone import StoicheiaEncoder, load_backbone
    from stoicheia_spacy.restore import ModelScorer, WidthPrior
    from stoicheia_spacy.restore.calibration import (
        fit_confidence,
        fit_prior,
        fit_temperatures,
        fit_threshold,
        rerank,
        top_confidence,
        top_probability,
    )

    torch.set_num_threads(args.threads)
    samples = Path(args.samples)
    test = load_split(samples, "test", args.per_length)
    dev = load_split(Path(args.dev_samples) if args.dev_samples else samples, "dev", args.dev_per_length)
    arms = args.arms.split(",") if args.arms else [a for a in ARMS if (a not in ("fused", "lm") or args.lm)
                                                   and (a not in ("ngram8", "combined") or args.kn_lm)]
    if set(arms) - set(ARMS) or not arms:
        raise SystemExit(f"unknown arms {sorted(set(arms) - set(ARMS))}; choose from {ARMS}")
    out = Path(args.out)
    fast = (f"_u{args.unmask}" if args.unmask > 1 else "") + ("_nf" if args.no_final_forward else "")
    cache = out / "cache" / f"b{args.beam}_w{args.window}_s{args.slack}_{args.dtype}{fast}"
    model_dir = Path(args.model or str(default_model_dir()))
    pretrained = load_backbone(str(model_dir))
    overlay = Path(args.overlay) if args.overlay else default_model_dir() / "restorer"
    model_hash = sha256_of(*sorted(model_dir.glob("*.safetensors")))  # the model's bytes are read once
    weights = model_hash.hexdigest()[:10]
    with_overlay = sha256_of(overlay_file(overlay), h=model_hash.copy()).hexdigest()[:10]
    lm_hash = sha256_of(Path(args.lm)).hexdigest()[:10] if args.lm else ""
    if {"fused", "lm"} & set(arms) and not args.lm:
        raise SystemExit("the fused and lm arms need --lm (the character n-gram LM, `make restore-lm`)")

    def fused_tag(weight: float) -> str:
        return f"fused-{with_overlay}-lm{lm_hash}x{weight:g}" if args.lm else f"fused-{with_overlay}-lmnone"

    tags = {"fused": fused_tag(args.lm_weight), "finetuned": f"finetuned-{with_overlay}",
            "pretrained": f"pretrained-{weights}", "random_init": f"random_init-{weights}",
            "ngram": f"ngram{args.ngram_docs}", "lm": f"lm{lm_hash}", "combined": "combined",
            "ngram8": f"ngram8-{sha256_of(Path(args.kn_lm)).hexdigest()[:10] if args.kn_lm else 'none'}"
                      f"-b{args.kn_beam}f{args.kn_far}m{args.max_letters}"}
    if {"ngram8", "combined"} & set(arms) and not args.kn_lm:
        raise SystemExit("the ngram8 and combined arms need --kn-lm (the Kneser-Ney 8-gram, `make restore-lm`)")
    splits = {"test": test, "dev": dev}

    def cache_file(split: str, arm: str, mode: str) -> Path:
        """One run's cache: named by the split's records, the arm's weights and the width mode."""
        return cache / f"{split}{len(splits[split])}-{records_digest(splits[split])}_{tags[arm]}_{mode}.json"

    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype]

    def scorer(arm: str):
        if arm == "pretrained":
            return ModelScorer(pretrained.to(dtype))
        if arm in ("finetuned", "fused"):
            from stoicheia_spacy.backbone.overlay import apply_overlay, read_overlay

            model = ModelScorer(apply_overlay(pretrained, *read_overlay(overlay)).to(dtype))
            if arm == "finetuned" or args.lm_weight == 0:  # (fused at weight 0: the LM only rescores)
                return model
            from stoicheia_spacy.restore.fusion import FusedScorer
            from stoicheia_spacy.restore.ngram_lm import load_lm

            return FusedScorer(model, NgramScorer(load_lm(args.lm)), args.lm_weight)
        if arm == "lm":
            from stoicheia_spacy.restore.ngram_lm import load_lm

            return NgramScorer(load_lm(args.lm))
        if arm == "random_init":
            torch.manual_seed(0)
            return ModelScorer(StoicheiaEncoder(pretrained.config).to(dtype))
        if arm == "ngram8":
            return KnArm(args.kn_lm, args.kn_beam, args.kn_far, args.max_letters)
        return NgramScorer(fit_ngram(args.mirror, args.fold, args.ngram_docs))

    main_arm = "combined" if "combined" in arms else next(
        (a for a in arms if a in ("fused", "finetuned", "pretrained")), arms[0])
    weight_fit = None
    if args.lm_weights and "fused" in arms and not (args.decode or args.only_known):
        # the in-beam weight, fitted on dev (known widths, rescored as the restorer does); the
        # workers below are then told the chosen weight
        weight_fit = {}
        for w in sorted({float(x) for x in args.lm_weights.split(",")}):
            args.lm_weight, tags["fused"] = w, fused_tag(w)
            run = decode(lambda: scorer("fused"), dev, "known", args, cache_file("dev", "fused", "known"))
            if run is None:  # --cached-only and not decoded yet
                continue
            rescored = rescore_fused({("dev", "fused", "known"): dict(run)}, splits, args, grid=False)
            tops = [rerank_top(c) for c in rescored[("dev", "fused", "known")]["cands"]]
            weight_fit[str(w)] = 100 * float(np.mean([ours_cer(t, r["gold"]) for t, r in zip(tops, dev, strict=True)]))
            print(f"in-beam LM weight {w:g}: dev CER {weight_fit[str(w)]:.2f}", file=sys.stderr, flush=True)
        if not weight_fit:
            raise SystemExit("--lm-weights: no dev decoding to fit the weight on")
        best = min(weight_fit, key=lambda k: (weight_fit[k], abs(float(k) - 1.0)))
        args.lm_weight, tags["fused"] = float(best), fused_tag(float(best))
        args.argv = [*args.argv, "--lm-weight", best]  # the workers decode at the fitted weight
    if args.only_known:  # decode the listed arms' known widths into the cache (a parallel worker), then stop
        for arm in arms:
            decode(lambda arm=arm: scorer(arm), test, "known", args, cache_file("test", arm, "known"))
        return 0
    built: dict = {}

    def sc():  # the main arm's scorer, built once
        if "main" not in built:
            built["main"] = scorer(main_arm)
        return built["main"]

    if args.decode:  # decode only these SPLIT:MODE runs of the main arm into the cache (a parallel worker)
        for item in args.decode.split(","):
            split, mode = item.split(":")
            decode(sc, splits[split], mode, args, cache_file(split, main_arm, mode))
        return 0
    # dev first (the prior and the temperatures), then the main arm's widths, then the other arms
    main_modes = args.modes.split(",")
    plan = [("dev", main_arm, m) for m in ("known", "hidden", "range") if m in main_modes]
    plan += [("test", main_arm, m) for m in MODES if m in main_modes]
    plan += [("test", arm, "known") for arm in arms if arm != main_arm]
    if "combined" in arms:  # a derived arm: its two decoders' runs, dev known widths for the fit
        plan = [("dev", "finetuned", "known"), ("dev", "ngram8", "known")] + plan
        plan = [(s, a, m) for s, arm, m in plan for a in (("finetuned", "ngram8") if arm == "combined" else (arm,))]
        plan = list(dict.fromkeys(plan))
    fitted = None
    if "combined" in arms and not args.cached_only:  # fit the combination on dev first: its backbone runs
        # are decoded only when some bucket weighs the backbone
        wanted = [("dev", "ngram8", "known")] + ([("dev", "finetuned", "known")]
                                                 if max(args.kn_backbone_weights) > 0 else [])
        dev_runs = {p: decode((lambda arm=p[1]: scorer(arm)), dev, "known", args, cache_file(*p)) for p in wanted}
        fitted = fit_combination(dev_runs, splits, args)
        if args.kn_weights:  # evaluate given weights (e.g. the shipped ones); the dev grid is still reported
            fitted = ({str(k): [float(x) for x in v] for k, v in json.loads(args.kn_weights).items()}, fitted[1])
        from stoicheia_spacy.restore.combine import uses_backbone

        if not uses_backbone(fitted[0]):
            plan = [p for p in plan if p[1] != "finetuned" or (p == ("dev", "finetuned", "known") and len(wanted) > 1)
                    or (p[0] == "test" and p[2] == "known" and "finetuned" in (args.arms or "").split(","))]
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    earlier = [p for p in plan if cache_file(*p).is_file() or merge_shards(cache_file(*p), len(splits[p[0]]))]
    if args.workers > 1 and not args.cached_only:
        run_workers([p for p in plan if p not in earlier], args, out / "logs")
    runs: dict = {}
    for split, arm, mode in plan:
        factory = sc if arm == main_arm else (lambda arm=arm: scorer(arm))
        runs[(split, arm, mode)] = decode(factory, splits[split], mode, args, cache_file(split, arm, mode))
    runs = {k: v for k, v in runs.items() if v is not None}  # --cached-only: what was measured
    rescore_grid = rescore_fused(runs, splits, args) if "fused" in arms and args.lm_rescore > 0 else None
    combination = None
    if "combined" in arms:  # the default's combination of the backbone's and the n-gram's candidates
        kn_weights, kn_table = fitted or fit_combination(runs, splits, args)
        runs.update(combined_runs(runs, splits, args, kn_weights))
        ng_dev = score(dev, [[c[0] for c in rerank([tuple(x) for x in cands], WidthPrior())[:20]]
                             for cands in runs[("dev", "ngram8", "known")]["cands"]])["overall"]
        cb_dev = score(dev, [[c[0] for c in rerank([tuple(x) for x in cands], WidthPrior())[:20]]
                             for cands in runs[("dev", "combined", "known")]["cands"]])["overall"]
        combination = {"weights": kn_weights, "weights_given": bool(args.kn_weights),
                       "features": ["backbone", "fwd", "rev", "length"],
                       "dev_cer_by_weights": kn_table, "dev_ngram8_known": ng_dev, "dev_combined_known": cb_dev,
                       "backbone_used": any(w[0] > 0 for w in kn_weights.values())}
    invocation = {"wall_s": time.perf_counter() - wall0, "cpu_s": cpu_seconds() - cpu0, "workers": args.workers,
                  "decoded": ["/".join(p) for p in plan if p not in earlier and p in runs],
                  "from_earlier_invocations": ["/".join(p) for p in earlier]}
    arms = [a for a in arms if ("test", a, "known") in runs]
    if main_arm == "combined" and "finetuned" in [p[1] for p in plan]:  # the backbone's beam alone is an arm too
        arms = [a for a in arms if a != "finetuned"] + (["finetuned"] if ("test", "finetuned", "known") in runs else [])
    modes = [m for m in MODES if ("test", main_arm, m) in runs]
    dev_modes = tuple(m for m in ("known", "hidden", "range") if ("dev", main_arm, m) in runs)

    # ---- width prior (rank rule + length bonus by dev CER on hidden widths), temperatures per bucket
    if "hidden" in dev_modes:
        dev_hidden = runs[("dev", main_arm, "hidden")]["cands"]
        prior, dev_cer = fit_prior(dev_hidden, [r["gold"] for r in dev], ours_cer, widths=[r["L"] for r in dev],
                                   max_width=args.max_letters)
    else:  # not measured: the dev widths' prior alone
        prior, dev_cer = WidthPrior.fit([r["L"] for r in dev], max_width=args.max_letters), float("nan")
    plain = WidthPrior()

    def ranked(cands: list, mode: str, p: WidthPrior) -> list:
        pr = p if mode in ("hidden", "range") else plain
        return rerank([tuple(c) for c in cands], pr)[:20]

    def calib_rows(split: str, records: list[dict], modes: tuple, p: WidthPrior) -> tuple:
        keys, correct, buckets, scales = [], [], [], []
        for mode in modes:
            for r, cands in zip(records, runs[(split, main_arm, mode)]["cands"], strict=True):
                rk = ranked(cands, mode, p)
                keys.append(np.array([c[3] for c in rk]))
                scales.append(float(np.mean([c[2] for c in rk])) if rk and p.rank == "mean" and mode != "known" else 1.0)
                correct.append(bool(rk) and bare(rk[0][0]) == bare(r["gold"]))
                buckets.append(bucket_of(r, mode))
        return keys, correct, buckets, scales

    dk, dc, db, ds = calib_rows("dev", dev, dev_modes, prior)
    temps = fit_temperatures(dk, dc, db, scales=ds)

    def probs(keys: list, buckets: list, scales: list, t: dict | None) -> np.ndarray:
        return np.array([top_probability(k, (t or {}).get(b, (t or {}).get("default", 1.0)), s)
                         for k, b, s in zip(keys, buckets, scales, strict=True)])

    tk, tc, tb, ts = calib_rows("test", test, tuple(m for m in ("known", "hidden", "range") if m in modes), prior)
    # the top candidate's confidence: Platt scaling of its temperature-scaled probability, fitted on dev,
    # pooled and per width bucket (a bucket with fewer than --confidence-min-gaps dev gaps uses the pooled pair)
    dev_probs, dev_buckets = probs(dk, db, ds, temps), np.array(db)
    slope, bias = fit_confidence(dev_probs, dc)
    per_bucket = {b: fit_confidence(dev_probs[dev_buckets == b], np.array(dc)[dev_buckets == b])
                  for b in sorted(set(db)) if (dev_buckets == b).sum() >= args.confidence_min_gaps}

    def confidence(keys: list, buckets: list, scales: list) -> np.ndarray:
        pairs = np.array([per_bucket.get(b, (slope, bias)) for b in buckets]).reshape(-1, 2)
        return np.asarray(top_confidence(probs(keys, buckets, scales, temps), pairs[:, 0], pairs[:, 1]))

    dev_p, test_p = confidence(dk, db, ds), confidence(tk, tb, ts)
    dev_ok, test_ok = np.array(dc, dtype=bool), np.array(tc, dtype=bool)
    calibration = {
        "temperatures": temps, "confidence_slope": slope, "confidence_bias": bias,
        "confidence_by_bucket": {b: {"slope": sl, "bias": bi, "dev_gaps": int((dev_buckets == b).sum())}
                                 for b, (sl, bi) in per_bucket.items()},
        "ece_dev_raw": expected_calibration_error(probs(dk, db, ds, None), dev_ok, 10),
        "ece_dev_temperatures": expected_calibration_error(probs(dk, db, ds, temps), dev_ok, 10),
        "ece_dev": expected_calibration_error(dev_p, dev_ok, 10),
        "ece_test_raw": expected_calibration_error(probs(tk, tb, ts, None), test_ok, 10),
        "ece_test_temperatures": expected_calibration_error(probs(tk, tb, ts, temps), test_ok, 10),
        "ece_test": expected_calibration_error(test_p, test_ok, 10),
        "ece_test_by_bucket": {b: expected_calibration_error(test_p[np.array(tb) == b], test_ok[np.array(tb) == b], 10)
                               for b in sorted(set(tb))},
        "mean_top_probability_test": float(test_p.mean()),
        "top1_test": float(np.mean(tc)),
    }
    diagram = reliability_diagram(test_p, test_ok, 10)

    # ---- abstention: the lowest confidence with 90 % precision on dev (all width modes pooled),
    # the restorer's ``confident_above``; its coverage and precision on test
    threshold = fit_threshold(dev_p, dev_ok, precision=0.9)

    def cover(p: np.ndarray, ok: np.ndarray, t: float) -> dict:
        sel = p >= t
        return {"coverage": float(sel.mean()), "precision": float(ok[sel].mean()) if sel.any() else None,
                "n": int(sel.sum())}

    abstention = {"rule": "confident when the top candidate's confidence >= confident_above "
                          "(fitted for 90 % precision on dev, known/hidden/range pooled)",
                  "confident_above": threshold, "dev": cover(dev_p, dev_ok, threshold),
                  "test": cover(test_p, test_ok, threshold),
                  "accuracy_coverage_test": [{"threshold": float(t), **cover(test_p, test_ok, float(t))}
                                             for t in np.round(np.arange(0.0, 1.0, 0.05), 2)]}

    # ---- scores
    tops = {key: [[c[0] for c in ranked(cands, key[2], prior)] for cands in run["cands"]]
            for key, run in runs.items()}
    metrics: dict = {
        "n_test": len(test), "n_dev": len(dev), "fold": args.fold, "beam": args.beam, "window": args.window,
        "slack": args.slack, "max_letters": args.max_letters, "main_arm": main_arm,
        "unmask": args.unmask, "final_forward": not args.no_final_forward,
        "command": "python scripts/restore_eval.py " + " ".join(recorded_argv(args.argv)),
        "arms": {arm: score(test, tops[("test", arm, "known")]) for arm in arms},
        "widths": {mode: score(test, tops[("test", main_arm, mode)]) for mode in modes},
        "widths_dev": {mode: score(dev, tops[("dev", main_arm, mode)]) for mode in dev_modes},
        "prior": {"rank": prior.rank, "length_bonus": prior.length_bonus, "log_prior": list(prior.log_prior),
                  "dev_cer_hidden": 100 * dev_cer},
        "calibration": calibration,
        "abstention": abstention,
        "combination": combination,
        "lm_rescore": {"weight": args.lm_rescore if "fused" in arms else 0.0, "dev_cer_by_weight": rescore_grid},
        "lm_weight": {"weight": args.lm_weight if "fused" in arms else 0.0,
                      "fitted_on_dev": weight_fit is not None, "dev_cer_known_by_weight": weight_fit},
        "speed": {f"{s}/{a}/{m}": {"gaps": r["n"], "cpu_s": r["cpu_s"], "wall_s": r["wall_s"],
                                   "cpu_s_per_gap": r["cpu_s"] / max(r["n"], 1),
                                   "gaps_per_cpu_s": r["n"] / max(r["cpu_s"], 1e-9),
                                   "forwards_per_gap": r["forwards"] / max(r["n"], 1)}
                  for (s, a, m), r in runs.items()},
    }
    correct = {arm: correct_top1(test, tops[("test", arm, "known")]) for arm in arms}
    for mode in [m for m in modes if m != "known"]:
        correct[f"{main_arm} ({mode})"] = correct_top1(test, tops[("test", main_arm, mode)])
    names = list(correct)
    metrics["mcnemar"] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            r = mcnemar_exact(correct[a], correct[b])
            metrics["mcnemar"][f"{a} vs {b}"] = {"a_only": r.a_only, "b_only": r.b_only, "p": r.pvalue}
    known_cost = metrics["speed"][f"test/{main_arm}/known"]["cpu_s_per_gap"]
    metrics["cost_ratio_vs_known"] = {m: metrics["speed"][f"test/{main_arm}/{m}"]["cpu_s_per_gap"] / known_cost
                                     for m in modes}
    metrics["projected_cpu_hours_3000_known"] = 3000 * known_cost / 3600
    metrics["invocation"] = invocation
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False), encoding="utf-8")
    restorer_cfg = {"rank": prior.rank, "length_bonus": prior.length_bonus,
                    "width_log_prior": [round(x, 4) for x in prior.log_prior], "max_letters": args.max_letters,
                    "temperatures": {k: round(v, 3) for k, v in temps.items()},
                    "temperature": round(temps["default"], 3), "confident_above": round(threshold, 4),
                    "confidence_slope": slope, "confidence_bias": bias,
                    "confidence_slopes": {b: sl for b, (sl, _) in per_bucket.items()},
                    "confidence_biases": {b: bi for b, (_, bi) in per_bucket.items()}}
    if combination is not None:  # the default's combination weights per width bucket (kn_weights)
        restorer_cfg.update(kn_weights=combination["weights"], kn_backbone=combination["backbone_used"])
    if "fused" in arms:  # the fused default's LM weights (the restorer's lm_weight, lm_rescore)
        restorer_cfg.update(lm_weight=args.lm_weight, lm_rescore=args.lm_rescore)
    (out / "calibration.json").write_text(json.dumps(restorer_cfg, indent=1), encoding="utf-8")
    (out / "results.md").write_text(markdown(metrics), encoding="utf-8")
    plots(metrics, diagram, out)
    print(markdown(metrics))
    return 0


def markdown(m: dict) -> str:
    lines = [f"# Restoration, fold {m['fold']} ({m['n_test']} test / {m['n_dev']} dev gaps, beam {m['beam']}, "
             f"{m['window']} letters a side)", "", f"`{m['command']}`", "",
             "| arm (known width) | CER % | CER % (release norm.) | top-1 % | top-20 % |", "|---|---|---|---|---|"]
    for arm, s in m["arms"].items():
        o = s["overall"]
        lines.append(f"| {arm} | {o['cer']:.1f} | {o['cer_release']:.1f} | {o['top1']:.1f} | {o['top20']:.1f} |")
    lines += ["", f"| {m['main_arm']}: width | CER % | CER % (release norm.) | top-1 % | top-20 % | CPU s/gap | cost × known |",
              "|---|---|---|---|---|---|---|"]
    for mode, s in m["widths"].items():
        o = s["overall"]
        sp = m["speed"][f"test/{m['main_arm']}/{mode}"]
        lines.append(f"| {mode} | {o['cer']:.1f} | {o['cer_release']:.1f} | {o['top1']:.1f} | {o['top20']:.1f} | "
                     f"{sp['cpu_s_per_gap']:.2f} | {m['cost_ratio_vs_known'][mode]:.2f} |")
    lines += ["", "| L | " + " | ".join(f"{a} CER" for a in m["arms"]) + " | hidden CER | range CER |",
              "|---" * (len(m["arms"]) + 3) + "|"]
    def w(mode: str, L: str) -> str:
        return f"{m['widths'][mode]['per_L'][L]['cer']:.1f}" if mode in m["widths"] else "–"

    for L in sorted(next(iter(m["arms"].values()))["per_L"], key=int):
        lines.append(f"| {L} | " + " | ".join(f"{s['per_L'][L]['cer']:.1f}" for s in m["arms"].values())
                     + f" | {w('hidden', L)} | {w('range', L)} |")
    lines += ["", "McNemar (exact, top-1): " + "; ".join(f"{k}: {v['a_only']}/{v['b_only']}, p = {v['p']:.3g}"
                                                         for k, v in m["mcnemar"].items())]
    fit = m.get("lm_weight") or {}
    if fit.get("fitted_on_dev"):
        lines += ["", "In-beam LM weight fitted on dev (known widths, top-1 CER %): "
                  + ", ".join(f"{w}: {c:.1f}" for w, c in fit["dev_cer_known_by_weight"].items())
                  + f"; used {fit['weight']:g}."]
    p, c = m["prior"], m["calibration"]
    lines += ["", f"Width prior (dev): rank `{p['rank']}`, length bonus {p['length_bonus']:+.2f} nats/char "
              f"(dev hidden CER {p['dev_cer_hidden']:.1f} %).",
              f"Calibration: temperatures {json.dumps({k: round(v, 2) for k, v in c['temperatures'].items()})}, "
              f"confidence slope {c.get('confidence_slope', 1.0):.2f} bias {c.get('confidence_bias', 0.0):+.2f}"
              + "".join(f", {b} {v['slope']:.2f} {v['bias']:+.2f}" for b, v in c.get("confidence_by_bucket", {}).items())
              + "; "
              f"ECE dev {c['ece_dev_raw']:.3f} → {c['ece_dev']:.3f}, test {c['ece_test_raw']:.3f} → {c['ece_test']:.3f}; "
              f"mean confidence {c['mean_top_probability_test']:.3f} vs top-1 accuracy {c['top1_test']:.3f}.",
              f"Projected CPU time for 3,000 known-width gaps: {m['projected_cpu_hours_3000_known']:.2f} h."]
    if "abstention" in m:
        a = m["abstention"]

        def fmt(x: float | None) -> str:
            return "n/a" if x is None else f"{100 * x:.1f} %"

        lines.append(f"Abstention: confident_above {a['confident_above']:.4f} (90 % precision on dev); test coverage "
                     f"{fmt(a['test']['coverage'])}, precision {fmt(a['test']['precision'])} "
                     f"(dev {fmt(a['dev']['coverage'])}, {fmt(a['dev']['precision'])}).")
    return "\n".join(lines) + "\n"


def plots(m: dict, diagram: object, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    series = {**dict(m["arms"].items()),
              **{f"{m['main_arm']} {k}": m["widths"][k] for k in ("hidden", "range") if k in m["widths"]}}
    for name, s in series.items():
        Ls = sorted(s["per_L"], key=int)
        ax.plot([int(L) for L in Ls], [s["per_L"][L]["cer"] for L in Ls], marker="o", label=name)
    ax.set_xlabel("gap length L (characters)")
    ax.set_ylabel("CER %")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "cer_by_L.png", dpi=120)
    fig, ax = plt.subplots(figsize=(4, 4))
    used = diagram.count > 0  # type: ignore[attr-defined]
    ax.plot([0, 1], [0, 1], "k--", lw=1)
    ax.plot(diagram.confidence[used], diagram.accuracy[used], marker="o")  # type: ignore[attr-defined]
    ax.set_xlabel("top candidate probability (calibrated)")
    ax.set_ylabel("top-1 accuracy")
    fig.tight_layout()
    fig.savefig(out / "reliability.png", dpi=120)
    if "abstention" in m:  # accuracy against coverage as the confidence threshold rises
        curve = [row for row in m["abstention"]["accuracy_coverage_test"] if row["precision"] is not None]
        fig, ax = plt.subplots(figsize=(4, 4))
        ax.plot([100 * r["coverage"] for r in curve], [100 * r["precision"] for r in curve], marker="o")
        chosen = m["abstention"]["test"]
        if chosen["precision"] is not None:
            ax.plot([100 * chosen["coverage"]], [100 * chosen["precision"]], "r*", ms=12,
                    label=f"confident_above = {m['abstention']['confident_above']:.3f}")
            ax.legend(fontsize=7)
        ax.set_xlabel("coverage % (gaps answered)")
        ax.set_ylabel("top-1 accuracy % of those answered")
        fig.tight_layout()
        fig.savefig(out / "accuracy_coverage.png", dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("samples")
    s.add_argument("--mirror", required=True)
    s.add_argument("--fold", type=int, default=3)
    s.add_argument("--per-length", type=int, default=300)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--limit", type=int, default=None, help="read at most this many records")
    s.add_argument("--corpus", default=None, help="JSON-lines documents {id, text} (e.g. inscriptions, held out by PHI digit)")
    s.add_argument("--out", required=True)
    c = sub.add_parser("convert", help="rewrite a samples dir in the Ithaca record and chat formats")
    c.add_argument("--samples", required=True)
    e = sub.add_parser("evaluate")
    e.add_argument("--samples", required=True)
    e.add_argument("--mirror", required=True)
    e.add_argument("--fold", type=int, default=3)
    e.add_argument("--model", default=None)
    e.add_argument("--beam", type=int, default=20)
    e.add_argument("--window", type=int, default=32, help="context letters per side (cropped around the gap)")
    e.add_argument("--max-letters", type=int, default=10, help="letter counts enumerated for a hidden width")
    e.add_argument("--ngram-docs", type=int, default=20000)
    e.add_argument("--threads", type=int, default=1)
    e.add_argument("--workers", type=int, default=1,
                   help="decode runs not in the cache in this many parallel processes (sharded), then score")
    e.add_argument("--chunk", type=int, default=16, help="gaps per batched beam search")
    e.add_argument("--unmask", type=int, default=1, help="letters committed per forward (1: the exact beam)")
    e.add_argument("--no-final-forward", action="store_true",
                   help="word breaks from the step that committed the last letter, not one more forward")
    e.add_argument("--slack", type=int, default=2, help="range widths L±slack")
    e.add_argument("--per-length", type=int, default=None, help="test gaps per L (default: all)")
    e.add_argument("--dev-per-length", type=int, default=None, help="dev gaps per L (default: all)")
    e.add_argument("--overlay", default=None, help="restoration overlay for the finetuned arm (default: the shipped one)")
    e.add_argument("--arms", default=None, help=f"comma-separated subset of {','.join(ARMS)} (the first of "
                   "fused/finetuned/pretrained is the main arm: its widths, prior and calibration)")
    e.add_argument("--lm", default=None, help="the fused arm's character n-gram LM (.npz, `make restore-lm`)")
    e.add_argument("--kn-lm", default=None, help="the ngram8 / combined arms' Kneser-Ney 8-gram (kn_lm.py, `make restore-lm`)")
    e.add_argument("--kn-beam", type=int, default=20, help="the ngram8 arm's beam per direction")
    e.add_argument("--kn-far", type=int, default=10, help="symbols beyond the gap's far edge in the ngram8 rescoring")
    e.add_argument("--kn-backbone-weights", type=lambda v: [float(x) for x in v.split(",")],
                   default=[0.0, 0.1, 0.2, 0.3, 0.5, 1.0], help="the combined arm's backbone weights tried on dev")
    e.add_argument("--kn-weights", default=None,
                   help='the combined arm\'s weights as JSON {bucket: [backbone, fwd, rev, length]} instead of the '
                        "dev fit (the fit's grid is still reported)")
    e.add_argument("--kn-min-gaps", type=int, default=30,
                   help="a width bucket gets its own combination weights when dev has this many of its gaps")
    e.add_argument("--kn-default-backbone", action="store_true",
                   help="let the combination's default weights (hidden and range widths too) weigh the backbone")
    e.add_argument("--modes", default=",".join(MODES), help="the main arm's width modes to decode")
    e.add_argument("--lm-weight", type=float, default=1.0, help="the fused arm's LM weight inside the beam")
    e.add_argument("--lm-weights", default=None,
                   help="fit the in-beam LM weight on dev instead: decode the dev gaps (known widths) at each of "
                        "these comma-separated weights and keep the one with the lowest dev CER (refit whenever "
                        "the weights change); --lm-weight is then ignored")
    e.add_argument("--lm-rescore", type=float, default=1.0,
                   help="the fused arm's finished candidates also get this × the LM's joint log-probability "
                        "of the filled window (the restorer's lm_rescore; 0: none)")
    e.add_argument("--confidence-min-gaps", type=int, default=60,
                   help="a width bucket gets its own confidence scaling when dev has this many of its gaps")
    e.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                   help="model weights' dtype (bfloat16: about 2x faster on CPUs with AVX512-BF16)")
    e.add_argument("--decode", default=None, help="only decode these SPLIT:MODE runs of the main arm, e.g. dev:known,test:chat")
    e.add_argument("--cached-only", action="store_true", help="report only the runs already in OUT/cache")
    e.add_argument("--only-known", action="store_true",
                   help="only decode the --arms' known widths into OUT/cache (to run arms in parallel)")
    e.add_argument("--shard", default=None, metavar="K/N",
                   help="with --decode or --only-known: decode every N-th gap from the K-th (K = 0..N-1) into its "
                        "own cache file; a later run without --shard merges the N files (parallel workers)")
    e.add_argument("--dev-samples", default=None,
                   help="take the dev split (prior and temperatures) from this samples dir (default: --samples)")
    e.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if getattr(args, "shard", None):
        k, _, n = args.shard.partition("/")
        if not (k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)) or not (args.decode or args.only_known):
            parser.error("--shard K/N needs 0 <= K < N and --decode or --only-known")
        args.shard = (int(k), int(n))
    args.argv = sys.argv[1:] if argv is None else list(argv)  # the command recorded in metrics.json
    if args.cmd == "samples":
        data = make_samples(args.mirror, args.fold, args.per_length, args.seed, args.limit, args.corpus)
        for split, rows in data.items():
            write_split(Path(args.out), split, rows)
            print(f"{split}: {len(rows)} samples")
        return 0
    if args.cmd == "convert":
        for split in ("test", "dev"):
            rows = load_split(Path(args.samples), split, None)
            write_split(Path(args.samples), split, rows)
            print(f"{split}: {len(rows)} samples")
        return 0
    return evaluate(args)


if __name__ == "__main__":
    sys.exit(main())
