"""Corpora to packed training rows.

Records ``{"id": str, "text": str, "tier": "gold"|"silver"|"bronze"}`` (tier optional,
default gold) are streamed through Hugging Face ``datasets`` (jsonl/json, parquet, or
plain text with one record per line; compressed files too), so a corpus larger than
memory works. Each record is encoded with the package codec, windowed to at most
``max_window`` letters on word boundaries, corrupted, and first-fit packed into rows of
``row_len`` positions with segment ids (0 = padding, 1.. = one per window).

Tiers are mixed by acceptance sampling: a record of tier ``k`` is kept with probability
``w[k] / max(w)``, so each tier's share of letters is its natural share times its weight.
A record belongs to the dev slice when a hash of its id falls under ``dev_fraction``;
dev records never reach training.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.errors import CorpusError, StoicheiaError

from .config import TIER_NAMES, DataConfig
from .sampling import IGNORE, INPUT_FIELDS, TARGET_FIELDS, Sampler, make_example

log = logging.getLogger(__name__)

#: Padding values of every packed field.
PAD_VALUES: dict[str, int | float] = {
    "input_ids": A.PAD_ID,
    "boundary": A.BND_UNKNOWN,
    "dia": A.DIA_UNKNOWN,
    "punct": A.PUNCT_UNKNOWN,
    "char_target": IGNORE,
    "char_weight": 0.0,
    "bnd_target": IGNORE,
    "dia_target": IGNORE,
    "punct_target": IGNORE,
    "cap_target": IGNORE,
}
ROW_FIELDS: tuple[str, ...] = INPUT_FIELDS + TARGET_FIELDS

_BUILDERS = {
    ".jsonl": "json",
    ".json": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
    ".txt": "text",
    ".text": "text",
}
_COMPRESSION = {".gz", ".xz", ".bz2", ".zst", ".lz4"}


@dataclass(frozen=True)
class Record:
    """One corpus record, normalised."""

    id: str
    text: str
    tier: int  # index into TIER_NAMES


def resolve_paths(spec: str | Path | Sequence[str | Path]) -> list[Path]:
    """Expand ``PATH[,PATH]`` (files or directories of corpus files) into sorted files."""
    items: list[str | Path] = (
        [p for p in str(spec).split(",") if p.strip()] if isinstance(spec, str | Path) else list(spec)
    )
    files: list[Path] = []
    for item in items:
        path = Path(str(item).strip())
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and _builder(p, strict=False))
            if not found:
                raise CorpusError(f"no corpus files (.jsonl/.json/.parquet/.txt) under {path}")
            files.extend(found)
        elif path.is_file():
            _builder(path, strict=True)
            files.append(path)
        else:
            raise CorpusError(f"corpus path {path} does not exist")
    if not files:
        raise CorpusError("no corpus paths given")
    return files


def _builder(path: Path, *, strict: bool) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    builder = _BUILDERS.get(suffixes[-1]) if suffixes else None
    if builder is None and strict:
        raise CorpusError(f"{path}: unsupported corpus format (use .jsonl, .json, .parquet or .txt)")
    return builder


def tier_index(value: Any, where: str) -> int:
    """Map a record's ``tier`` field to 0 (gold), 1 (silver) or 2 (bronze)."""
    if value is None or value == "":
        return 0
    if isinstance(value, str) and value.lower() in TIER_NAMES:
        return TIER_NAMES.index(value.lower())
    raise CorpusError(f"{where}: tier must be one of {TIER_NAMES}, got {value!r}")


def iter_records(paths: Sequence[Path]) -> Iterator[Record]:
    """Stream every record of ``paths`` in file order (``datasets`` streaming mode)."""
    import datasets

    datasets.disable_progress_bars()
    for path in paths:
        builder = _builder(path, strict=True)
        assert builder is not None
        try:
            stream = datasets.load_dataset(builder, data_files=[str(path)], split="train", streaming=True)
        except Exception as exc:  # datasets raises many types for unreadable files
            raise CorpusError(f"{path}: cannot open as {builder}: {exc}") from exc
        for index, row in enumerate(stream):
            where = f"{path.name}:{index}"
            text = row.get("text")
            if not isinstance(text, str):
                raise CorpusError(f"{where}: record has no 'text' string (keys {sorted(row)})")
            rid = row.get("id")
            rid = where if rid is None or rid == "" else str(rid)
            yield Record(rid, text, tier_index(row.get("tier"), where))


def dev_score(record_id: str) -> float:
    """A uniform number in [0, 1) from a stable hash of the record id."""
    digest = hashlib.blake2b(record_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def is_dev(record_id: str, fraction: float) -> bool:
    """Whether a record id belongs to the held-out dev slice."""
    return fraction > 0.0 and dev_score(record_id) < fraction


def window_bounds(boundary: np.ndarray, max_window: int) -> list[tuple[int, int]]:
    """Cut ``n`` letters into windows of at most ``max_window``, ending on word ends.

    A window ends after a letter whose boundary is not word-internal; a single word
    longer than ``max_window`` is cut hard.
    """
    n = int(boundary.shape[0])
    if n == 0:
        return []
    ends = np.flatnonzero(boundary != A.BND_INTERNAL) + 1  # exclusive window ends
    bounds: list[tuple[int, int]] = []
    start = 0
    while n - start > max_window:
        limit = start + max_window
        k = int(np.searchsorted(ends, limit, side="right")) - 1
        end = int(ends[k]) if k >= 0 and ends[k] > start else limit
        bounds.append((start, end))
        start = end
    bounds.append((start, n))
    return bounds


Encoder = Callable[[str], Any]


def default_encoder() -> Encoder:
    """The package codec's ``encode_planes``."""
    from stoicheia_spacy.codec import encode_planes

    return encode_planes


class _Corruptor:
    """Record -> corrupted windows, with bad-record policy and counters."""

    def __init__(self, cfg: DataConfig, sampler: Sampler, encoder: Encoder) -> None:
        self.cfg = cfg
        self.sampler = sampler
        self.encoder = encoder
        self.bad_records = 0
        self.truncated = 0

    def __call__(self, record: Record, rng: np.random.Generator) -> list[Any]:
        try:
            planes = self.encoder(record.text)
        except StoicheiaError as exc:
            if self.cfg.on_bad_record == "raise":
                raise CorpusError(f"record {record.id!r}: {exc}") from exc
            self.bad_records += 1
            if self.bad_records <= 10:
                log.warning("skipping record %r: %s", record.id, exc)
            return []
        out = []
        for start, end in window_bounds(np.asarray(planes.boundary), self.cfg.max_window):
            corrupted = self.sampler(make_example(planes[start:end]), rng)
            if len(corrupted.input_ids) > self.cfg.row_len:
                self.truncated += 1
                corrupted = _truncate(corrupted, self.cfg.row_len)
            out.append(corrupted)
        return out


def _truncate(ex: Any, n: int) -> dict[str, np.ndarray]:
    return {name: np.asarray(getattr(ex, name))[:n] for name in ROW_FIELDS}


def _get(ex: Any, name: str) -> np.ndarray:
    return np.asarray(ex[name] if isinstance(ex, dict) else getattr(ex, name))


def _length(ex: Any) -> int:
    return int(_get(ex, "input_ids").shape[0])


def pack_row(examples: Sequence[Any], row_len: int) -> dict[str, np.ndarray]:
    """Concatenate corrupted examples into one padded row with segment ids."""
    lengths = [_length(ex) for ex in examples]
    total = sum(lengths)
    if total > row_len:
        raise ValueError(f"examples of {total} positions do not fit a row of {row_len}")
    row: dict[str, np.ndarray] = {}
    for name in ROW_FIELDS:
        dtype = np.float32 if name == "char_weight" else np.int64
        arr = np.full(row_len, PAD_VALUES[name], dtype=dtype)
        if examples:
            arr[:total] = np.concatenate([_get(ex, name).astype(dtype, copy=False) for ex in examples])
        row[name] = arr
    seg = np.zeros(row_len, dtype=np.int64)
    if examples:
        seg[:total] = np.repeat(np.arange(1, len(examples) + 1, dtype=np.int64), lengths)
    row["seg_id"] = seg
    return row


def _first_fit(pending: list[Any], space: int) -> int:
    for i, ex in enumerate(pending):
        if _length(ex) <= space:
            return i
    return -1


def pack_first_fit(pending: list[Any], row_len: int) -> list[dict[str, np.ndarray]]:
    """Pack examples into rows, filling each row first-fit in order (consumes ``pending``)."""
    rows = []
    while pending:
        chosen = []
        space = row_len
        while (i := _first_fit(pending, space)) >= 0:
            ex = pending.pop(i)
            chosen.append(ex)
            space -= _length(ex)
        rows.append(pack_row(chosen, row_len))
    return rows


def _shuffled(items: Iterable[Record], buffer: int, rng: np.random.Generator) -> Iterator[Record]:
    """Seeded streaming shuffle through a buffer of ``buffer`` records."""
    if buffer <= 1:
        yield from items
        return
    pool: list[Record] = []
    for item in items:
        if len(pool) < buffer:
            pool.append(item)
            continue
        j = int(rng.integers(buffer))
        pool[j], item = item, pool[j]
        yield item
    order = rng.permutation(len(pool))
    for j in order:
        yield pool[int(j)]


class TrainStream:
    """Endless, resumable stream of packed training rows (epochs over the corpus).

    The state (epoch, records consumed in the epoch, pending corrupted windows, RNG,
    tier weights) round-trips through ``state_dict``/``load_state_dict``; resuming
    re-reads the corpus up to the position without encoding it.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        cfg: DataConfig,
        sampler: Sampler,
        *,
        seed: int,
        encoder: Encoder | None = None,
    ) -> None:
        self.paths = list(paths)
        self.cfg = cfg
        self.seed = seed
        self.corrupt = _Corruptor(cfg, sampler, encoder or default_encoder())
        self.rng = np.random.default_rng([seed, 1])
        self.epoch = 0
        self.consumed = 0
        self.accepted_in_epoch = 0
        self.pending: list[Any] = []
        self.tier_weights: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self.set_tier_weights(cfg.tier_weights)
        self.letters_packed = 0
        self._records: Iterator[Record] | None = None

    # -- state ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "consumed": self.consumed,
            "accepted_in_epoch": self.accepted_in_epoch,
            "pending": [
                {name: _get(ex, name).copy() for name in ROW_FIELDS} for ex in self.pending
            ],
            "rng": self.rng.bit_generator.state,
            "tier_weights": list(self.tier_weights),
            "letters_packed": self.letters_packed,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch = int(state["epoch"])
        self.consumed = int(state["consumed"])
        self.accepted_in_epoch = int(state["accepted_in_epoch"])
        self.pending = [dict(ex) for ex in state["pending"]]
        self.rng.bit_generator.state = state["rng"]
        w = state["tier_weights"]
        self.tier_weights = (float(w[0]), float(w[1]), float(w[2]))
        self.letters_packed = int(state["letters_packed"])
        self._records = None

    def set_tier_weights(self, weights: Sequence[float]) -> None:
        """Change the tier mixture (the anneal stages) for records read from now on."""
        if len(weights) != 3 or max(weights) <= 0:
            raise ValueError(f"tier weights need three values, one positive: {weights!r}")
        self.tier_weights = (float(weights[0]), float(weights[1]), float(weights[2]))

    # -- reading -------------------------------------------------------------------
    def _open_epoch(self) -> Iterator[Record]:
        dev = self.cfg.dev_fraction
        raw = (r for r in iter_records(self.paths) if not is_dev(r.id, dev))
        order_rng = np.random.default_rng([self.seed, 2, self.epoch])
        it = _shuffled(raw, self.cfg.shuffle_buffer, order_rng)
        for _ in range(self.consumed):  # resume: skip without encoding
            if next(it, None) is None:
                break
        return it

    def _next_record(self) -> Record:
        for _attempt in range(2):
            if self._records is None:
                self._records = self._open_epoch()
            record = next(self._records, None)
            if record is not None:
                self.consumed += 1
                return record
            if self.accepted_in_epoch == 0 and self.consumed == 0:
                raise CorpusError(f"no training records in {[str(p) for p in self.paths]} (all held out?)")
            if self.accepted_in_epoch == 0:
                raise CorpusError(
                    f"an epoch over {len(self.paths)} file(s) gave no usable windows "
                    f"at tier weights {self.tier_weights}"
                )
            self.epoch += 1
            self.consumed = 0
            self.accepted_in_epoch = 0
            self._records = None
        raise CorpusError("corpus yields no records")

    def _fill(self) -> None:
        top = max(self.tier_weights)
        while len(self.pending) < self.cfg.pack_lookahead:
            record = self._next_record()
            keep = self.rng.random() < self.tier_weights[record.tier] / top
            if not keep:
                continue
            windows = self.corrupt(record, self.rng)
            if windows:
                self.accepted_in_epoch += 1
                self.pending.extend(windows)

    def next_row(self) -> dict[str, np.ndarray]:
        """The next packed row (``row_len`` positions)."""
        chosen: list[Any] = []
        space = self.cfg.row_len
        while space > 0:
            self._fill()
            i = _first_fit(self.pending, space)
            if i < 0:
                break
            ex = self.pending.pop(i)
            chosen.append(ex)
            space -= _length(ex)
        row = pack_row(chosen, self.cfg.row_len)
        self.letters_packed += self.cfg.row_len - space
        return row

    def next_rows(self, n: int) -> list[dict[str, np.ndarray]]:
        return [self.next_row() for _ in range(n)]


def build_dev_rows(
    paths: Sequence[Path],
    cfg: DataConfig,
    sampler: Sampler,
    *,
    seed: int,
    encoder: Encoder | None = None,
) -> list[dict[str, np.ndarray]]:
    """The held-out dev slice, corrupted once with a fixed seed and packed into rows."""
    if cfg.dev_fraction <= 0:
        return []
    corrupt = _Corruptor(cfg, sampler, encoder or default_encoder())
    rng = np.random.default_rng([seed, 3])
    pending: list[Any] = []
    letters = 0
    for record in iter_records(paths):
        if not is_dev(record.id, cfg.dev_fraction):
            continue
        if cfg.dev_tier == "gold" and record.tier != 0:
            continue
        for ex in corrupt(record, rng):
            pending.append(ex)
            letters += _length(ex)
        if letters >= cfg.dev_max_letters:
            break
    return pack_first_fit(pending, cfg.row_len)
