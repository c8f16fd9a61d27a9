"""Banded (local) and segment-restricted (global) attention for the Stoicheia backbone.

Three interchangeable implementations, chosen by ``StoicheiaConfig.attn_impl``:

* ``sdpa`` (default): local blocks split the sequence into blocks of ``w`` queries that
  attend to their own and both neighbouring blocks (``3w`` keys) under a ``w x 3w``
  band + segment mask, all blocks in one ``scaled_dot_product_attention`` call: O(T*w)
  time and memory. Global blocks run SDPA per packed segment (segments of equal length
  batched together), so a packed row costs the sum of squared segment lengths.
* ``flash``: ``flash_attn_varlen_func`` with ``cu_seqlens`` from the segments and
  ``window_size=(w-1, w-1)``; used only on CUDA with the ``flash_attn`` package,
  otherwise ``sdpa`` runs.
* ``dense``: the O(T^2) reference with an explicit mask and softmax.

Masks: position ``i`` attends to ``j`` iff ``seg[i] == seg[j]`` (same row) and, in local
blocks, ``|i - j| < w``. All tensors here are laid out ``(B, T, H, D)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

try:  # pragma: no cover - optional GPU dependency
    from flash_attn import flash_attn_varlen_func as _flash_varlen
except Exception:
    _flash_varlen = None


def flash_available(device: torch.device) -> bool:
    """True when the flash-attn kernel can run on ``device``."""
    return _flash_varlen is not None and device.type == "cuda"


@dataclass
class AttentionPlan:
    """Everything the attention layers of one forward share (built once from ``seg_id``).

    ``seg`` holds row-distinct, non-negative segment ids ``(B, T)``; ``runs`` are the
    contiguous segment runs as ``(flat_start, length)`` over the flattened ``B*T`` axis;
    ``contiguous`` is False when a segment id reappears after another one in a row (then
    global attention falls back to a masked call).
    """

    seg: torch.Tensor
    char_window: int
    backend: str
    runs: list[tuple[int, int]]
    contiguous: bool
    _cache: dict[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.seg.shape[0]), int(self.seg.shape[1])

    # ----------------------------------------------------------------- builders
    def local_block_mask(self, block: int | None = None) -> torch.Tensor:
        """Band + segment mask ``(B*n, 1, b, b + 2w)`` of the blocked local attention with query
        blocks of ``b = block`` positions (default ``w``: ``(B*n, 1, w, 3w)``)."""
        w = self.char_window
        b = w if block is None else block
        key = "local" if b == w else f"local{b}"
        if key not in self._cache:
            B, T = self.shape
            n = -(-T // b)
            Tp = n * b
            segp = F.pad(self.seg, (0, Tp - T), value=-1).reshape(-1)  # padding: -1
            segq = segp.view(B * n, b)
            segk = F.pad(segp, (w, w), value=-1).unfold(0, b + 2 * w, b)  # (B*n, b + 2w)
            qi = torch.arange(b, device=segp.device)
            kj = torch.arange(b + 2 * w, device=segp.device) - w
            band = (kj[None, :] - qi[:, None]).abs() < w
            mask = (segq[:, :, None] == segk[:, None, :]) & band
            self._cache[key] = mask[:, None]
        return self._cache[key]

    def dense_mask(self, local: bool) -> torch.Tensor:
        """Full boolean mask ``(B, 1, T, T)`` (reference path only)."""
        key = "dense_local" if local else "dense_global"
        if key not in self._cache:
            T = self.shape[1]
            mask = self.seg[:, :, None] == self.seg[:, None, :]
            if local:
                idx = torch.arange(T, device=self.seg.device)
                mask = mask & ((idx[None, :] - idx[:, None]).abs() < self.char_window)
            self._cache[key] = mask[:, None]
        return self._cache[key]

    def global_groups(self) -> list[tuple[int, torch.Tensor | None]]:
        """Segment runs grouped by length: ``(length, flat index (G, L) or None for 'all')``."""
        if "groups" not in self._cache:
            B, T = self.shape
            groups: list[tuple[int, torch.Tensor | None]] = []
            if len(self.runs) == B and all(length == T for _, length in self.runs):
                groups.append((T, None))  # one segment per row: attention over the whole rows
            else:
                by_len: dict[int, list[int]] = {}
                for start, length in self.runs:
                    by_len.setdefault(length, []).append(start)
                for length, starts in by_len.items():
                    st = torch.tensor(starts, device=self.seg.device)
                    idx = st[:, None] + torch.arange(length, device=self.seg.device)[None, :]
                    groups.append((length, idx))
            self._cache["groups"] = groups
        return self._cache["groups"]

    def cu_seqlens(self) -> tuple[torch.Tensor, int]:
        """``cu_seqlens`` (int32) and max length of the runs, for flash-attn varlen."""
        if "cu" not in self._cache:
            lengths = [length for _, length in self.runs]
            cu = torch.zeros(len(lengths) + 1, dtype=torch.int32)
            cu[1:] = torch.cumsum(torch.tensor(lengths, dtype=torch.int64), 0).to(torch.int32)
            self._cache["cu"] = (cu.to(self.seg.device), max(lengths))
        return self._cache["cu"]


def build_plan(seg_id: torch.Tensor, char_window: int, backend: str) -> AttentionPlan:
    """Analyse the segment ids ``(B, T)`` of one forward into an :class:`AttentionPlan`."""
    B, T = seg_id.shape
    seg = seg_id.to(torch.long)
    seg = seg - seg.min()
    span = int(seg.max()) + 1
    seg = seg + torch.arange(B, device=seg.device)[:, None] * span  # distinct across rows
    flat = seg.reshape(-1)
    change = torch.ones_like(flat, dtype=torch.bool)
    change[1:] = flat[1:] != flat[:-1]
    starts_t = torch.nonzero(change).flatten()
    n_runs = int(starts_t.numel())
    contiguous = n_runs == int(torch.unique(flat).numel())
    starts = starts_t.tolist()
    ends = starts[1:] + [B * T]
    runs = [(s, e - s) for s, e in zip(starts, ends, strict=True)]
    return AttentionPlan(seg=seg, char_window=char_window, backend=backend, runs=runs, contiguous=contiguous)


# --------------------------------------------------------------------- kernels
def dense_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Reference attention: explicit scores, mask ``(B, 1, T, T)`` and softmax."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.einsum("bihd,bjhd->bhij", q.float(), k.float()) * scale
    scores = scores.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.einsum("bhij,bjhd->bihd", probs, v.float()).to(q.dtype)


def blocked_local_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, plan: AttentionPlan,
                            block: int | None = None) -> torch.Tensor:
    """Local attention ``|i - j| < w`` in O(T*w): blocks of ``b`` queries (``block``, default
    ``w``) x ``b + 2w`` keys. Smaller blocks read fewer masked keys (``b = w/4``: 576 keys per
    query at ``w = 256`` instead of 768) at the cost of more, smaller kernel calls."""
    B, T, H, D = q.shape
    w = plan.char_window
    b = w if block is None else block
    n = -(-T // b)
    Tp = n * b
    if Tp != T:
        pad = (0, 0, 0, 0, 0, Tp - T)
        q, k, v = F.pad(q, pad), F.pad(k, pad), F.pad(v, pad)
    qb = q.view(B, n, b, H, D).permute(0, 1, 3, 2, 4).reshape(B * n, H, b, D)

    def windows(x: torch.Tensor) -> torch.Tensor:
        flat = F.pad(x.reshape(B * Tp, H, D), (0, 0, 0, 0, w, w))
        # (B*n, H, D, b + 2w) overlapping view -> (B*n, H, b + 2w, D)
        return flat.unfold(0, b + 2 * w, b).transpose(-1, -2)

    out = F.scaled_dot_product_attention(qb, windows(k), windows(v), attn_mask=plan.local_block_mask(block))
    out = out.view(B, n, H, b, D).permute(0, 1, 3, 2, 4).reshape(B, Tp, H, D)
    return out[:, :T] if Tp != T else out


def segment_global_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, plan: AttentionPlan) -> torch.Tensor:
    """Global attention restricted to each packed segment (one SDPA call per segment length)."""
    B, T, H, D = q.shape
    if not plan.contiguous:
        mask = plan.dense_mask(local=False)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=mask)
        return out.transpose(1, 2)
    groups = plan.global_groups()
    if len(groups) == 1 and groups[0][1] is None:
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return out.transpose(1, 2)
    qf, kf, vf = q.reshape(B * T, H, D), k.reshape(B * T, H, D), v.reshape(B * T, H, D)
    out_f = torch.empty_like(qf)
    for _length, idx in groups:
        assert idx is not None
        og = F.scaled_dot_product_attention(
            qf[idx].transpose(1, 2), kf[idx].transpose(1, 2), vf[idx].transpose(1, 2)
        )
        out_f[idx] = og.transpose(1, 2).to(out_f.dtype)  # SDPA under autocast returns bf16
    return out_f.view(B, T, H, D)


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, plan: AttentionPlan, local: bool) -> torch.Tensor:  # pragma: no cover - needs CUDA + flash_attn
    """flash-attn varlen path: one call over all packed segments of the batch."""
    assert _flash_varlen is not None
    B, T, H, D = q.shape
    cu, max_len = plan.cu_seqlens()
    half = q.dtype if q.dtype in (torch.float16, torch.bfloat16) else torch.bfloat16
    window = (plan.char_window - 1, plan.char_window - 1) if local else (-1, -1)
    out = _flash_varlen(
        q.reshape(B * T, H, D).to(half),
        k.reshape(B * T, H, D).to(half),
        v.reshape(B * T, H, D).to(half),
        cu,
        cu,
        max_len,
        max_len,
        dropout_p=0.0,
        softmax_scale=1.0 / math.sqrt(D),
        causal=False,
        window_size=window,
    )
    return out.view(B, T, H, D).to(q.dtype)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, plan: AttentionPlan, local: bool,
           query_block: int | None = None) -> torch.Tensor:
    """Dispatch one attention call ``(B, T, H, D) -> (B, T, H, D)`` to the plan's backend;
    ``query_block``: the query block of the blocked local attention (default the window)."""
    backend = plan.backend
    if backend == "flash" and plan.contiguous and flash_available(q.device):
        return flash_attention(q, k, v, plan, local)
    if backend == "dense":
        return dense_attention(q, k, v, plan.dense_mask(local))
    if local:
        if plan.shape[1] <= plan.char_window and plan.contiguous:
            return segment_global_attention(q, k, v, plan)  # whole row is inside the band
        return blocked_local_attention(q, k, v, plan, query_block)
    return segment_global_attention(q, k, v, plan)
