"""Pre-encoded corpora and the GPU data path.

A plane corpus is the codec's five planes of every record, concatenated and packed three
bytes per letter (``letters | boundary << 5``, ``diacritics``, ``capitals << 3 |
punctuation``), stored as one xz stream (``{split}.planes.xz``) beside the record offsets
and tiers (``{split}.index.npz``). ``PlaneStream`` keeps the planes on the training device,
cuts records into windows once (on word ends, as ``pretrain.data``), and makes each
global batch with torch ops only: an epoch-shuffled window order with tier acceptance,
one gather of the windows, ``pretrain.batched.corrupt_batch`` (the published corruption),
and packing of the corrupted windows end to end into full rows (a window that straddles a
row end continues as its own segment at the start of the next row).
"""

from __future__ import annotations

import lzma
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stoicheia_spacy.codec import CharPlanes
from stoicheia_spacy.errors import CorpusError

from .batched import FIELDS, corrupt_batch
from .config import TIER_NAMES, DataConfig
from .data import PAD_VALUES, pack_first_fit, window_bounds
from .sampling import Sampler, make_example

PLANE_NAMES: tuple[str, ...] = ("letters", "boundary", "diacritics", "capitals", "punctuation")


def pack_planes(planes: CharPlanes) -> np.ndarray:
    """``[n, 3]`` uint8: ``letters | boundary << 5``, ``diacritics``, ``capitals << 3 | punctuation``."""
    out = np.empty((len(planes), 3), dtype=np.uint8)
    out[:, 0] = planes.letters | (planes.boundary << 5)
    out[:, 1] = planes.diacritics
    out[:, 2] = (planes.capitals << 3) | planes.punctuation
    return out


def unpack_planes(packed: np.ndarray) -> dict[str, np.ndarray]:
    """The five planes of a ``pack_planes`` array."""
    return {
        "letters": packed[:, 0] & 31,
        "boundary": packed[:, 0] >> 5,
        "diacritics": packed[:, 1].copy(),
        "capitals": packed[:, 2] >> 3,
        "punctuation": packed[:, 2] & 7,
    }


@dataclass
class PlaneCorpus:
    """Records as concatenated planes: record ``i`` is ``offsets[i]:offsets[i + 1]``."""

    planes: dict[str, np.ndarray]
    offsets: np.ndarray
    tiers: np.ndarray

    def __len__(self) -> int:
        return int(self.tiers.shape[0])

    @property
    def letters(self) -> int:
        return int(self.offsets[-1])

    def windows(self, max_window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, lengths, tiers) of every record's windows (<= ``max_window``, word ends)."""
        starts, lengths, tiers = [], [], []
        bnd = self.planes["boundary"]
        for i in range(len(self)):
            a, b = int(self.offsets[i]), int(self.offsets[i + 1])
            for s, e in window_bounds(bnd[a:b], max_window):
                starts.append(a + s)
                lengths.append(e - s)
                tiers.append(int(self.tiers[i]))
        return np.asarray(starts, np.int64), np.asarray(lengths, np.int64), np.asarray(tiers, np.uint8)

    def record(self, i: int) -> CharPlanes:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return CharPlanes(**{n: self.planes[n][a:b] for n in PLANE_NAMES}, offsets=np.arange(b - a))


def write_plane_corpus(records: Iterable[tuple[CharPlanes, int]], out_dir: Path, split: str,
                       *, preset: int = 9, max_bytes: int | None = None) -> dict[str, Any]:
    """Write ``{split}.planes.xz`` and ``{split}.index.npz``; return the counts.

    With ``max_bytes``, records are taken in order until the compressed stream reaches
    about that size (the rest are not read: ``capped`` in the counts); the xz stream is
    fed record by record, so the cap costs no second compression."""
    out_dir.mkdir(parents=True, exist_ok=True)
    lengths: list[int] = []
    tiers: list[int] = []
    comp = lzma.LZMACompressor(format=lzma.FORMAT_XZ, preset=preset)
    written = 0
    capped = False
    reserve = min(2**20, (max_bytes or 0) // 4)  # what the encoder may still hold back before its flush
    with (out_dir / f"{split}.planes.xz").open("wb") as fh:
        for planes, tier in records:
            if len(planes) == 0:
                continue
            if max_bytes is not None and written >= max_bytes - reserve:
                capped = True
                break
            chunk = comp.compress(pack_planes(planes).tobytes())
            fh.write(chunk)
            written += len(chunk)
            lengths.append(len(planes))
            tiers.append(tier)
        fh.write(comp.flush())
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    np.savez_compressed(out_dir / f"{split}.index.npz", offsets=offsets, tiers=np.asarray(tiers, np.uint8))
    t = np.asarray(tiers, dtype=np.int64)
    counts: dict[str, Any] = {
        "records": len(tiers),
        "letters": int(offsets[-1]),
        "letters_by_tier": {TIER_NAMES[k]: int(np.asarray(lengths)[t == k].sum()) if len(t) else 0
                            for k in range(len(TIER_NAMES))},
    }
    if max_bytes is not None:
        counts["capped"] = capped
    return counts


def read_plane_corpus(directory: str | Path, split: str) -> PlaneCorpus:
    """Read what ``write_plane_corpus`` wrote (``CorpusError`` when absent or inconsistent)."""
    directory = Path(directory)
    path, index = directory / f"{split}.planes.xz", directory / f"{split}.index.npz"
    if not path.is_file() or not index.is_file():
        raise CorpusError(f"no pre-encoded {split!r} planes in {directory} (build a bundle: python -m pretrain bundle)")
    with lzma.open(path, "rb") as fh:
        raw = np.frombuffer(fh.read(), dtype=np.uint8)
    idx = np.load(index)
    offsets, tiers = idx["offsets"].astype(np.int64), idx["tiers"].astype(np.uint8)
    if raw.size != 3 * int(offsets[-1]):
        raise CorpusError(f"{path}: {raw.size} bytes do not match {int(offsets[-1])} letters x 3")
    return PlaneCorpus(unpack_planes(raw.reshape(-1, 3)), offsets, tiers)


def dev_rows_from_planes(corpus: PlaneCorpus, cfg: DataConfig, sampler: Sampler, *, seed: int) -> list[dict[str, np.ndarray]]:
    """The dev slice (gold records unless ``dev_tier=all``, at most ``dev_max_letters``),
    corrupted once by the published numpy sampler with a fixed seed and packed into rows."""
    rng = np.random.default_rng([seed, 3])
    pending: list[Any] = []
    letters = 0
    for i in range(len(corpus)):
        if cfg.dev_tier == "gold" and int(corpus.tiers[i]) != 0:
            continue
        planes = corpus.record(i)
        for s, e in window_bounds(planes.boundary, cfg.max_window):
            if letters >= cfg.dev_max_letters:
                break
            ex = sampler(make_example(planes[s:e]), rng)
            pending.append(ex)
            letters += len(ex.input_ids)
        if letters >= cfg.dev_max_letters:
            break
    return pack_first_fit(pending, cfg.row_len)


class PlaneStream:
    """Endless, resumable stream of packed training batches made on ``device``."""

    def __init__(self, corpus: PlaneCorpus, cfg: DataConfig, *, seed: int, device: torch.device | str = "cpu") -> None:
        self.cfg = cfg
        self.seed = seed
        self.device = torch.device(device)
        starts, lengths, tiers = corpus.windows(cfg.max_window)
        if starts.size == 0:
            raise CorpusError("the plane corpus has no letters")
        self.n_windows = int(starts.size)
        self.tiers = tiers
        self.mean_window = float(lengths.mean())
        self.starts = torch.from_numpy(starts).to(self.device)
        self.lengths = torch.from_numpy(lengths).to(self.device)
        self.planes = {n: torch.from_numpy(np.ascontiguousarray(corpus.planes[n])).to(self.device) for n in PLANE_NAMES}
        self.width = int(lengths.max())
        self.out_len = min(cfg.row_len, 2 * self.width)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)
        self.rng = np.random.default_rng([seed, 1])
        self.epoch = 0
        self.pointer = 0
        self._order = self._epoch_order()
        self.tier_weights: tuple[float, float, float] = tuple(cfg.tier_weights)  # type: ignore[assignment]
        self.buffer: dict[str, torch.Tensor] | None = None
        self.segments = 0  # windows corrupted so far (segment ids)
        self.letters_packed = 0

    # -- state ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "pointer": self.pointer,
            "rng": self.rng.bit_generator.state,
            "gen": self.gen.get_state(),
            "tier_weights": list(self.tier_weights),
            "buffer": None if self.buffer is None else {k: v.cpu() for k, v in self.buffer.items()},
            "segments": self.segments,
            "letters_packed": self.letters_packed,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch = int(state["epoch"])
        self.pointer = int(state["pointer"])
        self.rng.bit_generator.state = state["rng"]
        self.gen.set_state(state["gen"])
        w = state["tier_weights"]
        self.tier_weights = (float(w[0]), float(w[1]), float(w[2]))
        buf = state["buffer"]
        self.buffer = None if buf is None else {k: v.to(self.device) for k, v in buf.items()}
        self.segments = int(state["segments"])
        self.letters_packed = int(state["letters_packed"])
        self._order = self._epoch_order()

    def set_tier_weights(self, weights: Any) -> None:
        self.tier_weights = (float(weights[0]), float(weights[1]), float(weights[2]))

    # -- windows -------------------------------------------------------------------
    def _epoch_order(self) -> np.ndarray:
        return np.random.default_rng([self.seed, 2, self.epoch]).permutation(self.n_windows)

    def _take_windows(self, count: int) -> np.ndarray:
        """Indices of the next ``count`` accepted windows (tier acceptance, epochs)."""
        w = np.asarray(self.tier_weights, dtype=np.float64)
        accept = w / w.max()
        out: list[np.ndarray] = []
        have = 0
        for _ in range(1000):
            if self.pointer >= self.n_windows:
                self.epoch += 1
                self.pointer = 0
                self._order = self._epoch_order()
            chunk = self._order[self.pointer : self.pointer + 2 * (count - have)]
            self.pointer += chunk.size
            keep = chunk[self.rng.random(chunk.size) < accept[self.tiers[chunk]]]
            out.append(keep[: count - have])
            have += min(keep.size, count - have)
            if have >= count:
                return np.concatenate(out)
        raise CorpusError(f"no windows accepted at tier weights {self.tier_weights}")

    def _corrupt(self, count: int) -> dict[str, torch.Tensor]:
        """``count`` corrupted windows, flattened end to end with global segment ids."""
        idx = torch.from_numpy(self._take_windows(count)).to(self.device)
        starts, lengths = self.starts[idx], self.lengths[idx]
        W = int(lengths.max())
        gather = (starts[:, None] + torch.arange(W, device=self.device)[None]).clamp(max=self.planes["letters"].shape[0] - 1)
        batch = {n: p[gather].long() for n, p in self.planes.items()}
        fields, out_len, _ = corrupt_batch(batch, lengths, self.gen, out_len=self.out_len)
        keep = torch.arange(fields["input_ids"].shape[1], device=self.device)[None] < out_len[:, None]
        seg = (self.segments + torch.arange(count, device=self.device))[:, None].expand_as(keep)
        self.segments += count
        where = keep.flatten().nonzero().squeeze(1)  # one host sync per draw
        flat = {name: fields[name].flatten().index_select(0, where) for name in FIELDS}
        flat["seg"] = seg.flatten().index_select(0, where)
        return flat

    def next_batch(self, n_rows: int) -> dict[str, torch.Tensor]:
        """``n_rows`` full rows of ``row_len`` positions: the fields of ``pretrain.data``'s
        packed rows plus ``seg_id`` (1.. per segment within a row), on the device."""
        need = n_rows * self.cfg.row_len
        parts = [] if self.buffer is None else [self.buffer]
        have = 0 if self.buffer is None else int(self.buffer["seg"].shape[0])
        while have < need:
            count = max(1, int(1.1 * (need - have) / self.mean_window) + 1)
            part = self._corrupt(count)
            parts.append(part)
            have += int(part["seg"].shape[0])
        flat = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
        self.buffer = {k: v[need:] for k, v in flat.items()}
        rows = {k: v[:need].view(n_rows, self.cfg.row_len) for k, v in flat.items()}
        seg = rows.pop("seg")
        rows["seg_id"] = seg - seg[:, :1] + 1
        self.letters_packed += need
        return rows


def batch_denominators(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``pretrain.objective.denominators`` of a tensor batch (float64, on its device)."""
    from .objective import AUX_HEADS

    ignore = int(PAD_VALUES["char_target"])
    terms = [batch["char_weight"].double().sum()]
    terms += [(batch[t] != ignore).sum().double() for _, t in AUX_HEADS]
    return torch.stack(terms)


__all__ = [
    "PLANE_NAMES",
    "PlaneCorpus",
    "PlaneStream",
    "batch_denominators",
    "dev_rows_from_planes",
    "pack_planes",
    "read_plane_corpus",
    "unpack_planes",
    "write_plane_corpus",
]
