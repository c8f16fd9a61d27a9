"""Pipeline assembly: spaCy's config is the one route from weights to a pipeline.

A pipeline is a ``config.cfg`` whose ``[initialize]`` names its weights; :func:`assemble`
is ``spacy assemble``: :func:`spacy.util.load_model_from_config`, then ``nlp.initialize()``,
which hands each component its ``[initialize.components.NAME]`` settings (the encoder's
``loader``, every other component's ``weights`` folder); ``only=[...]`` keeps just the
named components (the restore-only, morphosyntax-only, ... pipelines of
:func:`default_config`). :func:`extend` adds the components of a config fragment to an
assembled pipeline (the attributor's ``attributor.cfg``, a released checkpoint's heads, a
restorer the CLI needs): it is the package's one call of ``add_pipe``, and nothing else adds
components or sets their options.

* The embedded default model is ``assets/models/grc_stoicheia_doc_clean/config.cfg``: its
  paths are relative to its folder (``${paths.base}``, set by :func:`assemble` to the
  config's folder), so the weights stay where they are.
* A released checkpoint without a ``config.cfg`` becomes one with
  :func:`checkpoint_config`: the encoder's architecture from its ``config.json``, its
  loader in ``[initialize]``, and for a task fine-tune the released heads
  (``[initialize.after_init]``, ``stoicheia.ReleasedHeads.v1``).
* ``stoicheia package`` / ``make demo`` assemble, ``nlp.to_disk`` and ``spacy package``;
  ``spacy.load`` reads the result.

``--model`` on the command line always names a pipeline (:func:`load_pipeline`: an
installed package or a saved directory); ``--source`` names a checkpoint or a config
(:func:`build_pipeline`: hub id, directory, ``embedded:NAME`` or a ``.cfg`` file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import spacy
import srsly
from safetensors import safe_open
from spacy import util
from spacy.language import Language
from thinc.api import Config

from .assets import default_model_dir
from .backbone import load_backbone, load_backbone_config
from .backbone.loading import resolve_source, stored_dtype
from .backbone.released import AS_WRITTEN_KINDS, backbone_prefix, detect_kind
from .errors import ConfigError
from .legacy_config import migrate_config
from .registrations import config_factories, lazy_factories, register_all

#: The embedded default model (``assets/models/grc_stoicheia_doc_clean``).
DEFAULT_SOURCE = "embedded:grc_stoicheia_doc_clean"
#: The installed default pipeline (``make demo``).
DEFAULT_PACKAGE = "grc_stoicheia_doc_clean"
#: ``stoicheia.CharEncoder.v1`` arguments read from the checkpoint's config.json.
ARCH_KEYS = ("d_model", "n_heads", "depth", "char_window", "qk_norm", "attn_impl",
             "n_region", "n_century", "use_cap_input")
#: The pipeline config beside a model's weights, and its meta (licences, sources).
CONFIG = "config.cfg"
META = "meta.json"
ENCODER = "stoicheia_encoder"
#: Trained morphosyntax components, in pipeline order (each added when its directory exists).
MORPHOSYNTAX: tuple[str, ...] = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def _architecture(directory: Path, prefix: str | None) -> dict[str, Any]:
    config = load_backbone_config(directory).to_dict()
    if config.get("n_region") is None or config.get("n_century") is None:
        with safe_open(str(directory / "model.safetensors"), framework="pt") as handle:
            tables = any(name.endswith(("e_region.weight", "e_century.weight")) for name in handle.keys())
        if tables:  # sizes from the tables (the loader's rules): read the weights once here
            config = load_backbone(directory, prefix=prefix).config.to_dict()
    return config


def checkpoint_config(
    source: str, *, prefix: str | None = None, revision: str | None = None,
    max_length: int = 4096, overlap: int = 512, heads: bool = True,
) -> Config:
    """The pipeline config of a released checkpoint: ``stoicheia.GreekTokenizer.v1`` + a
    ``stoicheia_encoder`` shaped by its ``config.json``, whose ``[initialize]`` loader names
    ``source``; with ``heads`` a released task fine-tune adds its components at initialize
    (``stoicheia.ReleasedHeads.v1``). ``max_length``/``overlap``: the long-document windows
    of one forward (:mod:`stoicheia_spacy.backbone.windows`)."""
    directory = resolve_source(source, revision)  # a local snapshot for hub ids
    if prefix is None:
        prefix = backbone_prefix(directory)  # encoder. / tagger.encoder. in task checkpoints
    arch = _architecture(directory, prefix)
    model: dict[str, Any] = {"@architectures": "stoicheia.CharEncoder.v1",
                             "max_length": max_length, "overlap": overlap}
    model.update({k: arch.get(k, None if k.startswith("n_") else False) for k in ARCH_KEYS})
    kind = detect_kind(directory)
    if heads and kind in AS_WRITTEN_KINDS:  # fine-tunes read planes as written
        model["hide_unmarked"] = False
    if heads and kind == "tagger_parser":  # words encoded one by one, as written (models/token_planes.py)
        model.update({"planes": "tokens", "hide_unmarked": False})
    init: dict[str, Any] = {"loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(source),
                                       "prefix": prefix, "revision": revision}}
    stored = stored_dtype(directory)
    if stored in {"BF16", "F16"}:  # keep a half-precision release half-precision in the package
        init["save_dtype"] = "bfloat16" if stored == "BF16" else "float16"
    config: dict[str, Any] = {
        "paths": {"base": None},
        "nlp": {"lang": "grc", "pipeline": [ENCODER],
                "tokenizer": {"@tokenizers": "stoicheia.GreekTokenizer.v1"}},
        "components": {ENCODER: {"factory": ENCODER, "model": model}},
        "initialize": {"components": {ENCODER: init}},
    }
    if heads and kind != "backbone":
        config["initialize"]["after_init"] = {"@callbacks": "stoicheia.ReleasedHeads.v1",
                                              "source": str(source), "revision": revision}
    return Config(config)


def model_config_path(source: str | Path, revision: str | None = None) -> Path | None:
    """The ``config.cfg`` that ``source`` names (a ``.cfg`` file, or a checkpoint folder
    holding one), else None (a checkpoint without a config)."""
    path = Path(str(source))
    if path.suffix == ".cfg":
        if not path.is_file():
            raise ConfigError(f"pipeline config {path} does not exist")
        return path

    directory = resolve_source(source, revision)
    return directory / CONFIG if (directory / CONFIG).is_file() else None


def keep_components(config: Config, names: list[str] | tuple[str, ...]) -> Config:
    """``config`` with only the components ``names`` (and their ``[initialize]`` settings), in
    the config's order; unknown names raise ``ConfigError``."""
    pipeline = list(config["nlp"]["pipeline"])
    unknown = [n for n in names if n not in pipeline]
    if unknown:
        raise ConfigError(f"the pipeline config has no component {unknown} (it has {pipeline})")
    config = Config(config)  # a copy
    config["nlp"]["pipeline"] = [n for n in pipeline if n in names]
    for section in (config["components"], config.get("initialize", {}).get("components", {})):
        for name in [n for n in section if n not in names]:
            del section[name]
    return config


def assemble(config: Config | str | Path, *, base: str | Path | None = None,
             overrides: dict[str, Any] | None = None, only: list[str] | tuple[str, ...] | None = None) -> Language:
    """``spacy assemble``: the pipeline of ``config`` (a :class:`Config` or a ``.cfg`` path),
    initialized, so that every component holds the weights its ``[initialize]`` names.

    ``${paths.base}`` is ``base``, by default the config file's folder; a ``meta.json``
    beside the file (licences, sources) becomes ``nlp.meta``; ``only``: assemble just these
    components (:func:`keep_components`)."""
    register_all()  # a source checkout without entry points resolves our names too
    meta: dict[str, Any] = {}
    if not isinstance(config, Config):
        path = Path(config)
        if not path.is_file():
            raise ConfigError(f"pipeline config {path} does not exist")
        base = path.parent if base is None else base
        config = util.load_config(path, interpolate=False)
        if (path.parent / META).is_file():
            meta = dict(srsly.read_json(path.parent / META))
    config = Config(config)
    config.setdefault("paths", {})
    if base is not None:
        config["paths"]["base"] = str(Path(base).resolve())
    for key, value in (overrides or {}).items():
        section: Any = config
        *parents, leaf = key.split(".")
        for part in parents:
            section = section.setdefault(part, {})
        section[leaf] = value
    if only is not None:
        config = keep_components(config, only)
    config, _ = migrate_config(config)
    try:
        with lazy_factories(config_factories(config)):  # import this pipeline's factories only
            nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
    except Exception as exc:  # confection/catalogue: a bad or unknown block
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"invalid pipeline config: {exc}") from exc
    nlp.initialize()
    nlp.meta.update(meta)
    return nlp


def build_pipeline(
    source: str, *, prefix: str | None = None, revision: str | None = None,
    max_length: int = 4096, overlap: int = 512, components: bool = True,
) -> Language:
    """The assembled pipeline of ``source``: its ``config.cfg`` when it ships one (the
    embedded default: encoder + task components; ``components=False``: the encoder alone),
    else :func:`checkpoint_config` (``components``: with a task fine-tune's heads)."""
    path = model_config_path(source, revision)
    if path is not None and components:
        return assemble(path)
    if path is not None and path.suffix == ".cfg" and path.name != CONFIG:
        raise ConfigError(f"{path}: components=False needs a checkpoint, not a config")
    return assemble(checkpoint_config(source, prefix=prefix, revision=revision, max_length=max_length,
                                      overlap=overlap, heads=components))


def extend(nlp: Language, config: Config | dict[str, Any] | str | Path, *, base: str | Path | None = None,
           fill: Mapping[str, Callable[[Any], None]] | None = None) -> list[str]:
    """Add the components of a config fragment to an assembled pipeline, as assembling the
    whole config would; returns their names.

    ``config`` (a :class:`Config`, a dict or a ``.cfg`` file) holds ``[components.NAME]``
    blocks (``factory`` and its config), appended in their order, and optionally
    ``[initialize.components.NAME]`` settings, with which each component is initialized
    (``weights = FOLDER``: the component's saved folder). ``${paths.base}`` is ``base``, by
    default the file's folder. ``fill``: per name, a function that puts weights into the
    built component instead (a released checkpoint's tensors,
    :class:`~stoicheia_spacy.backbone.released.ReleasedComponents`). Both blocks are recorded
    in ``nlp.config``. This is the package's only call of ``add_pipe``."""
    if not isinstance(config, Config | dict):
        path = Path(config)
        if not path.is_file():
            raise ConfigError(f"pipeline config {path} does not exist")
        base = path.parent if base is None else base
        config = util.load_config(path, interpolate=False)
    config = Config(config)
    if base is not None:
        config.setdefault("paths", {})["base"] = str(Path(base).resolve())
    if "paths" in config:
        config = config.interpolate()
    config, _ = migrate_config(config)
    blocks = dict(config.get("components", {}))
    inits = dict(config.get("initialize", {}).get("components", {}))
    unknown = sorted(set(inits) - set(blocks))
    if unknown:
        raise ConfigError(f"[initialize.components] names {unknown}, which the config does not add")
    register_all()
    added = []
    for name, block in blocks.items():
        block = dict(block)
        factory = block.pop("factory", name)
        pipe = nlp.add_pipe(factory, name=name, config=block)
        added.append(name)
        init = dict(inits.get(name, {}))
        if "weights" in init:
            init["weights"] = Path(init["weights"])
            if not init["weights"].is_dir():
                raise ConfigError(f"no {factory} weights folder {init['weights']}")
        if fill and name in fill:
            fill[name](pipe)
        elif init:
            pipe.initialize(lambda: [], nlp=nlp, **init)  # type: ignore[attr-defined]
        if init:
            nlp.config["initialize"]["components"][name] = {k: str(v) if isinstance(v, Path) else v
                                                            for k, v in init.items()}
    return added


def load_pipeline(model: str | Path, *, exclude: Iterable[str] = ()) -> Language:
    """``spacy.load`` of a pipeline: an installed package name or a saved directory. A
    pipeline saved before its components' settings blocks (flat options) is read through
    :func:`~stoicheia_spacy.legacy_config.migrate_config`. ``exclude``: components not loaded."""
    folder = Path(model)
    if not folder.is_dir() and util.is_package(str(model)):
        package = util.get_package_path(str(model))
        meta = util.get_model_meta(package)
        folder = package / f"{meta['lang']}_{meta['name']}-{meta['version']}"
    if not (folder / CONFIG).is_file():
        return spacy.load(model, exclude=list(exclude))
    config, changed = migrate_config(util.load_config(folder / CONFIG, interpolate=False))
    with lazy_factories(config_factories(config, exclude)):  # import this pipeline's factories only
        if changed:
            nlp = util.load_model_from_config(config, meta=util.get_model_meta(folder), exclude=list(exclude))
            return nlp.from_disk(folder, exclude=list(exclude))
        return spacy.load(model, exclude=list(exclude))


def default_config() -> Path:
    """The embedded default model's ``config.cfg`` (``assemble(default_config(), only=[...])``
    is its restore-only, morphosyntax-only, ... pipeline)."""
    return default_model_dir() / CONFIG


def attributor_config() -> Path:
    """The config fragment of the attributor shipped beside the default pipeline, not in it
    (``extend(nlp, attributor_config())``)."""
    return default_model_dir() / "attributor.cfg"


__all__ = [
    "ARCH_KEYS", "CONFIG", "DEFAULT_PACKAGE", "DEFAULT_SOURCE", "ENCODER", "META", "MORPHOSYNTAX", "assemble",
    "attributor_config", "build_pipeline", "checkpoint_config", "default_config", "extend", "keep_components", "load_pipeline",
    "model_config_path",
]
