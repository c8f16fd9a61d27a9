"""Run configuration: a model preset, a training preset, and ``--set`` overrides.

There is no file per run: a run is ``--preset mini --train-preset cpu`` plus
``--set train.lr=1e-3 model.depth=4`` style overrides, and the resolved configuration
is written once into the run directory (``run.json``) so ``export`` and resume can
read it back.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from stoicheia_spacy.errors import ConfigError

#: The published tier weights (gold : silver : bronze) and the two anneal stages.
TIER_NAMES: tuple[str, ...] = ("gold", "silver", "bronze")
PUBLISHED_TIER_WEIGHTS: tuple[float, float, float] = (1.0, 1.0, 0.3)
ANNEAL_STAGE_1: tuple[float, float, float] = (1.0, 1.0, 0.0)
ANNEAL_STAGE_2: tuple[float, float, float] = (1.0, 0.0, 0.0)


@dataclass
class DataConfig:
    """How records become packed training rows."""

    row_len: int = 8192  # letters per packed row
    max_window: int = 4096  # records are windowed to at most this many letters
    dev_fraction: float = 0.005  # share of record ids held out (deterministic hash)
    dev_max_letters: int = 200_000  # cap on the dev slice (letters before corruption)
    shuffle_buffer: int = 1024  # records in the streaming shuffle buffer (0 = none)
    pack_lookahead: int = 16  # corrupted windows kept for first-fit packing
    tier_weights: tuple[float, float, float] = PUBLISHED_TIER_WEIGHTS
    anneal_stage_2_at: float = 0.5  # decay progress at which silver is dropped too
    dev_tier: str = "gold"  # tier of the dev slice: gold | all
    sampler: str = "published"  # corruption: published (pretrain.corruption) | iid (15 % stand-in)
    on_bad_record: str = "warn"  # a record the codec rejects: warn (skip, logged and counted) | raise


@dataclass
class TrainConfig:
    """Optimiser, schedule and loop settings (published defaults where published)."""

    lr: float = 3e-4
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.1  # on matrices only
    eps: float = 1e-8
    clip: float = 1.0
    warmup_frac: float = 0.04
    final_lr_frac: float = 0.02
    decay_frac: float = 0.2  # cosine decay length as a share of max_steps
    patience: int = 5  # dev evaluations without improvement before the decay starts
    min_delta: float = 1e-4  # an improvement smaller than this does not count
    max_steps: int = 10_000
    micro_rows: int = 1  # rows per micro-batch per process
    accum: int = 1  # micro-batches per optimiser step per process
    aux_weight: float = 0.1
    eval_every: int = 200
    ckpt_every: int = 200
    log_every: int = 10
    seed: int = 0
    device: str = "auto"  # auto | cpu | cuda
    dist: str = "ddp"  # ddp | fsdp (only used under torchrun with WORLD_SIZE > 1)
    compile: bool = False
    bf16: bool = True  # bf16 autocast on CUDA (ignored on CPU)
    threads: int = 0  # torch CPU threads (0 = leave torch's default)
    fail_at_step: int = -1  # testing hook: raise after this step completed (crash simulation)
    time_budget_s: float = 0.0  # > 0: train for this many seconds in all (max_steps set after calibration)
    call_budget_s: float = 0.0  # > 0: checkpoint and stop this process after this many seconds (chain steps)
    calibrate_steps: int = 20  # steps timed (after 2 warm-up steps) to turn time_budget_s into max_steps


@dataclass
class RunConfig:
    """Everything a run needs: model preset + overrides, data and train settings."""

    preset: str = "mini"
    model_overrides: dict[str, Any] = field(default_factory=dict)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def global_rows(self, world_size: int) -> int:
        """Rows in one optimiser step across all processes."""
        return self.train.micro_rows * self.train.accum * world_size

    def to_dict(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "model_overrides": dict(self.model_overrides),
            "data": dataclasses.asdict(self.data),
            "train": dataclasses.asdict(self.train),
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunConfig:
        cfg = cls(preset=str(raw.get("preset", "mini")), model_overrides=dict(raw.get("model_overrides", {})))
        for section in ("data", "train"):
            for key, value in dict(raw.get(section, {})).items():
                _set_field(getattr(cfg, section), section, key, value)
        return cfg

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    def model_config(self) -> Any:
        """The backbone ``StoicheiaConfig`` of this run (preset + model overrides)."""
        from stoicheia_spacy.backbone import StoicheiaConfig

        base = StoicheiaConfig.preset(self.preset).to_dict()
        unknown = set(self.model_overrides) - set(base) - {"use_cap_input", "n_region", "n_century"}
        if unknown:
            raise ConfigError(f"unknown model keys {sorted(unknown)}; known: {sorted(base)}")
        base.update(self.model_overrides)
        return StoicheiaConfig.from_dict(base)


#: Training hyper-parameter presets (model size comes from ``--preset``).
TRAIN_PRESETS: dict[str, dict[str, Any]] = {
    # the published recipe on GPUs: 8192-letter rows, dev-driven anneal
    "published": {},
    # CPU pretraining of a small model in the background (the shipped default on CPU)
    "cpu": {
        "data.row_len": 2048,
        "data.max_window": 1024,
        "data.dev_max_letters": 50_000,
        "train.micro_rows": 2,
        "train.accum": 1,
        "train.eval_every": 250,
        "train.ckpt_every": 250,
        "train.patience": 4,
        "train.max_steps": 20_000,
        "train.lr": 1e-3,
    },
    # seconds-long smoke runs and tests
    "smoke": {
        "data.row_len": 256,
        "data.max_window": 128,
        "data.dev_max_letters": 2_000,
        "data.shuffle_buffer": 16,
        "data.pack_lookahead": 4,
        "train.micro_rows": 2,
        "train.max_steps": 20,
        "train.eval_every": 5,
        "train.ckpt_every": 5,
        "train.log_every": 1,
        "train.patience": 2,
        "train.lr": 1e-3,
    },
}


def _coerce(current: Any, value: Any, name: str) -> Any:
    """Convert ``value`` (often a command-line string) to the type of ``current``."""
    if isinstance(value, str):
        if isinstance(current, bool):
            low = value.lower()
            if low in {"1", "true", "yes", "on"}:
                return True
            if low in {"0", "false", "no", "off"}:
                return False
            raise ConfigError(f"{name}: expected a boolean, got {value!r}")
        if isinstance(current, tuple):
            parts = [p for p in value.strip("()[] ").split(",") if p.strip()]
            if len(parts) != len(current):
                raise ConfigError(f"{name}: expected {len(current)} comma-separated values, got {value!r}")
            return tuple(_coerce(c, p.strip(), name) for c, p in zip(current, parts, strict=True))
        try:
            if isinstance(current, int):
                return int(float(value)) if "e" in value.lower() else int(value)
            if isinstance(current, float):
                return float(value)
        except ValueError as exc:
            raise ConfigError(f"{name}: cannot parse {value!r} as {type(current).__name__}") from exc
        return value
    if isinstance(current, tuple) and isinstance(value, list | tuple):
        return tuple(_coerce(c, v, name) for c, v in zip(current, value, strict=True))
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _set_field(obj: Any, section: str, key: str, value: Any) -> None:
    names = {f.name for f in dataclasses.fields(obj)}
    if key not in names:
        raise ConfigError(f"unknown setting {section}.{key}; known: {sorted(names)}")
    setattr(obj, key, _coerce(getattr(obj, key), value, f"{section}.{key}"))


def apply_override(cfg: RunConfig, assignment: str | tuple[str, Any]) -> None:
    """Apply one ``section.key=value`` override (sections: model, data, train)."""
    if isinstance(assignment, str):
        if "=" not in assignment:
            raise ConfigError(f"override {assignment!r} is not of the form section.key=value")
        dotted, value = assignment.split("=", 1)
    else:
        dotted, value = assignment
    if "." not in dotted:
        raise ConfigError(f"override {dotted!r} needs a section prefix (model., data., train.)")
    section, key = dotted.strip().split(".", 1)
    if section == "model":
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass
        cfg.model_overrides[key] = value
    elif section in {"data", "train"}:
        _set_field(getattr(cfg, section), section, key, value)
    else:
        raise ConfigError(f"unknown section {section!r} in override {assignment!r}")


def build_config(
    preset: str = "mini", train_preset: str = "published", overrides: list[str] | None = None
) -> RunConfig:
    """Resolve a model preset, a training preset and overrides into a ``RunConfig``."""
    if train_preset not in TRAIN_PRESETS:
        raise ConfigError(f"unknown training preset {train_preset!r}; known: {sorted(TRAIN_PRESETS)}")
    cfg = RunConfig(preset=preset)
    for dotted, value in TRAIN_PRESETS[train_preset].items():
        apply_override(cfg, (dotted, value))
    for assignment in overrides or []:
        apply_override(cfg, assignment)
    validate(cfg)
    return cfg


def validate(cfg: RunConfig) -> None:
    """Reject settings that cannot work, with a clear message."""
    d, t = cfg.data, cfg.train
    if d.max_window < 1 or d.row_len < 2:
        raise ConfigError("data.max_window must be >= 1 and data.row_len >= 2")
    if d.max_window > d.row_len:
        raise ConfigError(f"data.max_window ({d.max_window}) must not exceed data.row_len ({d.row_len})")
    if not 0.0 <= d.dev_fraction < 1.0:
        raise ConfigError("data.dev_fraction must be in [0, 1)")
    if len(d.tier_weights) != 3 or min(d.tier_weights) < 0 or max(d.tier_weights) <= 0:
        raise ConfigError("data.tier_weights needs three non-negative weights, one positive")
    if d.dev_tier not in {"gold", "all"} or d.sampler not in {"published", "iid"}:
        raise ConfigError("data.dev_tier must be gold|all and data.sampler published|iid")
    if d.on_bad_record not in {"warn", "raise"}:
        raise ConfigError("data.on_bad_record must be warn or raise")
    if t.micro_rows < 1 or t.accum < 1 or t.max_steps < 1:
        raise ConfigError("train.micro_rows, train.accum and train.max_steps must be >= 1")
    if t.device not in {"auto", "cpu", "cuda"}:
        raise ConfigError(f"train.device must be auto, cpu or cuda, not {t.device!r}")
    if t.dist not in {"ddp", "fsdp"}:
        raise ConfigError(f"train.dist must be ddp or fsdp, not {t.dist!r}")
    if t.time_budget_s < 0 or t.call_budget_s < 0 or t.calibrate_steps < 1:
        raise ConfigError("train.time_budget_s and train.call_budget_s must be >= 0, train.calibrate_steps >= 1")
    if not 0.0 <= t.warmup_frac < 1.0 or not 0.0 < t.decay_frac <= 1.0:
        raise ConfigError("train.warmup_frac must be in [0, 1) and train.decay_frac in (0, 1]")
