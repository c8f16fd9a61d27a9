"""``python -m stoicheia_lab.bench memory long|stream [--model M] [--out FILE]``: memory of annotation.

``long``: one document of ``--letters`` Greek letters (default 1,000,000; real text: with
``--source perseus`` distinct Perseus works from the asset mirror joined in file order, else
the default model's held-out sample repeated) through ``annotate``'s worker path (pieces of
``--max-chars``), in a fresh process: peak RSS (``ru_maxrss``) after loading the pipeline
and after annotating, words, seconds; the target is < 2 GB.

``stream``: ``--docs`` documents (default 10,000; short real sentences, cycled) through
``nlp.pipe(n_process=2)``; the RSS of the parent and of each worker is sampled every
``--every`` documents and the slope of a least-squares line over the second half (after
warm-up) is reported in MB per 1,000 documents for the parent, the workers and the total:
flat means ~0.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.errors import ConfigError


def greek_text(letters: int, source: str = "dev_sample", mirror: Path | str | None = None) -> tuple[str, list[str]]:
    """Real Greek text of at least ``letters`` letters and the ids of the texts it uses:
    ``source="dev_sample"`` repeats the default model's held-out sample; any corpus source
    with a reader (e.g. ``"perseus"``) joins its distinct records from ``mirror`` (default
    ``$STOICHEIA_ASSET_MIRROR``) in file order, blank-line separated, the last one cut after
    the line that reaches ``letters``."""
    from stoicheia_spacy.codec import encode_planes

    if source == "dev_sample":
        path = default_model_dir() / "dev_sample.jsonl"
        records = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        sample = " ".join(records)
        per_copy = len(encode_planes(sample))
        return " ".join([sample] * (letters // per_copy + 1)), [path.name]
    from ..corpus.fetch import MIRROR_ENV
    from ..corpus.readers import iter_records

    mirror = mirror or os.environ.get(MIRROR_ENV)
    if not mirror:
        raise ConfigError(f"--source {source} reads the asset mirror: set ${MIRROR_ENV} or pass --mirror")
    texts: list[str] = []
    ids: list[str] = []
    total = 0
    for rec in iter_records(source, mirror):
        ids.append(rec["id"])
        lines = []
        for line in rec["text"].split("\n"):  # the last text only as far as needed, whole lines
            lines.append(line)
            total += len(encode_planes(line))
            if total >= letters:
                return "\n\n".join([*texts, "\n".join(lines)]), ids
        texts.append("\n".join(lines))
    raise ConfigError(f"source {source!r} has only {total:,} letters, fewer than {letters:,}")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_long(letters: int, model: str | None, max_chars: int, components: list[str] | None,
             progress: Path | None = None, batch_chars: int = 4096, source: str = "dev_sample",
             mirror: Path | None = None) -> dict[str, Any]:
    """In this process: load the pipeline, annotate one long document, report peak RSS (and,
    with ``progress``, append characters done / peak RSS so far to that JSON-lines file)."""
    from stoicheia_spacy.annotate.pieces import split_text
    from stoicheia_spacy.annotate.worker import annotate_batch, load_pipeline, set_threads
    from stoicheia_spacy.codec import encode_planes

    set_threads(1)
    text, text_ids = greek_text(letters, source, mirror)
    n_letters = len(encode_planes(text))
    nlp = load_pipeline(model, components)
    loaded = _peak_mb()
    start = time.perf_counter()
    if progress is not None:
        with progress.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"chars_done": 0, "peak_rss_mb": round(loaded, 1), "letters": n_letters}) + "\n")
        _log_progress(nlp, progress, start)
    task = json.dumps({"records": [{"id": "long", "text": text}]})
    out = json.loads(annotate_batch(nlp, task, max_chars=max_chars, batch_chars=batch_chars))
    seconds = time.perf_counter() - start
    words = out["words"]
    head = json.dumps({"id": "long", "text": text}, ensure_ascii=False)[:-1] + ", "
    assert out["lines"][0].startswith(head) and not out["errors"]  # the whole text, not re-parsed: the
    del out  # measured process is annotate's, not this check's
    return {"source": source, "texts": text_ids, "letters": n_letters, "chars": len(text), "words": words,
            "pieces": len(split_text(text, max_chars)), "pipes": nlp.pipe_names,
            "max_chars": max_chars, "batch_chars": batch_chars, "peak_rss_after_load_mb": round(loaded, 1),
            "peak_rss_mb": round(_peak_mb(), 1), "seconds": round(seconds, 1),
            "letters_per_s": round(n_letters / seconds, 1), "under_2gb": _peak_mb() < 2048}


def _log_progress(nlp: Any, path: Path, start: float) -> None:
    """Wrap ``nlp.pipe`` so that every finished Doc appends (chars done, peak and current RSS) to ``path``."""
    pipe = nlp.pipe
    done = [0]

    def counting(texts: Any, **kwargs: Any) -> Any:
        for doc in pipe(texts, **kwargs):
            done[0] += len(doc.text)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"chars_done": done[0], "peak_rss_mb": round(_peak_mb(), 1),
                                         "rss_mb": round(process_rss_mb()[0], 1),
                                         "seconds": round(time.perf_counter() - start, 1)}) + "\n")
            yield doc

    nlp.pipe = counting


def process_rss_mb() -> tuple[float, list[float]]:
    """RSS of this process and of each of its (recursive) children, in MB."""
    import psutil

    proc = psutil.Process()
    children = []
    for child in proc.children(recursive=True):
        try:
            children.append(child.memory_info().rss / 2**20)
        except psutil.Error:
            pass
    return proc.memory_info().rss / 2**20, children


def short_sentences(n_docs: int, source: str = "dev_sample", mirror: Path | str | None = None,
                    min_chars: int = 20, max_chars: int = 300) -> list[str]:
    """``n_docs`` real Greek sentences of ``min_chars``..``max_chars`` characters, cut at
    sentence ends from :func:`greek_text` of ``source`` (distinct sentences with a corpus
    source; the dev sample's are cycled)."""
    from stoicheia_spacy.textnorm import sentence_spans

    letters = 100 * n_docs
    while True:
        text, _ids = greek_text(letters, source, mirror)
        sentences = [text[a:b].strip() for a, b in sentence_spans(text)]
        sentences = [t for t in sentences if min_chars <= len(t) <= max_chars]
        if len(sentences) >= n_docs or source == "dev_sample":
            return [sentences[i % len(sentences)] for i in range(n_docs)]
        letters *= 2


def slope_per_1000(samples: list[tuple[int, float]]) -> float:
    """Least-squares slope of (docs, MB) over the second half of the samples, in MB per 1,000 docs."""
    import numpy as np

    half = samples[len(samples) // 2:]
    if len(half) < 2:
        return float("nan")
    x = np.array([d for d, _ in half], float)
    y = np.array([m for _, m in half], float)
    return float(np.polyfit(x, y, 1)[0]) * 1000


def run_stream(n_docs: int, model: str | None, every: int, components: list[str] | None,
               n_process: int = 2, source: str = "dev_sample", mirror: Path | None = None) -> dict[str, Any]:
    """``n_docs`` short real sentences through ``nlp.pipe(n_process=...)``; RSS samples of the
    parent and of its worker processes, and their slopes over the second half."""
    from stoicheia_spacy.annotate.worker import load_pipeline, set_threads

    set_threads(1)
    texts = short_sentences(n_docs, source, mirror)
    nlp = load_pipeline(model, components)
    parent: list[tuple[int, float]] = []
    workers: list[tuple[int, float]] = []
    per_worker: list[tuple[int, list[float]]] = []
    start = time.perf_counter()
    words = 0
    for i, doc in enumerate(nlp.pipe(texts, n_process=n_process, batch_size=32), 1):
        words += len(doc)
        if i % every == 0:
            own, children = process_rss_mb()
            parent.append((i, own))
            workers.append((i, sum(children)))
            per_worker.append((i, [round(c, 1) for c in children]))
    seconds = time.perf_counter() - start
    total = [(d, p + w) for (d, p), (_, w) in zip(parent, workers, strict=True)]
    return {"docs": n_docs, "distinct_docs": len(set(texts)), "source": source, "n_process": n_process, "chars": sum(len(t) for t in texts), "words": words,
            "seconds": round(seconds, 1), "docs_per_s": round(n_docs / seconds, 1), "pipes": nlp.pipe_names,
            "slope_mb_per_1000_docs_second_half": {"total": round(slope_per_1000(total), 3),
                                                   "parent": round(slope_per_1000(parent), 3),
                                                   "workers": round(slope_per_1000(workers), 3)},
            "rss_first_mb": round(total[0][1], 1) if total else None,
            "rss_last_mb": round(total[-1][1], 1) if total else None,
            "rss_samples_mb": [{"docs": d, "parent": round(p, 1), "workers": c}
                               for (d, p), (_, c) in zip(parent, per_worker, strict=True)]}


STORAGE_TEXT = "ἔδοξε τῇ βουλῇ καὶ τῷ δήμῳ [...] ἐπὶ τῆς πρυτανείας μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_storage(model: str | None) -> dict[str, Any]:
    """The ``storage`` measurement (module doc), in this process."""
    import gc
    import tempfile

    import torch

    from stoicheia_spacy.assembly import DEFAULT_SOURCE, build_pipeline, load_pipeline

    rss_start = _rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(model) if model else Path(tmp) / "default"
        if model is None:
            build_pipeline(DEFAULT_SOURCE).to_disk(folder)
            gc.collect()
            rss_start = _rss_mb()
        weights = sum(p.stat().st_size for p in folder.rglob("*.safetensors"))
        nlp = load_pipeline(folder)
        gc.collect()
        rss_loaded = _rss_mb()
        doc = nlp(STORAGE_TEXT)
        gc.collect()
        rss_after = _rss_mb()
    encoder: Any = nlp.get_pipe("stoicheia_encoder")
    backbone = next(node.shims[0]._model.encoder for node in encoder.model.walk() if node.shims)
    backbone_bytes = sum(p.numel() * 4 for p in backbone.parameters())
    storages: dict[int, tuple[int, str]] = {}
    for obj in gc.get_objects():
        try:
            if not isinstance(obj, torch.Tensor) or obj.is_meta or obj.is_quantized:
                continue
            store = obj.untyped_storage()
        except Exception:
            continue
        if store.nbytes() >= 4096:
            storages.setdefault(store.data_ptr(), (store.nbytes(), f"{tuple(obj.shape)} {obj.dtype}"))
    total = sum(size for size, _ in storages.values())
    owners = storage_owners(nlp, backbone)
    names = storage_names(nlp, backbone)
    largest = sorted(((size, what, ptr) for ptr, (size, what) in storages.items()), reverse=True)[:16]
    by_owner: dict[str, int] = {}
    for ptr, (size, _) in storages.items():
        owner = owners.get(ptr, "other (not a module tensor of a pipe)")
        by_owner[owner] = by_owner.get(owner, 0) + size
    backbone_like = sum(size for owner, size in by_owner.items() if owner.startswith("backbone"))
    return {"pipes": nlp.pipe_names, "restored": bool(doc._.restorations) if doc.has_extension("restorations") else None,
            "weight_files_mb": round(weights / 2**20, 1), "backbone_float32_mb": round(backbone_bytes / 2**20, 1),
            "rss_before_load_mb": round(rss_start, 1), "rss_loaded_mb": round(rss_loaded, 1),
            "rss_after_doc_mb": round(rss_after, 1),
            "rss_loaded_minus_start_over_weight_files": round((rss_loaded - rss_start) * 2**20 / weights, 3),
            "distinct_storages": len(storages), "distinct_storage_mb": round(total / 2**20, 1),
            "distinct_storage_over_backbone": round(total / backbone_bytes, 3),
            "largest_storages": [{"mb": round(size / 2**20, 2), "tensor": what,
                                  "owner": owners.get(ptr, "other (not a module tensor of a pipe)"),
                                  "names": names.get(ptr, [])[:3]} for size, what, ptr in largest],
            "storage_mb_by_owner": {k: round(v / 2**20, 1) for k, v in sorted(by_owner.items(), key=lambda kv: -kv[1])},
            "backbone_storage_over_backbone": round(backbone_like / backbone_bytes, 3),
            "backbone_storage_counts": ("tensors of the encoder's backbone and of every other StoicheiaEncoder "
                                        "(a restorer's overlay, any copy); the components' own heads are listed apart")}


def storage_owners(nlp: Any, backbone: Any) -> dict[int, str]:
    """Storage pointer -> who holds it: ``backbone`` (the encoder's), ``backbone copy or
    overlay`` (any other :class:`StoicheiaEncoder`), else ``heads of PIPE`` (torch modules
    and Thinc parameters of that pipe's model)."""
    import gc

    from stoicheia_spacy.backbone import StoicheiaEncoder

    def ptr(tensor: Any) -> int:
        return int(tensor.untyped_storage().data_ptr()) if hasattr(tensor, "untyped_storage") else 0

    owners: dict[int, str] = {ptr(t): "backbone" for t in backbone.state_dict().values()}
    for obj in gc.get_objects():
        if isinstance(obj, StoicheiaEncoder) and obj is not backbone:
            for t in obj.state_dict().values():
                owners.setdefault(ptr(t), "backbone copy or overlay")
    for name, proc in nlp.pipeline:
        model = getattr(proc, "model", None)
        for node in model.walk() if model is not None else []:
            for shim in node.shims:
                module = getattr(shim, "_model", None)
                for t in module.state_dict().values() if module is not None else []:
                    owners.setdefault(ptr(t), f"heads of {name}")
    return owners


def storage_names(nlp: Any, backbone: Any) -> dict[int, list[str]]:
    """Storage pointer -> the tensor names that hold it (``PIPE:param`` for the pipes' torch
    modules, ``backbone:param`` for the encoder's, ``copy:param`` for another StoicheiaEncoder)."""
    import gc

    from stoicheia_spacy.backbone import StoicheiaEncoder

    names: dict[int, list[str]] = {}

    def add(tensor: Any, name: str) -> None:
        if hasattr(tensor, "untyped_storage"):
            names.setdefault(int(tensor.untyped_storage().data_ptr()), []).append(name)

    for key, t in backbone.state_dict().items():
        add(t, f"backbone:{key}")
    for obj in gc.get_objects():
        if isinstance(obj, StoicheiaEncoder) and obj is not backbone:
            for key, t in obj.state_dict().items():
                add(t, f"copy:{key}")
    for name, proc in nlp.pipeline:
        model = getattr(proc, "model", None)
        for node in model.walk() if model is not None else []:
            for shim in node.shims:
                module = getattr(shim, "_model", None)
                for key, t in module.state_dict().items() if module is not None else []:
                    add(t, f"{name}:{key}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench memory", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("long", "stream", "storage"))
    parser.add_argument("--model", default=None)
    parser.add_argument("--components", default=None)
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--source", default="dev_sample", help="dev_sample (repeated) or a corpus source, e.g. perseus")
    parser.add_argument("--mirror", type=Path, default=None, help="asset mirror (default: $STOICHEIA_ASSET_MIRROR)")
    parser.add_argument("--max-chars", type=int, default=4096)
    parser.add_argument("--batch-chars", type=int, default=4096, help="long: characters per forward")
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--n-process", type=int, default=2, help="stream: nlp.pipe worker processes")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--progress", type=Path, default=None, help="long: JSON-lines log of chars done and peak RSS")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    components = [c.strip() for c in args.components.split(",")] if args.components else None
    if args.what == "long" and not args.child:  # a fresh process, so that ru_maxrss is this run's
        cmd = [sys.executable, "-m", "stoicheia_lab.bench", "memory", "long", "--child",
               "--letters", str(args.letters), "--max-chars", str(args.max_chars),
               "--batch-chars", str(args.batch_chars), "--source", args.source]
        cmd += ["--mirror", str(args.mirror)] if args.mirror else []
        cmd += ["--model", args.model] if args.model else []
        cmd += ["--components", args.components] if args.components else []
        cmd += ["--out", str(args.out)] if args.out else []
        cmd += ["--progress", str(args.progress)] if args.progress else []
        return subprocess.run(cmd, check=False).returncode
    if args.what == "storage":
        result = {"benchmark": "memory storage", **run_storage(args.model)}
        print(f"backbone tensors (the encoder's, overlays, copies) {result['backbone_storage_over_backbone']}x the "
              f"float32 backbone; by owner (MB): {result['storage_mb_by_owner']}")
        for row in result["largest_storages"]:
            print(f"  {row['mb']:6.2f} MB {row['tensor']:30s} {row['owner']}: {', '.join(row['names'])}")
        print(f"distinct tensor storage {result['distinct_storage_over_backbone']}x the float32 backbone "
              f"({result['distinct_storage_mb']} MB / {result['backbone_float32_mb']} MB); RSS loaded "
              f"{result['rss_loaded_mb']} MB for {result['weight_files_mb']} MB of weight files")
    elif args.what == "long":
        result = {"benchmark": "memory long", **run_long(args.letters, args.model, args.max_chars, components, args.progress,
                                                      args.batch_chars, args.source, args.mirror)}
        print(f"{result['letters']:,} letters, {result['words']:,} words: peak RSS {result['peak_rss_mb']:,.0f} MB "
              f"({result['peak_rss_after_load_mb']:,.0f} MB after loading), {result['seconds']} s")
    else:
        result = {"benchmark": "memory stream", **run_stream(args.docs, args.model, args.every, components, args.n_process,
                                                             args.source, args.mirror)}
        slopes = result["slope_mb_per_1000_docs_second_half"]
        print(f"{result['docs']:,} docs through nlp.pipe(n_process={args.n_process}): RSS {result['rss_first_mb']} -> "
              f"{result['rss_last_mb']} MB; slope MB / 1,000 docs: total {slopes['total']}, "
              f"parent {slopes['parent']}, workers {slopes['workers']}")
    result["model"] = args.model or "default pipeline"
    result["command"] = "python -m stoicheia_lab.bench memory " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
