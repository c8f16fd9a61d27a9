"""A bidirectional modified Kneser-Ney character n-gram LM (one count table, both directions).

Symbols are the 24 letter ids, ``SPACE`` (a word break) and ``UNK`` (an unknown letter: a lacuna
or a supplied letter, never predicted; it cuts every history and no n-gram holding one is
counted). An n-gram is packed into an integer key, 5 bits a symbol in text order (the first
symbol highest), ``uint32`` up to order 6 and ``uint64`` above; each order keeps ONE sorted key
array, and lookups are ``np.searchsorted`` on it. Beside the keys, per order ``k``:

* ``fwd_p`` / ``rev_p``: the discounted probability part of the n-gram in the left-to-right
  model (its last symbol given the ones before it) and in the right-to-left one (its first
  symbol given the ones after it), modified Kneser-Ney (three discounts per order from the
  count-of-counts; raw counts at the top order, continuation counts below: distinct left
  extensions for the left-to-right model, distinct right extensions for the right-to-left one);
* ``fwd_g`` / ``rev_g``: the interpolation weight of the n-gram as a history of the next order
  (``1 - Σ`` of its extensions' discounted parts, so every distribution sums to one, also after
  pruning; an n-gram that is no history has weight 1).

``P(w | h) = p(h, w) + g(h) · P(w | h')`` with ``h'`` the history less its farthest symbol, down to
the uniform distribution over the 25 predictable symbols. Pruning (``min_counts``) drops n-grams
by their raw count per order; a threshold that never falls with the order keeps every kept
n-gram's prefix and suffix, so both directions stay normalised.

:func:`save_kn` writes one uncompressed ``.npz``; :func:`load_kn` memory-maps its arrays (no copy
in RAM until pages are touched). Contexts are given nearest symbol first (``(R, order - 1)``,
``UNK`` past the available text): :meth:`KneserNeyLM.next_logprobs` scores every symbol after
(or, ``reverse=True``, before) each context, :meth:`KneserNeyLM.sequence_logprob` the
symbols of rows in either direction. No Python loop runs over characters, only over orders.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..alphabet import N_ALPHA
from ..errors import CheckpointError

__all__ = ["N_PREDICT", "SPACE", "UNK", "KneserNeyLM", "build_kn", "kn_digest", "load_kn", "save_kn"]

SPACE = N_ALPHA  # word break
UNK = N_ALPHA + 1  # unknown letter: never predicted, cuts histories
N_PREDICT = N_ALPHA + 1  # letters and SPACE
BITS = 5



def _dtype(k: int) -> type:
    return np.uint32 if BITS * k <= 32 else np.uint64


def _pack_windows(seq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys of every window of ``k`` symbols of ``seq`` without UNK, and their start positions."""
    n = len(seq) - k + 1
    if n <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    key = np.zeros(n, np.uint64)
    for j in range(k):  # over the order, not the characters
        key = (key << np.uint64(BITS)) | seq[j : j + n].astype(np.uint64)
    unk = np.concatenate([[0], np.cumsum(seq == UNK)])
    ok = (unk[k:] - unk[:-k]) == 0
    return key[ok], np.flatnonzero(ok)


def _discounts(counts: np.ndarray) -> np.ndarray:
    """Modified Kneser-Ney discounts D1, D2, D3+ (Chen & Goodman) from count-of-counts."""
    n = np.array([np.count_nonzero(counts == i) for i in (1, 2, 3, 4)], dtype=np.float64)
    if n[0] == 0 or n[1] == 0:
        return np.array([0.5, 1.0, 1.5])
    y = n[0] / (n[0] + 2 * n[1])
    d = np.array([1 - 2 * y * n[1] / n[0], 2 - 3 * y * n[2] / n[1], 3 - 4 * y * n[3] / max(n[2], 1)])
    return np.clip(d, 0.05, np.array([1.0, 2.0, 3.0]))


def _lookup(keys: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each query key in the sorted ``keys`` and whether it is there."""
    if len(keys) == 0:
        return np.zeros(len(query), np.int64), np.zeros(len(query), bool)
    q = query.astype(keys.dtype, copy=False)
    # the distinct keys, sorted: far fewer and cache-friendly binary searches of the (memory-mapped) keys
    uniq, inverse = np.unique(q, return_inverse=True)
    at = np.minimum(np.searchsorted(keys, uniq), len(keys) - 1)
    return at[inverse], (keys[at] == uniq)[inverse]


@dataclass
class KneserNeyLM:
    """Both directions of a modified Kneser-Ney LM (see the module doc); build with :func:`build_kn`."""

    order: int
    keys: list[np.ndarray] = field(default_factory=list, repr=False)  # per order 1..order
    fwd_p: list[np.ndarray] = field(default_factory=list, repr=False)
    rev_p: list[np.ndarray] = field(default_factory=list, repr=False)
    fwd_g: list[np.ndarray] = field(default_factory=list, repr=False)  # per order 1..order-1
    rev_g: list[np.ndarray] = field(default_factory=list, repr=False)
    g0: tuple[float, float] = (1.0, 1.0)  # weight of the uniform distribution, fwd / rev

    # ------------------------------------------------------------------ scoring
    def _score(self, ctx: np.ndarray, symbols: np.ndarray, reverse: bool) -> np.ndarray:
        """P(symbols[r, j] | ctx[r]) for (R, M) symbols, ctx (R, order-1) nearest first."""
        R, M = symbols.shape
        ctx = np.asarray(ctx, dtype=np.int64).reshape(R, self.order - 1)
        usable = np.argmax(np.concatenate([ctx == UNK, np.ones((R, 1), bool)], axis=1), axis=1)
        sym = symbols.astype(np.uint64)
        prob = np.full((R, M), 1.0 / N_PREDICT)
        gamma: float | np.ndarray = self.g0[1 if reverse else 0]
        p_tab, g_tab = (self.rev_p, self.rev_g) if reverse else (self.fwd_p, self.fwd_g)
        hist = np.zeros(R, np.uint64)  # packed history of the last k-1 symbols, text order
        for k in range(1, self.order + 1):
            if k > 1:
                g_idx, g_found = _lookup(self.keys[k - 2], hist)
                gamma = np.where(g_found, g_tab[k - 2][g_idx], 1.0)[:, None]
            shift = np.uint64(BITS * (k - 1))
            gram = (sym << shift) | hist[:, None] if reverse else (hist[:, None] << np.uint64(BITS)) | sym
            idx, found = _lookup(self.keys[k - 1], gram.ravel())
            p = np.where(found, p_tab[k - 1][idx], 0.0).reshape(R, M)
            new = p + gamma * prob
            prob = np.where((usable >= k - 1)[:, None], new, prob)
            if k < self.order:  # extend the history by the next-nearest context symbol
                c = ctx[:, k - 1].clip(0, (1 << BITS) - 1).astype(np.uint64)
                hist = (hist << np.uint64(BITS)) | c if reverse else (c << shift) | hist
        return prob

    def next_logprobs(self, ctx: np.ndarray, *, reverse: bool = False) -> np.ndarray:
        """``(R, 25)`` natural-log probabilities of every letter and ``SPACE`` next to each
        context (``ctx``: ``(R, order - 1)`` symbols nearest first, ``UNK`` where unknown; after
        it left to right, or before it with ``reverse``)."""
        R = len(ctx)
        cand = np.broadcast_to(np.arange(N_PREDICT, dtype=np.int64), (R, N_PREDICT))
        return np.log(self._score(ctx, cand, reverse))

    def logprob(self, ctx: np.ndarray, symbols: np.ndarray, *, reverse: bool = False) -> np.ndarray:
        """Natural-log P(symbol | context) for one symbol per context row."""
        return np.log(self._score(ctx, np.asarray(symbols, np.int64)[:, None], reverse))[:, 0]

    def contexts(self, seq: np.ndarray, positions: np.ndarray, *, reverse: bool = False) -> np.ndarray:
        """``(len(positions), order - 1)`` contexts (nearest first) of ``positions`` in ``seq``:
        the symbols before each (after it with ``reverse``), ``UNK`` past the ends."""
        c = self.order - 1
        pad = np.full(c, UNK, np.int64)
        padded = np.concatenate([pad, np.asarray(seq, np.int64), pad])
        win = np.lib.stride_tricks.sliding_window_view(padded, c)
        pos = np.asarray(positions, np.int64)
        return win[pos + c + 1] if reverse else win[pos][:, ::-1]

    def sequence_logprob(self, rows: Sequence[np.ndarray], starts: Sequence[int] | np.ndarray,
                         ends: Sequence[int] | np.ndarray | None = None, *, reverse: bool = False) -> np.ndarray:
        """Per row, the summed log-probability of its symbols ``starts[i]:ends[i]`` (default to
        the end), each given up to ``order - 1`` symbols before it (after it with ``reverse``)
        in the row; ``UNK`` symbols are not scored."""
        out = np.zeros(len(rows))
        if not len(rows):
            return out
        # all rows side by side in one padded array: one context window per scored position
        c = self.order - 1
        lens = np.array([len(r) for r in rows], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lens + c)])[:-1] + c
        flat = np.full(int(offsets[-1] + lens[-1] + c), UNK, np.int64)
        for row, at in zip(rows, offsets, strict=True):
            flat[at : at + len(row)] = row
        s = np.asarray(starts, np.int64)
        e = lens if ends is None else np.asarray(ends, np.int64)
        count = np.maximum(e - s, 0)
        owner = np.repeat(np.arange(len(rows)), count)
        pos = np.repeat(offsets + s, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))
        keep = flat[pos] != UNK
        pos, owner = pos[keep], owner[keep]
        if len(pos):
            lp = self.logprob(self.contexts(flat, pos, reverse=reverse), flat[pos], reverse=reverse)
            np.add.at(out, owner, lp)
        return out

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for name in ("keys", "fwd_p", "rev_p", "fwd_g", "rev_g") for a in getattr(self, name)))

    def sizes(self) -> list[int]:
        """Number of n-grams kept per order."""
        return [len(k) for k in self.keys]


def _group_sum(group: np.ndarray, values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Sum of ``values`` per distinct ``group`` key, aligned to the sorted ``keys`` (0 where absent)."""
    uniq, inv = np.unique(group, return_inverse=True)
    sums = np.bincount(inv, weights=values, minlength=len(uniq))
    idx, found = _lookup(keys, uniq)
    out = np.zeros(len(keys))
    out[idx[found]] = sums[found]
    return out


def build_kn(sequences: Iterable[np.ndarray], order: int = 8, min_counts: Sequence[int] | None = None,
             value_dtype: type = np.float32) -> KneserNeyLM:
    """Count the n-grams of symbol ``sequences`` (letter ids, ``SPACE``, ``UNK``; each sequence
    is its own text) and build both directions. ``min_counts[k-1]``: the raw count an n-gram of
    order ``k`` needs to be kept (non-decreasing in ``k``; default 1 everywhere)."""
    if order < 1 or BITS * order > 64:
        raise ValueError(f"order must be in 1..{64 // BITS}")
    mins = list(min_counts or [1] * order)
    if len(mins) != order or any(b < a for a, b in zip(mins, mins[1:], strict=False)):
        raise ValueError("min_counts: one non-decreasing threshold per order")
    parts = [np.append(np.asarray(s, np.uint8), np.uint8(UNK)) for s in sequences]
    seq = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    raw_keys, raw_counts = [], []
    for k in range(1, order + 1):
        keys, _ = _pack_windows(seq, k)
        u, c = np.unique(keys, return_counts=True)
        raw_keys.append(u)
        raw_counts.append(c)
    lm = KneserNeyLM(order=order)
    for k in range(1, order + 1):
        keys = raw_keys[k - 1]
        if k == order:
            c_fwd = c_rev = raw_counts[k - 1].astype(np.float64)
        else:  # continuation counts: distinct left (fwd) / right (rev) extensions among (k+1)-grams
            longer = raw_keys[k]
            suffix = longer & np.uint64((1 << (BITS * k)) - 1)
            prefix = longer >> np.uint64(BITS)
            c_fwd = _group_sum(suffix, np.ones(len(longer)), keys)
            c_rev = _group_sum(prefix, np.ones(len(longer)), keys)
        keep = raw_counts[k - 1] >= mins[k - 1]
        for name, counts, hist in (("fwd", c_fwd, keys >> np.uint64(BITS)),
                                   ("rev", c_rev, keys & np.uint64((1 << (BITS * (k - 1))) - 1) if k > 1 else keys * 0)):
            d = _discounts(counts[counts > 0])
            disc = np.where(counts >= 3, d[2], np.where(counts == 2, d[1], np.where(counts == 1, d[0], 0.0)))
            uniq, inv = np.unique(hist, return_inverse=True)
            total = np.bincount(inv, weights=counts, minlength=len(uniq))
            p = np.where(total[inv] > 0, np.maximum(counts - disc, 0.0) / np.maximum(total[inv], 1e-300), 0.0)
            p = np.where(keep, p, 0.0)
            kept_mass = np.bincount(inv, weights=p, minlength=len(uniq))
            getattr(lm, f"{name}_p").append(p[keep].astype(value_dtype))
            gamma = 1.0 - kept_mass
            if k == 1:
                lm.g0 = (float(gamma[0]), lm.g0[1]) if name == "fwd" else (lm.g0[0], float(gamma[0]))
            else:  # the weight of each history, aligned to the (k-1)-gram keys
                g = np.ones(len(raw_keys[k - 2]))
                idx, found = _lookup(raw_keys[k - 2], uniq)
                g[idx[found]] = gamma[found]
                getattr(lm, f"{name}_g").append(g)
        lm.keys.append(keys[keep].astype(_dtype(k)))
    # the history weights of the kept (k-1)-grams only
    for name in ("fwd_g", "rev_g"):
        tabs = getattr(lm, name)
        for k in range(1, order):
            keep = raw_counts[k - 1] >= mins[k - 1]
            tabs[k - 1] = tabs[k - 1][keep].astype(value_dtype)
    return lm


def _arrays(lm: KneserNeyLM) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"order": np.array([lm.order], np.int64), "g0": np.array(lm.g0, np.float64)}
    for name in ("keys", "fwd_p", "rev_p", "fwd_g", "rev_g"):
        for k, a in enumerate(getattr(lm, name)):
            arrays[f"{name}{k + 1}"] = np.ascontiguousarray(a)
    return arrays


def save_kn(lm: KneserNeyLM, path: str | Path) -> None:
    """Write ``lm`` to one uncompressed ``.npz`` (memory-mapped by :func:`load_kn`)."""
    with open(path, "wb") as handle:
        np.savez(handle, **_arrays(lm))  # type: ignore[arg-type]


def kn_digest(lm: KneserNeyLM) -> str:
    """sha256 of the model's arrays (names, dtypes and bytes): the same for every build of the
    same text and settings, whatever the zip entries' dates."""
    h = hashlib.sha256()
    for name, a in sorted(_arrays(lm).items()):
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _mmap_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an uncompressed ``.npz`` as read-only memory maps."""
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
        for info in zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                raise CheckpointError(f"{path}: {info.filename} is compressed; save with save_kn")
            fh.seek(info.header_offset)
            local = fh.read(30)
            name_len, extra_len = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
            fh.seek(info.header_offset + 30 + name_len + extra_len)
            version = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(fh)
            offset = fh.tell()
            name = info.filename.removesuffix(".npy")
            if int(np.prod(shape)) == 0:
                out[name] = np.zeros(shape, dtype)
            else:
                out[name] = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                                      order="F" if fortran else "C")
    return out


def load_kn(path: str | Path, sha256: str | None = None) -> KneserNeyLM:
    """The model saved by :func:`save_kn`, memory-mapped; a missing or damaged file, or one whose
    :func:`kn_digest` is not ``sha256`` (when given), raises ``CheckpointError``."""
    path = Path(path)
    try:
        data = _mmap_npz(path)
        order = int(data["order"][0])
        lm = KneserNeyLM(order=order, g0=(float(data["g0"][0]), float(data["g0"][1])))
        for name in ("keys", "fwd_p", "rev_p"):
            setattr(lm, name, [data[f"{name}{k}"] for k in range(1, order + 1)])
        for name in ("fwd_g", "rev_g"):
            setattr(lm, name, [data[f"{name}{k}"] for k in range(1, order)])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise CheckpointError(f"cannot read the Kneser-Ney LM {path}: {exc}") from exc
    if sha256 and kn_digest(lm) != sha256:
        raise CheckpointError(f"the Kneser-Ney LM {path} is not the pinned one (sha256 {sha256[:12]}…): "
                              "rebuild it with `make restore-lm`")
    return lm
