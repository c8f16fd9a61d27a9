"""Fused inference forward of a transformer block for CPU precision views.

:class:`FusedBlock` is a :class:`~stoicheia_spacy.backbone.model.Block` (same children, same
tensor names) whose inference forward spends fewer passes over memory: the position-wise
steps run on chunks of :data:`~stoicheia_spacy.backbone.model.CHUNK` positions, the
residual additions are fused into the output projections, the QK-norm weights are folded
into the rotary tables (one multiply-add over q and k together instead of seven passes), and
the linear layers run through oneDNN (``torch.ops.mkldnn._linear_pointwise``) on the float32
weights themselves instead of the BLAS ``aten::mm`` path, which on CPUs that MKL does not
tune for (AMD's) runs at about half the oneDNN rate. Under int8 the linears are dynamically
quantised ones, under bfloat16 bf16 copies fed bf16 activations; the residual stream, the
norms and the attention stay float32 in every case; the local attention reads query blocks of
:data:`LOCAL_QUERY_BLOCK` positions (fewer masked keys than the reference's window-sized ones). The float32 arithmetic is the same as
:class:`Block`'s up to the order of float32 roundings (letter logits within ~1e-5).
"""

from __future__ import annotations

import copy
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from .attention import AttentionPlan, attend
from .model import CHUNK, Block

#: Query block of the fused blocks' local attention (the reference uses the window, 256 at the
#: released shape): 64 queries read 64 + 2w keys, a quarter fewer masked ones (measured ~20 %
#: faster local attention at w = 256), with the same float32 arithmetic per query.
LOCAL_QUERY_BLOCK = 64


def onednn_available() -> bool:
    """True when this torch build can run float32 linears through oneDNN."""
    return bool(torch.backends.mkldnn.is_available()) and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def linear(module: nn.Module, x: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
    """``module(x) (+ residual)`` in float32, by the kind of linear ``module`` is (module doc)."""
    if isinstance(module, DynamicLinear):
        out = module(x)
        return out if residual is None else out.add_(residual)
    weight = cast(torch.Tensor, module.weight)
    if weight.dtype == torch.bfloat16:
        out = F.linear(x.to(torch.bfloat16), weight).float()
        return out if residual is None else out.add_(residual)
    if residual is None:
        return torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [], "")
    return torch.ops.mkldnn._linear_pointwise.binary(x, residual, weight, None, "add")


def _rms(x: torch.Tensor, weight: torch.Tensor | None, eps: float) -> torch.Tensor:
    """RMSNorm over the last axis (float32 input), times ``weight`` when given."""
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return out if weight is None else out.mul_(weight)


class FusedBlock(Block):
    """A block computing its inference forward as the module doc says (build with :func:`fuse`)."""

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], plan: AttentionPlan) -> torch.Tensor:
        """The block's output, without gradient (views run inference; training runs the float32 Block)."""
        with torch.no_grad():
            return self._forward(x, rope, plan)

    def _forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], plan: AttentionPlan) -> torch.Tensor:
        B, T, d = x.shape
        attn = self.attn
        H, D = attn.n_heads, attn.head_dim
        half = D // 2
        flat = x.reshape(B * T, d)
        cos, sin = (t.expand(B, T, 1, D).reshape(B * T, 1, 1, D) for t in rope)
        # rot(y) * sin == swap(y) * (sign * sin); with QK-norm weights w (per q and k):
        # rope(n * w) == n * (w * cos) + swap(n) * (sign * swap(w) * sin)
        sign = torch.ones(D, dtype=cos.dtype, device=cos.device)
        sign[:half] = -1
        if attn.qk_norm:
            w = torch.stack([attn.q_norm.w, attn.k_norm.w]).float()[:, None, :]  # (2, 1, D)
            w_cos, w_sin = w, sign * torch.cat([w[..., half:], w[..., :half]], -1)
            eps_qk: float | None = attn.q_norm.eps
        else:
            w_cos, w_sin, eps_qk = torch.ones(1, dtype=cos.dtype), sign, None
        qkv = flat.new_empty(B * T, 3, H, D)
        for s in range(0, B * T, CHUNK):
            e = min(s + CHUNK, B * T)
            y = linear(attn.qkv, _rms(flat[s:e], self.n1.w, self.n1.eps)).view(e - s, 3, H, D)
            qk = y[:, :2]
            if eps_qk is not None:
                qk = _rms(qk, None, eps_qk)
            swapped = torch.cat([qk[..., half:], qk[..., :half]], -1)
            torch.addcmul(qk * (cos[s:e] * w_cos), swapped, sin[s:e] * w_sin, out=qkv[s:e, :2])
            qkv[s:e, 2] = y[:, 2]
        q, k, v = (qkv[:, i].view(B, T, H, D) for i in range(3))
        block = LOCAL_QUERY_BLOCK if plan.char_window > LOCAL_QUERY_BLOCK else None
        mixed = attend(q, k, v, plan, self.local, block).reshape(B * T, d)
        out = torch.empty_like(flat)
        mlp = self.mlp
        hidden = mlp.wo.in_features
        for s in range(0, B * T, CHUNK):
            e = min(s + CHUNK, B * T)
            y = linear(attn.o, mixed[s:e], flat[s:e])
            ab = linear(mlp.wi, _rms(y, self.n2.w, self.n2.eps))
            out[s:e] = linear(mlp.wo, F.gelu(ab[:, :hidden]).mul_(ab[:, hidden:]), y)
        return out.view(B, T, d)


def fuse(block: Block, convert: Any) -> FusedBlock:
    """``block`` as a :class:`FusedBlock` sharing its norms, with each linear layer replaced by
    ``convert(linear)`` (the float module itself for float32)."""
    out: Any = copy.copy(block)
    out.__class__ = FusedBlock
    out._modules = dict(block._modules)
    for owner, names in (("attn", ("qkv", "o")), ("mlp", ("wi", "wo"))):
        child = copy.copy(block._modules[owner])
        assert child is not None
        child._modules = dict(child._modules)
        for name in names:
            child._modules[name] = convert(child._modules[name])
        out._modules[owner] = child
    out.eval()
    return out


__all__ = ["FusedBlock", "fuse", "linear", "onednn_available"]
