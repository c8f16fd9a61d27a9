"""Long documents and packed batches: the one windowing path of the backbone's inputs.

Three different spans are called a "window" in the paper; here each has its own name:

* the **attention window** is ``StoicheiaConfig.char_window``: local attention layers see
  that many letters on each side (:mod:`.attention`);
* the **long-document window** is ``max_length`` letters with ``overlap`` letters shared
  by neighbours (this module): a document longer than ``max_length`` is cut by
  :func:`document_windows`, each window is one segment of a forward, and every letter
  takes its output from the window where it sits at least ``overlap // 2`` letters away
  from a cut whenever possible;
* the **restoration context** is the letters the restorer keeps on each side of a gap
  (its ``context`` setting, :mod:`stoicheia_spacy.restore.beam`), not a window of this module.

:func:`pack_planes` packs the codec planes of a batch of Docs into the rows of one forward:
every Doc (or window of a long Doc) is one segment; segments are packed greedily into rows
of at most ``max_length`` positions, with a segment id per position so that packed
documents never attend to each other and positions restart at 0 in every segment (pure
numpy; the ``stoicheia_encoder`` pipe and the accentuator use it). :func:`encode_long`
runs one long document through a :class:`~.model.StoicheiaEncoder` window by window with
working memory bounded by one window (``callback`` streams the stitched pieces).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..alphabet import BND_UNKNOWN, CAP_LOWER, CAP_UNKNOWN, DIA_UNKNOWN, PAD_ID, PUNCT_UNKNOWN
from ..errors import ConfigError, InvalidInputError
from .model import EncoderOutput, StoicheiaEncoder

if TYPE_CHECKING:  # pragma: no cover
    from ..codec import CharPlanes

_HEADS = ("char", "boundary", "dia", "cap", "punct")


@dataclass
class PackedBatch:
    """Row-major (B, T) int64 inputs plus, per Doc, the flat index ``row * T + col``
    of the position whose output each of its letters takes."""

    input_ids: np.ndarray
    boundary: np.ndarray
    dia: np.ndarray
    punct: np.ndarray
    cap: np.ndarray
    seg_id: np.ndarray
    positions: np.ndarray
    doc_index: list[np.ndarray]
    #: The Doc of each segment id (``seg_id`` values of real positions index it).
    seg_doc: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: Optional (B, T) id planes fed beside the letters (``region``/``century``, :meth:`per_doc`).
    metadata: dict[str, np.ndarray] = field(default_factory=dict)

    def per_doc(self, values: Sequence[int], fill: int) -> np.ndarray:
        """A (B, T) plane holding ``values[doc]`` at every position of that Doc (every window
        of it), ``fill`` at padding: e.g. each Doc's region id."""
        table = np.append(np.asarray(values, np.int64)[self.seg_doc], fill) if len(self.seg_doc) else np.array([fill])
        return table[np.minimum(self.seg_id, len(table) - 1)]

    @property
    def n_rows(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def row_length(self) -> int:
        return int(self.input_ids.shape[1])


def document_windows(n: int, max_length: int, overlap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split ``n`` letters into long-document windows (see the module doc).

    Returns (starts, ends, owner): window ``k`` covers letters ``starts[k]:ends[k]`` and
    letter ``p`` takes its output from window ``owner[p]``, the one where it is at least
    ``overlap // 2`` letters away from a cut edge whenever possible.
    """
    if max_length < 1 or not 0 <= overlap < max_length:
        raise ConfigError(f"need 0 <= overlap < max_length, got overlap={overlap}, max_length={max_length}")
    if n <= max_length:
        return np.zeros(1, np.int64), np.full(1, n, np.int64), np.zeros(n, np.int64)
    stride = max_length - overlap
    n_win = -(-(n - max_length) // stride) + 1
    starts = np.arange(n_win, dtype=np.int64) * stride
    ends = np.minimum(starts + max_length, n)
    owner = np.clip((np.arange(n, dtype=np.int64) - overlap // 2) // stride, 0, n_win - 1)
    return starts, ends, owner


def pack_planes(planes: Sequence[CharPlanes], *, max_length: int, overlap: int) -> PackedBatch:
    """Pack the planes of several Docs into one padded (B, T) batch (see module doc)."""
    # segments: (doc, start, end); placement: (row, col)
    seg_doc: list[int] = []
    seg_bounds: list[tuple[int, int]] = []
    owners: list[tuple[np.ndarray, int]] = []  # per doc: (owner window, first segment id)
    for i, p in enumerate(planes):
        starts, ends, owner = document_windows(len(p), max_length, overlap)
        first = len(seg_doc)
        if len(p):
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
                seg_doc.append(i)
                seg_bounds.append((s, e))
        owners.append((owner, first))
    rows: list[list[int]] = []
    fill: list[int] = []
    place: list[tuple[int, int]] = []
    for k, (s, e) in enumerate(seg_bounds):
        length = e - s
        if not rows or fill[-1] + length > max_length:
            rows.append([])
            fill.append(0)
        place.append((len(rows) - 1, fill[-1]))
        rows[-1].append(k)
        fill[-1] += length
    n_rows, width = len(rows), max(fill, default=0)
    shape = (n_rows, width)
    input_ids = np.full(shape, PAD_ID, np.int64)
    boundary = np.full(shape, BND_UNKNOWN, np.int64)
    dia = np.full(shape, DIA_UNKNOWN, np.int64)
    punct = np.full(shape, PUNCT_UNKNOWN, np.int64)
    cap = np.full(shape, CAP_LOWER, np.int64)
    positions = np.zeros(shape, np.int64)
    # PAD positions form their own segment: give them an id no real segment uses
    seg_id = np.full(shape, len(seg_bounds), np.int64)
    seg_start = np.zeros(len(seg_bounds), np.int64)
    for k, ((s, e), (r, c)) in enumerate(zip(seg_bounds, place, strict=True)):
        p = planes[seg_doc[k]]
        cols = slice(c, c + e - s)
        input_ids[r, cols] = p.letters[s:e]
        boundary[r, cols] = p.boundary[s:e]
        dia[r, cols] = p.diacritics[s:e]
        punct[r, cols] = p.punctuation[s:e]
        caps = p.capitals[s:e]
        cap[r, cols] = np.where(caps == CAP_UNKNOWN, CAP_LOWER, caps)
        positions[r, cols] = np.arange(e - s)
        seg_id[r, cols] = k
        seg_start[k] = r * width + c - s
    doc_index: list[np.ndarray] = []
    for owner, first_seg in owners:
        seg = owner + first_seg
        if owner.size:
            doc_index.append(seg_start[seg] + np.arange(owner.size, dtype=np.int64))
        else:
            doc_index.append(np.zeros(0, np.int64))
    return PackedBatch(input_ids, boundary, dia, punct, cap, seg_id, positions, doc_index,
                       np.asarray(seg_doc, np.int64))


def kept_ranges(n: int, max_length: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """``(start, end, keep_lo, keep_hi)`` per window of :func:`document_windows`: letters
    ``keep_lo:keep_hi`` take their output from window ``start:end``; the keep ranges tile ``0..n``."""
    starts, ends, owner = document_windows(n, max_length, overlap)
    cuts = np.searchsorted(owner, np.arange(len(starts) + 1), side="left")
    return [(int(s), int(e), int(cuts[k]), int(cuts[k + 1]))
            for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True))]


def _row(x: torch.Tensor | None, name: str, length: int | None) -> torch.Tensor | None:
    if x is None:
        return None
    if x.dim() == 1:
        x = x[None]
    if x.dim() != 2 or x.shape[0] != 1 or (length is not None and x.shape[1] != length):
        raise InvalidInputError(f"encode_long takes one document: {name} must be (T,) or (1, T), got {tuple(x.shape)}")
    return x


def encode_long(
    model: StoicheiaEncoder,
    input_ids: torch.Tensor,
    boundary: torch.Tensor,
    dia: torch.Tensor,
    punct: torch.Tensor,
    *,
    max_length: int = 4096,
    overlap: int = 512,
    layers: Sequence[int] | None = None,
    callback: Callable[[int, int, EncoderOutput], None] | None = None,
    seg_id: torch.Tensor | None = None,
    cap: torch.Tensor | None = None,
    region: torch.Tensor | None = None,
    century: torch.Tensor | None = None,
) -> EncoderOutput | None:
    """Encode one document (``(T,)`` or ``(1, T)`` plane tensors) in long-document windows.

    Returns an :class:`EncoderOutput` with batch size 1 whose ``hidden_states`` holds only
    the layers listed in ``layers`` (indices into embeddings + blocks, ``0..depth``; None =
    none kept), in that order. With ``callback(lo, hi, piece)`` each stitched piece
    (positions ``lo:hi``, batch 1) is handed over instead and the function returns None.
    Runs without autograd.
    """
    ids = _row(input_ids, "input_ids", None)
    assert ids is not None
    T = int(ids.shape[1])
    if T == 0:
        raise InvalidInputError("cannot encode an empty document")
    planes = [_row(boundary, "boundary", T), _row(dia, "dia", T), _row(punct, "punct", T)]
    extra = {"seg_id": _row(seg_id, "seg_id", T), "cap": _row(cap, "cap", T), "region": region, "century": century}
    depth = model.config.depth
    wanted = list(layers) if layers is not None else []
    for layer in wanted:
        if not 0 <= layer <= depth:
            raise InvalidInputError(f"layer {layer} outside 0..{depth}")
    result: dict[str, torch.Tensor] = {}
    kept: list[torch.Tensor] = []
    with torch.no_grad():
        for start, end, lo, hi in kept_ranges(T, max_length, overlap):
            grabbed: dict[int, torch.Tensor] = {}
            a, b = lo - start, hi - start

            def grab(i: int, h: torch.Tensor, a: int = a, b: int = b, grabbed: dict[int, torch.Tensor] = grabbed) -> None:
                if i in wanted:
                    grabbed[i] = h[:, a:b].clone()

            kwargs: dict[str, Any] = {
                k: (v[:, start:end] if isinstance(v, torch.Tensor) and v.dim() == 2 and v.shape[1] == T else v)
                for k, v in extra.items()
            }
            out = model(ids[:, start:end], *(p[:, start:end] for p in planes if p is not None),
                        layer_callback=grab if wanted else None, **kwargs)
            piece = EncoderOutput(
                **{h: getattr(out, h)[:, a:b] for h in _HEADS},
                last_hidden=out.last_hidden[:, a:b],
                hidden_states=tuple(grabbed[i] for i in wanted) if wanted else None,
            )
            if callback is not None:
                callback(lo, hi, piece)
                continue
            if not result:
                for h in (*_HEADS, "last_hidden"):
                    t = getattr(piece, h)
                    result[h] = t.new_empty((1, T, t.shape[-1]))
                kept = [t.new_empty((1, T, t.shape[-1])) for t in piece.hidden_states or ()]
            for h in (*_HEADS, "last_hidden"):
                result[h][:, lo:hi] = getattr(piece, h)
            for dst, src in zip(kept, piece.hidden_states or (), strict=True):
                dst[:, lo:hi] = src
    if callback is not None:
        return None
    return EncoderOutput(**result, hidden_states=tuple(kept) if wanted else None)
