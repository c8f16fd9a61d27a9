"""The Stoicheia encoder (torch), with the exact tensor names of the released checkpoints."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from stoicheia_spacy.errors import InvalidInputError

from .attention import AttentionPlan, attend, build_plan
from .config import StoicheiaConfig
from .layers import GeGLU, RMSNorm, apply_rope, rope_tables

#: Positions per chunk of the position-wise steps during long inference forwards.
CHUNK = 2048


@dataclass
class EncoderOutput:
    """Per-letter logits of the five heads, the final hidden state and optionally all layers.

    ``hidden_states`` (when asked) has ``depth + 1`` entries: the embedding sum, then the
    output of every block (before ``norm_out``); ``last_hidden`` is after ``norm_out``.
    """

    char: torch.Tensor
    boundary: torch.Tensor
    dia: torch.Tensor
    cap: torch.Tensor
    punct: torch.Tensor
    last_hidden: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None


class Attention(nn.Module):
    """Multi-head self-attention: fused qkv, per-head QK RMSNorm, RoPE, output projection."""

    def __init__(self, config: StoicheiaConfig) -> None:
        super().__init__()
        d = config.d_model
        self.n_heads = config.n_heads
        self.head_dim = config.head_dim
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.qk_norm = config.qk_norm
        if config.qk_norm:
            self.q_norm = RMSNorm(self.head_dim)
            self.k_norm = RMSNorm(self.head_dim)

    def project(self, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v ``(..., H, D)`` of normed inputs ``h`` ``(..., d)``: fused qkv, QK-norm, RoPE."""
        q, k, v = self.qkv(h).unflatten(-1, (3, self.n_heads, self.head_dim)).unbind(-3)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], plan: AttentionPlan, local: bool) -> torch.Tensor:
        B, T, _ = x.shape
        q, k, v = self.project(x, *rope)
        out = attend(q, k, v, plan, local)
        return self.o(out.reshape(B, T, -1))


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(n1(x))`` then ``x + mlp(n2(x))``."""

    def __init__(self, config: StoicheiaConfig, index: int) -> None:
        super().__init__()
        self.local = not config.is_global(index)
        self.n1 = RMSNorm(config.d_model)
        self.attn = Attention(config)
        self.n2 = RMSNorm(config.d_model)
        self.mlp = GeGLU(config.d_model, config.mlp_hidden)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], plan: AttentionPlan) -> torch.Tensor:
        B, T, _ = x.shape
        if torch.is_grad_enabled() or B * T <= 2 * CHUNK:
            x = x + self.attn(self.n1(x), rope, plan, self.local)
            return x + self.mlp(self.n2(x))
        return self._forward_chunked(x, rope, plan)

    def _forward_chunked(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], plan: AttentionPlan) -> torch.Tensor:
        """Inference on long rows: every position-wise step runs on chunks of ``CHUNK``
        positions, so that norms, RoPE and the GeGLU intermediate stay cache-sized instead
        of streaming T-long temporaries through memory; only attention sees the whole row."""
        B, T, d = x.shape
        attn = self.attn
        H, D = attn.n_heads, attn.head_dim
        flat = x.reshape(B * T, d)
        cos, sin = (t.expand(B, T, 1, D).reshape(B * T, 1, D) for t in rope)
        q = flat.new_empty(B * T, H, D)
        k, v = torch.empty_like(q), torch.empty_like(q)
        for s in range(0, B * T, CHUNK):
            e = s + CHUNK
            q[s:e], k[s:e], v[s:e] = attn.project(self.n1(flat[s:e]), cos[s:e], sin[s:e])
        mixed = attend(q.view(B, T, H, D), k.view(B, T, H, D), v.view(B, T, H, D), plan, self.local)
        mixed = mixed.reshape(B * T, d)
        out = torch.empty_like(flat)
        for s in range(0, B * T, CHUNK):
            e = s + CHUNK
            y = flat[s:e] + attn.o(mixed[s:e])
            out[s:e] = y + self.mlp(self.n2(y))
        return out.view(B, T, d)


class StoicheiaEncoder(nn.Module):
    """The Stoicheia character-level encoder (released ``char_bert`` layout).

    Inputs are ``(B, T)`` integer tensors of plane ids (see ``stoicheia_spacy.alphabet``):
    ``input_ids`` (letters incl. MASK/BLANK/PAD), ``boundary``, ``dia``, ``punct``; optional
    ``seg_id`` (packed documents never attend across segments; default: PAD positions form
    their own segment), ``positions`` (RoPE positions, default ``arange(T)`` per row),
    ``cap`` (0/1, only with ``use_cap_input``; ids >= 2, the codec's UNKNOWN, read as 0),
    ``region``/``century`` (``(B,)`` or ``(B, T)``; default the last id = unknown).
    On CUDA in float32 the forward runs under bf16 autocast (set ``autocast_gpu = False``
    to disable).
    """

    def __init__(self, config: StoicheiaConfig, *, init_weights: bool = True) -> None:
        super().__init__()
        self.config = config
        d = config.d_model

        def embedding(rows: int) -> nn.Embedding:  # no normal_ pass when weights are loaded next
            return nn.Embedding(rows, d) if init_weights else nn.Embedding(rows, d, _weight=torch.empty(rows, d))

        self.e_char = embedding(config.n_char_ids)
        self.e_bnd = embedding(config.n_boundary)
        self.e_dia = embedding(config.n_dia)
        self.e_punct = embedding(config.n_punct)
        if config.use_cap_input:
            self.cap_emb = embedding(2)
            if init_weights:
                nn.init.zeros_(self.cap_emb.weight)
        if config.n_region is not None:
            self.e_region = embedding(config.n_region)
        if config.n_century is not None:
            self.e_century = embedding(config.n_century)
        self.blocks = nn.ModuleList(Block(config, i) for i in range(config.depth))
        self.norm_out = RMSNorm(d)
        self.head_char = nn.Linear(d, config.n_char_ids, bias=False)
        self.head_bnd = nn.Linear(d, config.n_boundary - 1, bias=False)
        self.head_dia = nn.Linear(d, config.n_dia - 1, bias=False)
        self.head_cap = nn.Linear(d, 2, bias=False)
        self.head_punct = nn.Linear(d, config.n_punct - 1, bias=False)
        self.autocast_gpu = True
        if init_weights:
            self.apply(self._init_weights)

    @classmethod
    def skeleton(cls, config: StoicheiaConfig) -> StoicheiaEncoder:
        """An encoder of ``config`` on the meta device: shapes only, no memory, no random
        initialisation; give it weights with ``load_state_dict(..., assign=True)``."""
        with torch.device("meta"):  # (a meta normal_ would import sympy: none is run)
            return cls(config, init_weights=False)

    @classmethod
    def empty(cls, config: StoicheiaConfig) -> StoicheiaEncoder:
        """An encoder of ``config`` whose CPU weights are allocated but never initialised,
        for weights that are loaded next (no ``normal_``/``uniform_`` pass over them)."""
        model = cls.skeleton(config)
        for module in model.modules():  # as Module.to_empty, without its meta-tensor dispatch
            for name, param in module._parameters.items():
                if param is not None:
                    module._parameters[name] = nn.Parameter(torch.empty(param.shape, dtype=param.dtype),
                                                            requires_grad=param.requires_grad)
        return model

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    # ------------------------------------------------------------------ inputs
    def _check(self, name: str, x: torch.Tensor, high: int, shape: torch.Size | None) -> None:
        if not isinstance(x, torch.Tensor):
            raise InvalidInputError(f"{name} must be a torch tensor, got {type(x).__name__}")
        if x.dtype.is_floating_point or x.dtype == torch.bool:
            raise InvalidInputError(f"{name} must hold integer ids, got dtype {x.dtype}")
        if shape is not None and x.shape != shape:
            raise InvalidInputError(f"{name} has shape {tuple(x.shape)}, expected {tuple(shape)}")
        if x.numel():
            lo, hi = torch.aminmax(x)
            if int(lo) < 0 or int(hi) >= high:
                raise InvalidInputError(f"{name} ids must lie in 0..{high - 1}, got {int(lo)}..{int(hi)}")

    def embed(
        self,
        input_ids: torch.Tensor,
        boundary: torch.Tensor,
        dia: torch.Tensor,
        punct: torch.Tensor,
        *,
        cap: torch.Tensor | None = None,
        region: torch.Tensor | None = None,
        century: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Validated sum of the input embeddings ``(B, T, d)``."""
        cfg = self.config
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            raise InvalidInputError("input_ids must be a (batch, length) integer tensor")
        shape = input_ids.shape
        self._check("input_ids", input_ids, cfg.n_char_ids, shape)
        self._check("boundary", boundary, cfg.n_boundary, shape)
        self._check("dia", dia, cfg.n_dia, shape)
        self._check("punct", punct, cfg.n_punct, shape)
        x = self.e_char(input_ids) + self.e_bnd(boundary) + self.e_dia(dia) + self.e_punct(punct)
        if cap is not None and cfg.use_cap_input:
            self._check("cap", cap, 256, shape)
            x = x + self.cap_emb(torch.where(cap >= 2, torch.zeros_like(cap), cap))
        for name, table, value in (("region", "e_region", region), ("century", "e_century", century)):
            emb = getattr(self, table, None)
            if emb is None:
                continue
            n = emb.num_embeddings
            if value is None:
                value = torch.full(shape, n - 1, dtype=torch.long, device=input_ids.device)
            if value.dim() == 1:
                value = value[:, None].expand(shape)
            self._check(name, value, n, shape)
            x = x + emb(value)
        return x

    # ----------------------------------------------------------------- forward
    def forward(
        self,
        input_ids: torch.Tensor,
        boundary: torch.Tensor,
        dia: torch.Tensor,
        punct: torch.Tensor,
        *,
        seg_id: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
        cap: torch.Tensor | None = None,
        region: torch.Tensor | None = None,
        century: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        layer_callback: Callable[[int, torch.Tensor], None] | None = None,
    ) -> EncoderOutput:
        """Encode a batch; see the class docstring for the inputs.

        ``layer_callback(i, h)`` (optional) receives every hidden state as it is produced
        (``i = 0`` embeddings, ``i = k`` after block ``k - 1``) without keeping them all.
        """
        x = self.embed(input_ids, boundary, dia, punct, cap=cap, region=region, century=century)
        B, T = input_ids.shape
        if seg_id is None:
            seg_id = (input_ids == self.config.pad_id).to(torch.long)
        else:
            self._check("seg_id", seg_id, 2**62, input_ids.shape)
        if positions is None:
            positions = torch.arange(T, device=input_ids.device).expand(B, T)
        elif positions.shape != input_ids.shape:
            raise InvalidInputError(f"positions has shape {tuple(positions.shape)}, expected {tuple(input_ids.shape)}")
        if T == 0:
            raise InvalidInputError("cannot encode an empty sequence (length 0)")
        plan = build_plan(seg_id.to(input_ids.device), self.config.char_window, self.config.attn_backend)
        rope = rope_tables(positions, self.config.head_dim)
        use_autocast = self.autocast_gpu and x.device.type == "cuda" and x.dtype == torch.float32
        ctx: Any = torch.autocast("cuda", dtype=torch.bfloat16) if use_autocast else contextlib.nullcontext()
        hidden: list[torch.Tensor] = []
        with ctx:
            if output_hidden_states:
                hidden.append(x)
            if layer_callback is not None:
                layer_callback(0, x)
            for i, block in enumerate(self.blocks):
                x = block(x, rope, plan)
                if output_hidden_states:
                    hidden.append(x)
                if layer_callback is not None:
                    layer_callback(i + 1, x)
            h = self.norm_out(x)
            out = EncoderOutput(
                char=self.head_char(h).float(),
                boundary=self.head_bnd(h).float(),
                dia=self.head_dia(h).float(),
                cap=self.head_cap(h).float(),
                punct=self.head_punct(h).float(),
                last_hidden=h,
                hidden_states=tuple(hidden) if output_hidden_states else None,
            )
        return out

    def num_parameters(self) -> int:
        """Number of parameters."""
        return sum(p.numel() for p in self.parameters())
