"""Backbone configuration mirroring the released ``config.json`` (torch-free)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stoicheia_spacy import alphabet
from stoicheia_spacy.errors import ConfigError

#: Keys every released ``config.json`` carries.
REQUIRED_KEYS: tuple[str, ...] = (
    "n_alpha",
    "mask_id",
    "blank_id",
    "pad_id",
    "n_char_ids",
    "n_boundary",
    "n_dia",
    "n_punct",
    "d_model",
    "n_heads",
    "depth",
    "char_window",
    "attn_impl",
    "qk_norm",
)

#: Accepted spellings of ``attn_impl`` and the implementation they select.
ATTN_ALIASES: dict[str, str] = {
    "sdpa": "sdpa",
    "auto": "sdpa",
    "flex": "sdpa",
    "blocked": "sdpa",
    "flash": "flash",
    "flash_attn": "flash",
    "flash_attention_2": "flash",
    "dense": "dense",
    "eager": "dense",
    "math": "dense",
}

#: Size presets: (d_model, n_heads, depth, char_window).
PRESETS: dict[str, tuple[int, int, int, int]] = {
    "tiny": (64, 4, 4, 8),
    "mini": (256, 8, 8, 256),
    "base": (512, 8, 16, 256),
    "paper": (1024, 16, 32, 256),
}


def mlp_hidden(d_model: int) -> int:
    """GeGLU hidden width: ``int(8/3 * d)`` rounded up to a multiple of 64 (2752 at d=1024)."""
    raw = int(8 / 3 * d_model)
    return ((raw + 63) // 64) * 64


@dataclass
class StoicheiaConfig:
    """Hyper-parameters of a Stoicheia backbone; field names are the ``config.json`` keys.

    ``use_cap_input`` adds the 2-row capitalization input embedding of the fine-tunes
    (``config.json`` key ``use_cap`` in the task checkpoints); ``n_region``/``n_century``
    add the restoration metadata embeddings. Unknown keys are kept in ``extra``.
    """

    n_alpha: int = alphabet.N_ALPHA
    mask_id: int = alphabet.MASK_ID
    blank_id: int = alphabet.BLANK_ID
    pad_id: int = alphabet.PAD_ID
    n_char_ids: int = alphabet.N_CHAR_IDS
    n_boundary: int = alphabet.N_BOUNDARY
    n_dia: int = alphabet.N_DIA
    n_punct: int = alphabet.N_PUNCT
    d_model: int = 1024
    n_heads: int = 16
    depth: int = 32
    char_window: int = 256
    attn_impl: str = "sdpa"
    qk_norm: bool = True
    n_region: int | None = None
    n_century: int | None = None
    use_cap_input: bool = False
    model_type: str = "char_bert"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    @property
    def head_dim(self) -> int:
        """Per-head width ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @property
    def mlp_hidden(self) -> int:
        """GeGLU hidden width."""
        return mlp_hidden(self.d_model)

    @property
    def attn_backend(self) -> str:
        """Canonical attention implementation: ``sdpa``, ``flash`` or ``dense``."""
        return ATTN_ALIASES[self.attn_impl.lower()]

    def is_global(self, layer: int) -> bool:
        """Block ``layer`` attends globally (every fourth block, i % 4 == 3)."""
        return layer % 4 == 3

    def validate(self) -> None:
        """Raise :class:`ConfigError` for inconsistent values."""
        ints = ("n_alpha", "mask_id", "blank_id", "pad_id", "n_char_ids", "n_boundary",
                "n_dia", "n_punct", "d_model", "n_heads", "depth", "char_window")
        for name in ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"config {name!r} must be an integer, got {value!r}")
        for name in ("n_char_ids", "n_boundary", "n_dia", "n_punct", "d_model", "n_heads",
                     "depth", "char_window"):
            if getattr(self, name) < 1:
                raise ConfigError(f"config {name!r} must be positive, got {getattr(self, name)}")
        if self.n_boundary < 2 or self.n_dia < 2 or self.n_punct < 2:
            raise ConfigError("n_boundary, n_dia and n_punct count an UNKNOWN id and must be >= 2")
        if self.d_model % self.n_heads:
            raise ConfigError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        if self.head_dim % 2:
            raise ConfigError(f"head dim {self.head_dim} must be even for rotary embeddings")
        for name in ("mask_id", "blank_id", "pad_id"):
            if not 0 <= getattr(self, name) < self.n_char_ids:
                raise ConfigError(f"config {name!r}={getattr(self, name)} outside 0..{self.n_char_ids - 1}")
        if not isinstance(self.attn_impl, str) or self.attn_impl.lower() not in ATTN_ALIASES:
            raise ConfigError(
                f"unknown attn_impl {self.attn_impl!r}; expected one of {sorted(ATTN_ALIASES)}"
            )
        for name in ("n_region", "n_century"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"config {name!r} must be a positive integer or absent, got {value!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoicheiaConfig:
        """Build from a ``config.json`` mapping; every released key is required."""
        if not isinstance(data, dict):
            raise ConfigError(f"a config must be a JSON object, got {type(data).__name__}")
        missing = [k for k in REQUIRED_KEYS if k not in data]
        if missing:
            raise ConfigError(f"config is missing required key(s): {', '.join(missing)}")
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        kwargs = {k: v for k, v in data.items() if k in known}
        extra = {k: v for k, v in data.items() if k not in known}
        if "use_cap_input" not in kwargs and "use_cap" in extra:
            kwargs["use_cap_input"] = bool(extra["use_cap"])
        kwargs["qk_norm"] = bool(kwargs["qk_norm"])
        return cls(**kwargs, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The ``config.json`` mapping (released keys first; optional keys only when set)."""
        out: dict[str, Any] = {"model_type": self.model_type}
        for key in REQUIRED_KEYS:
            out[key] = getattr(self, key)
        if self.n_region is not None:
            out["n_region"] = self.n_region
        if self.n_century is not None:
            out["n_century"] = self.n_century
        if self.use_cap_input:
            out["use_cap_input"] = True
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_json(cls, path: str | Path) -> StoicheiaConfig:
        """Read a ``config.json`` file."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read config {path}: {exc}") from exc
        return cls.from_dict(data)

    def to_json(self, path: str | Path) -> None:
        """Write ``config.json``."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> StoicheiaConfig:
        """A size preset (``tiny``, ``mini``, ``base``, ``paper``) with optional overrides."""
        if name not in PRESETS:
            raise ConfigError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}")
        d_model, n_heads, depth, window = PRESETS[name]
        values: dict[str, Any] = {"d_model": d_model, "n_heads": n_heads, "depth": depth,
                                  "char_window": window}
        values.update(overrides)
        return cls(**values)
