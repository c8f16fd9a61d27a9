"""Building blocks of the backbone: RMSNorm, rotary embeddings, GeGLU MLP."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

ROPE_BASE = 10000.0
NORM_EPS = 1e-6


class RMSNorm(nn.Module):
    """RMSNorm with a weight only (tensor name ``w``), eps 1e-6, computed in float32."""

    def __init__(self, dim: int, eps: float = NORM_EPS) -> None:
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (xf * self.w.float()).to(x.dtype)


def rope_tables(positions: torch.Tensor, head_dim: int, base: float = ROPE_BASE) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables ``(B, T, 1, head_dim)`` (rotate-half layout) for integer positions ``(B, T)``."""
    half = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(half, device=positions.device, dtype=torch.float32) * 2 / head_dim))
    angles = positions.to(torch.float32)[..., None] * inv_freq
    angles = torch.cat([angles, angles], dim=-1)[:, :, None, :]
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``(B, T, H, D)`` with the rotate-half convention."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    rotated = torch.cat([-x2, x1], dim=-1)
    return (x * cos + rotated * sin).to(x.dtype)


class GeGLU(nn.Module):
    """``wo(gelu(a) * b)`` where ``a, b`` are the halves of ``wi(x)``; no biases."""

    def __init__(self, d_model: int, hidden: int) -> None:
        super().__init__()
        self.wi = nn.Linear(d_model, 2 * hidden, bias=False)
        self.wo = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.wi(x).chunk(2, dim=-1)
        return self.wo(F.gelu(a) * b)
