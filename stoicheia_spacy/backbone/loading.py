"""Load and save backbones in the released format (``config.json`` + ``model.safetensors``).

Only safetensors are read (never pickle). Every tensor name and shape is checked against
the model built from the config; a corrupt, truncated or mismatched checkpoint raises
:class:`~stoicheia_spacy.errors.CheckpointError` naming the offending file or tensor.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from stoicheia_spacy.errors import (
    CheckpointError,
    ConfigError,
    ModelNotAvailableError,
    StoicheiaError,
)

from ..assets import DEFAULT_MODEL, asset_path, file_sha256
from .config import StoicheiaConfig
from .model import StoicheiaEncoder

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
#: Prefixes that exports put before every backbone tensor name.
KNOWN_PREFIXES = ("model.", "encoder.", "tagger.encoder.")


def _refuse_pickle(path: Path) -> None:
    raise CheckpointError(
        f"{path} is a pickle checkpoint ({path.suffix}); only safetensors are loaded, because "
        "unpickling can run arbitrary code. Convert it with safetensors.torch.save_file "
        f"to {WEIGHTS_NAME} beside {CONFIG_NAME}."
    )


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _download(repo_id: str, revision: str | None) -> Path:
    """Fetch config + safetensors of a Hub repo (the cache only, when offline)."""
    hint = (
        f"cannot fetch model {repo_id!r} from the Hugging Face Hub; download it elsewhere "
        f"(huggingface-cli download {repo_id}) and pass the local directory holding "
        f"{CONFIG_NAME} and {WEIGHTS_NAME} instead"
    )
    try:
        import huggingface_hub
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise ModelNotAvailableError(f"{hint} (huggingface_hub is not installed)") from exc
    try:
        local = huggingface_hub.snapshot_download(
            repo_id,
            revision=revision,
            allow_patterns=["*.json", "*.safetensors", "*.md"],
            local_files_only=_offline(),
        )
    except Exception as exc:
        reason = "offline (HF_HUB_OFFLINE is set) and not cached" if _offline() else type(exc).__name__
        raise ModelNotAvailableError(f"{hint} ({reason}: {exc})") from exc
    return Path(local)


#: Source prefix naming a model shipped with the package (``embedded:grc_stoicheia_doc_clean``).
EMBEDDED = "embedded:"


def resolve_source(source: str | os.PathLike[str], revision: str | None = None) -> Path:
    """A local checkpoint directory for ``source``: a directory, a file in one, a Hub repo
    id, or ``"embedded:NAME"`` for a model shipped in ``assets/models`` (``"embedded:"``
    alone is the default, ``grc_stoicheia_doc_clean``)."""
    text = str(source)
    if text.startswith(EMBEDDED):
        try:
            return asset_path("models", text[len(EMBEDDED) :] or DEFAULT_MODEL)
        except StoicheiaError as exc:
            raise ModelNotAvailableError(str(exc)) from exc
    path = Path(source)
    if path.is_file():
        if path.suffix in PICKLE_SUFFIXES:
            _refuse_pickle(path)
        path = path.parent
    if path.is_dir():
        return path
    if path.suffix in PICKLE_SUFFIXES:
        _refuse_pickle(path)
    looks_like_repo = text.count("/") == 1 and not text.startswith((".", "/", "~")) and " " not in text
    if not looks_like_repo:
        raise ModelNotAvailableError(
            f"{text!r} is neither a local checkpoint directory nor a Hugging Face repo id (owner/name)"
        )
    return _download(text, revision)


def _read_config(directory: Path) -> StoicheiaConfig:
    cfg_path = directory / CONFIG_NAME
    if not cfg_path.is_file():
        raise CheckpointError(f"{directory} has no {CONFIG_NAME}")
    try:
        data = json.loads(cfg_path.read_text(encoding="utf-8"))
        return StoicheiaConfig.from_dict(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ConfigError, TypeError) as exc:
        raise CheckpointError(f"invalid {cfg_path}: {exc}") from exc


def header_shapes(weights: Path) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape from a safetensors file's JSON header (no tensor is read)."""
    try:
        with weights.open("rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            if not 0 < size <= 100_000_000:
                raise ValueError(f"header size {size}")
            header = json.loads(handle.read(size))
        return {name: tuple(int(x) for x in info["shape"]) for name, info in header.items()
                if name != "__metadata__"}
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{weights} has no readable safetensors header (corrupt or truncated?): {exc}") from exc


#: Metadata tables of the restoration fine-tunes and the config key each one sizes.
METADATA_TABLES = {"e_region.weight": "n_region", "e_century.weight": "n_century"}


def metadata_sizes(weights: Path) -> dict[str, int]:
    """``n_region``/``n_century`` from the row counts of ``e_region``/``e_century`` in the
    weights (bare or under a ``model.`` export prefix); empty for a checkpoint without them."""
    if not weights.is_file():
        return {}
    out: dict[str, int] = {}
    for name, shape in header_shapes(weights).items():
        bare = name[len("model."):] if name.startswith("model.") else name
        if bare in METADATA_TABLES and len(shape) == 2:
            out[METADATA_TABLES[bare]] = int(shape[0])
    return out


def _with_metadata(config: StoicheiaConfig, directory: Path) -> StoicheiaConfig:
    """Fill ``n_region``/``n_century`` that ``config.json`` leaves out (the release's converter
    writes restoration configs without them) from the tensor shapes in the header."""
    for key, rows in metadata_sizes(directory / WEIGHTS_NAME).items():
        if getattr(config, key) is None:
            setattr(config, key, rows)
    return config


def _read_tensors(weights: Path) -> dict[str, torch.Tensor]:
    size = weights.stat().st_size
    try:
        tensors: dict[str, torch.Tensor] = {}
        with safe_open(str(weights), framework="pt", device="cpu") as handle:
            for name in handle.keys():
                tensors[name] = handle.get_tensor(name)
    except Exception as exc:
        raise CheckpointError(
            f"{weights} is not a readable safetensors file ({size} bytes; corrupt or truncated?): {exc}"
        ) from exc
    return tensors


def _strip_prefix(tensors: dict[str, torch.Tensor], prefix: str | None) -> dict[str, torch.Tensor]:
    if prefix is None:
        prefix = ""
        if tensors and all(n.startswith("model.") for n in tensors):
            prefix = "model."
    if not prefix:
        return tensors
    if not prefix.endswith("."):
        prefix += "."
    picked = {n[len(prefix):]: t for n, t in tensors.items() if n.startswith(prefix)}
    if not picked:
        raise CheckpointError(f"no tensor starts with the prefix {prefix!r}")
    return picked


def load_state(
    model: StoicheiaEncoder, tensors: dict[str, torch.Tensor], *, source: str = "checkpoint"
) -> None:
    """Copy ``tensors`` into ``model`` after checking names, shapes and finiteness exactly (a
    :meth:`~StoicheiaEncoder.skeleton` on the meta device takes them in place, no copy)."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    problems = []
    if missing:
        problems.append(f"missing tensor(s): {', '.join(missing)}")
    if unexpected:
        problems.append(f"unexpected tensor(s): {', '.join(unexpected)}")
    for name in sorted(set(expected) & set(tensors)):
        if tuple(tensors[name].shape) != tuple(expected[name].shape):
            problems.append(
                f"tensor {name} has shape {tuple(tensors[name].shape)}, expected {tuple(expected[name].shape)}"
            )
        elif not tensors[name].dtype.is_floating_point:
            problems.append(f"tensor {name} has dtype {tensors[name].dtype}, expected a float type")
    if problems:
        raise CheckpointError(f"{source} does not match the backbone config: " + "; ".join(problems))
    bad = [n for n, t in tensors.items() if not _all_finite(t)]
    if bad:
        raise CheckpointError(f"{source} holds non-finite values (corrupt?) in: {', '.join(sorted(bad))}")
    with torch.no_grad():
        if any(param.is_meta for param in expected.values()):  # a skeleton: take the tensors as they are
            model.load_state_dict({name: tensors[name].to(param.dtype) for name, param in expected.items()},
                                  assign=True)
            return
        for name, param in expected.items():
            param.copy_(tensors[name].to(param.dtype))


def _all_finite(tensor: torch.Tensor) -> bool:
    """No NaN or infinity in ``tensor``: its float32 sum is finite (a NaN or an infinity makes
    it NaN or infinite), else the element-wise check (the sum may overflow on finite values)."""
    if bool(torch.isfinite(tensor.sum(dtype=torch.float32))):
        return True
    return bool(torch.isfinite(tensor).all())


def verify_checksum(weights: Path) -> None:
    """Check ``weights`` against a ``<name>.sha256`` file beside it, when there is one
    (the embedded default model ships one); raise :class:`CheckpointError` on mismatch."""
    record = weights.with_name(weights.name + ".sha256")
    if not record.is_file():
        return
    expected = record.read_text(encoding="utf-8").split()[0].lower()
    got = file_sha256(weights)
    if got != expected:
        raise CheckpointError(
            f"{weights} does not match its recorded sha256 ({record.name}): the file is corrupt or was "
            f"replaced; expected {expected}, got {got}"
        )


def load_backbone_config(source: str | os.PathLike[str], revision: str | None = None) -> StoicheiaConfig:
    """The :class:`StoicheiaConfig` (``config.json``) of a released backbone, without its
    weights (e.g. to build a random-init control of the same shape)."""
    directory = resolve_source(source, revision)
    return _with_metadata(_read_config(directory), directory)


def load_backbone(
    source: str | os.PathLike[str],
    *,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    prefix: str | None = None,
    revision: str | None = None,
    attn_impl: str | None = None,
) -> StoicheiaEncoder:
    """Load a released backbone from a local directory or a Hugging Face repo id.

    ``prefix`` selects the backbone inside a task checkpoint (``"encoder."``,
    ``"tagger.encoder."``); by default a ``model.`` prefix on every name is stripped.
    Stored bf16/fp16 tensors are upcast to ``dtype`` (float32 by default). ``attn_impl``
    overrides the config's attention implementation. The model is returned in eval mode.
    Raises :class:`ModelNotAvailableError` (cannot fetch) or :class:`CheckpointError`.
    """
    directory = resolve_source(source, revision)
    weights = directory / WEIGHTS_NAME
    if not weights.is_file():
        candidates = sorted(directory.glob("*.safetensors"))
        pickles = [p for p in directory.iterdir() if p.suffix in PICKLE_SUFFIXES]
        if len(candidates) == 1:
            weights = candidates[0]
        elif pickles and not candidates:
            _refuse_pickle(pickles[0])
        else:
            raise CheckpointError(f"{directory} has no {WEIGHTS_NAME}")
    verify_checksum(weights)
    config = _read_config(directory)
    if attn_impl is not None:
        config.attn_impl = attn_impl
        try:
            config.validate()
        except ConfigError as exc:
            raise CheckpointError(str(exc)) from exc
    tensors = _strip_prefix(_read_tensors(weights), prefix)
    for name, key in METADATA_TABLES.items():  # sizes config.json leaves out: from the tables
        if getattr(config, key) is None and name in tensors and tensors[name].dim() == 2:
            setattr(config, key, int(tensors[name].shape[0]))
    if "cap_emb.weight" in tensors and not config.use_cap_input:
        config.use_cap_input = True  # task checkpoints carry the capitalization input
    model = StoicheiaEncoder.skeleton(config)  # no random init of weights about to be loaded
    load_state(model, tensors, source=str(weights))
    return model.to(device=device, dtype=dtype).eval()


def save_backbone(
    model: StoicheiaEncoder, directory: str | os.PathLike[str], *, dtype: torch.dtype | None = None
) -> Path:
    """Write ``config.json`` + ``model.safetensors`` in the released format (optionally bf16)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    state = {
        name: (t.detach().to(dtype) if dtype is not None else t.detach()).contiguous().cpu()
        for name, t in model.state_dict().items()
    }
    save_file(state, str(out / WEIGHTS_NAME), metadata={"format": "pt"})
    model.config.to_json(out / CONFIG_NAME)
    return out


def stored_dtype(directory: str | Path | None) -> str | None:
    """The safetensors dtype (e.g. ``"BF16"``) of a local checkpoint's first tensor."""
    if directory is None or not (Path(directory) / "model.safetensors").is_file():
        return None

    with safe_open(str(Path(directory) / "model.safetensors"), framework="pt") as handle:
        names = list(handle.keys())
        return str(handle.get_slice(names[0]).get_dtype()) if names else None
