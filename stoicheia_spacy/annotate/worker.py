"""What every engine runs in its workers: load one pipeline, annotate a batch of plain records.

A *task* is a JSON string ``{"tag", "records": [{"id", "text", "meta"?}, ...]}``; its result is
a JSON string ``{"tag", "lines": [...], "errors": [{"id", "error"}], "words": N, "span": [t0, t1]}``
(``tag`` echoed) where ``lines`` are the JSON-lines annotation records (:mod:`.convert`) of the
records that succeeded, in order, and ``span`` the wall-clock seconds (``time.time()``) at which
the worker began and finished the task (for throughput; never written to the outputs).
The same function runs in-process, in spawned processes and in Ray actors, on batches the
runner formed, so every engine computes the same floats and writes the same bytes.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import torch
from spacy.language import Language
from spacy.tokens import Doc

from ..assembly import DEFAULT_PACKAGE, build_pipeline
from ..assembly import load_pipeline as load_saved_pipeline
from ..assets import default_model_dir
from ..errors import ConfigError
from ..heap import trim_heap
from ..registrations import register_all
from .convert import doc_to_record, merge_records
from .pieces import split_text

ENCODER = "stoicheia_encoder"


def set_threads(threads: int) -> None:
    """Pin torch (and the BLAS/OpenMP pools of processes started later) to ``threads``."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    torch.set_num_threads(threads)


def load_pipeline(model: str | None = None, components: list[str] | None = None) -> Language:
    """``model`` (an installed package or a pipeline directory), else the installed default
    package, else the embedded default model with its shipped components; with
    ``components``, only those run (plus the encoder they listen to)."""
    register_all()  # a worker may run where the entry points are not installed

    nlp: Language | None = None
    for name in [model] if model else [DEFAULT_PACKAGE]:
        try:
            nlp = load_saved_pipeline(name)  # older saved pipelines' flat settings too
        except OSError as exc:
            if model:
                raise ConfigError(f"cannot load pipeline {model!r}: {exc}") from exc
    if nlp is None:
        nlp = build_pipeline(str(default_model_dir()))
    if components:
        select_components(nlp, components)
    return nlp


def select_components(nlp: Language, components: list[str]) -> None:
    """Disable every component not in ``components`` (short names like ``restorer`` work);
    the encoder stays on when present."""
    wanted = []
    for name in components:
        full = name if name in nlp.pipe_names else f"stoicheia_{name}"
        if full not in nlp.pipe_names:
            raise ConfigError(f"no component {name!r} in the pipeline; it has {', '.join(nlp.pipe_names)}")
        wanted.append(full)
    if ENCODER in nlp.pipe_names and ENCODER not in wanted:
        wanted.insert(0, ENCODER)
    nlp.select_pipes(enable=wanted)


def annotate_batch(nlp: Language, task: str, *, max_chars: int = 4096, batch_chars: int = 4096) -> str:
    """Annotate one task (see the module docstring); a record whose text cannot be annotated
    is reported in ``errors`` and left out, the rest of the batch goes on."""
    began = time.time()
    payload = json.loads(task)
    records: list[dict[str, Any]] = payload["records"]
    pieces = [(r, piece) for r, rec in enumerate(records) for piece in split_text(rec["text"], max_chars)]
    parts: list[list[dict[str, Any]]] = [[] for _ in records]
    failed: dict[int, str] = {}
    for group in _char_batches(pieces, batch_chars):
        with nlp.memory_zone():  # strings and lexemes of this group's Docs are freed after it
            texts = [piece for _r, piece in group]
            docs: list[Doc | None]
            try:
                docs = list(nlp.pipe(texts, batch_size=len(texts)))
            except Exception:  # find the record at fault: one Doc at a time
                docs = []
                for r, text in group:
                    try:
                        docs.append(nlp(text))
                    except Exception as exc:
                        failed.setdefault(r, f"{type(exc).__name__}: {exc}")
                        docs.append(None)
            for (r, _text), doc in zip(group, docs, strict=True):
                if doc is not None and r not in failed:
                    parts[r].append(doc_to_record(doc, records[r]["id"], records[r].get("meta")))
                if doc is not None:  # spans in user_data point back at the Doc: break the cycle so that
                    doc.user_data.clear()  # its hidden states are freed now, not at the next full gc
            del docs, doc  # no Doc outlives its memory zone
        trim_heap()  # glibc keeps the freed arenas of each forward resident otherwise (see .heap)
    lines, words = [], 0
    for r in range(len(parts)):
        rec_parts, parts[r] = parts[r], []  # each record's pieces are freed once merged and written
        if r in failed:
            continue
        merged = merge_records(rec_parts)
        del rec_parts
        words += len(merged["words"])
        lines.append(json.dumps(merged, ensure_ascii=False))
    errors = [{"id": records[r]["id"], "error": msg} for r, msg in sorted(failed.items())]
    return json.dumps({"tag": payload.get("tag"), "lines": lines, "errors": errors, "words": words,
                       "span": [began, time.time()]}, ensure_ascii=False)


def _char_batches(pieces: list[tuple[int, str]], budget: int) -> list[list[tuple[int, str]]]:
    """Consecutive groups of pieces of at most ``budget`` characters (at least one piece each)."""
    groups: list[list[tuple[int, str]]] = []
    size = budget + 1
    for item in pieces:
        if size + len(item[1]) > budget:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += len(item[1])
    return groups
