"""Pipeline assembly: spaCy's config is the one route from weights to a pipeline.

A pipeline is a ``config.cfg`` whose ``[initialize]`` names its weights; :func:`assemble`
is ``spacy assemble``: :func:`spacy.util.load_model_from_config`, then ``nlp.initialize()``,
which hands each component its ``[initialize.components.NAME]`` settings (the encoder's
``loader``, every other component's ``weights`` folder). Nothing else adds components or
sets their options.

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

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import spacy
import srsly
from spacy import util
from spacy.language import Language
from thinc.api import Config

from .assets import default_model_dir
from .backbone import load_backbone, load_backbone_config
from .backbone.loading import resolve_source, stored_dtype
from .backbone.released import backbone_prefix, detect_kind
from .date.attributor import packaged_weights as attributor_weights
from .date.dater import packaged_weights as dater_weights
from .errors import ConfigError
from .legacy_config import migrate_config
from .registrations import config_factories, lazy_factories, register_all
from .released_heads import AS_WRITTEN_KINDS

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
        from safetensors import safe_open

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


def add_from_weights(nlp: Language, factory: str, weights: str | Path, *, name: str | None = None,
                     config: dict[str, Any] | None = None) -> Any:
    """Append ``factory`` to an assembled pipeline and initialize it from the saved component
    folder ``weights``, exactly as ``[initialize.components.NAME] weights = ...`` does in a
    config (the setting is recorded in ``nlp.config``)."""
    name = name or factory
    folder = Path(weights)
    if not folder.is_dir():
        raise ConfigError(f"no {factory} weights folder {folder}")
    pipe = nlp.add_pipe(factory, name=name, config=config or {})
    pipe.initialize(lambda: [], nlp=nlp, weights=folder)  # type: ignore[attr-defined]
    nlp.config["initialize"]["components"][name] = {"weights": str(folder)}
    return pipe


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


def morphosyntax_pipeline(model: str | Path | None = None) -> Language:
    """``model`` (a pipeline), else the default model's encoder + morphosyntax components."""
    if model:
        return load_pipeline(model)
    path = model_config_path(DEFAULT_SOURCE)
    if path is None:
        raise ConfigError("the default model ships no config.cfg: name a pipeline")
    return assemble(path, only=(ENCODER, *MORPHOSYNTAX))


def restorer_pipeline(model: str | Path | None = None, *, beam_width: int = 20, n_candidates: int = 20) -> Language:
    """``model`` (a pipeline), else the installed ``grc_stoicheia_doc_clean``, else the
    restoration preset (:func:`restoration_pipeline`); a
    ``stoicheia_restorer`` is added when missing."""
    nlp = None
    if model:
        nlp = load_pipeline(model)
    else:
        try:
            nlp = load_pipeline(DEFAULT_PACKAGE)
        except OSError:  # the restoration-only preset: encoder + restorer
            nlp = restoration_pipeline()
    config = {"beam_width": beam_width, "n_candidates": n_candidates}
    if "stoicheia_restorer" not in nlp.pipe_names:
        nlp.add_pipe("stoicheia_restorer", config={"settings": config})
    else:
        restorer: Any = nlp.get_pipe("stoicheia_restorer")
        restorer.configure(**config)
    return nlp


def scanner_dir() -> Path | None:
    """The shipped scanner heads folder, or None when they are not trained/shipped."""
    path = Path(default_model_dir()) / "scanner"
    return path if (path / "heads.safetensors").is_file() else None


def scanner_pipeline(source: str = DEFAULT_SOURCE, heads: Path | None = None) -> Language:
    """Encoder from ``source`` + ``stoicheia_scanner`` initialized from ``heads`` (default: the
    shipped heads, with the settings of the default model's ``config.cfg``)."""
    config: dict[str, Any] = {}
    if heads is None:
        heads = scanner_dir()
        if heads is not None:
            config = _default_component_config("stoicheia_scanner")
    if heads is None:
        raise ConfigError("no trained scanner heads found (train them with projects/meter)")
    nlp = build_pipeline(source, components=False)  # only the encoder: the scanner is added below
    add_from_weights(nlp, "stoicheia_scanner", heads, config=config)
    return nlp


def _default_component_config(name: str) -> dict[str, Any]:
    """``[components.NAME]`` of the default model's ``config.cfg`` (its settings block), without
    ``factory`` and ``model``."""
    config = util.load_config(Path(default_model_dir()) / CONFIG, interpolate=False)
    block = dict(config["components"].get(name, {}))
    return {k: v for k, v in block.items() if k not in ("factory", "model")}


def restoration_pipeline(source: str | Path | None = None, **settings: Any) -> Any:
    """A restoration-only pipeline for batch work (no tagger, parser, accentuator or scanner
    runs on each document): the encoder + ``stoicheia_restorer`` of ``source``'s ``config.cfg`` (default: the
    embedded model), assembled by spaCy; ``settings`` replace restorer settings
    (:class:`~stoicheia_spacy.restore.settings.RestorerSettings`). A checkpoint without a
    config gets a plain restorer."""
    path = model_config_path(str(source) if source is not None else "embedded:")
    if path is not None:
        nlp = assemble(path, only=(ENCODER, "stoicheia_restorer"))
    else:
        nlp = build_pipeline(str(source), components=False)
        nlp.add_pipe("stoicheia_restorer")
    if settings:
        restorer: Any = nlp.get_pipe("stoicheia_restorer")
        restorer.configure(**settings)
    return nlp


def add_morphosyntax(nlp: Language, directory: str | Path) -> list[str]:
    """Add the trained morphosyntax components (directories written by their ``to_disk``)
    found under ``directory`` (``directory/<factory name>/``) after the encoder, through
    spaCy (each component's ``initialize(weights=...)``); they read the shared encoder through
    listeners with ``grad_factor`` 0 (trained on a frozen backbone). Returns the names added."""
    directory = Path(directory)
    added = []
    for name in MORPHOSYNTAX:
        path = directory / name
        if not any((path / f).is_file() for f in ("data.json", "cfg")):  # cfg: a folder saved before data.json
            continue
        add_from_weights(nlp, name, path, config={"model": {"tok2vec": {"grad_factor": 0.0}}})
        added.append(name)
    return added


def default_morphosyntax_dir() -> Path:
    """``morphosyntax/`` beside the embedded default backbone."""
    return default_model_dir() / "morphosyntax"


def add_dater(nlp: Language, weights: str | Path | None = None, name: str = "stoicheia_dater") -> Any:
    """Append a ``stoicheia_dater`` initialized from ``weights`` (default: the packaged dater, :func:`~stoicheia_spacy.date.dater.packaged_weights`):
    ``[initialize.components.NAME] weights`` through spaCy (:func:`~stoicheia_spacy.assembly.add_from_weights`)."""
    pipe: Any = add_from_weights(nlp, "stoicheia_dater", weights or dater_weights(), name=name)
    return pipe


def add_attributor(nlp: Language, weights: str | Path | None = None,
                   name: str = "stoicheia_attributor") -> Any:
    """Append a ``stoicheia_attributor`` initialized from ``weights`` (default: the packaged attributor, :func:`~stoicheia_spacy.date.attributor.packaged_weights`):
    ``[initialize.components.NAME] weights`` through spaCy (:func:`~stoicheia_spacy.assembly.add_from_weights`)."""
    pipe: Any = add_from_weights(nlp, "stoicheia_attributor", weights or attributor_weights(), name=name)
    return pipe


__all__ = [
    "ARCH_KEYS", "CONFIG", "DEFAULT_PACKAGE", "DEFAULT_SOURCE", "META", "add_from_weights", "assemble",
    "build_pipeline", "checkpoint_config", "keep_components", "load_pipeline", "model_config_path", "morphosyntax_pipeline",
    "restorer_pipeline", "scanner_dir", "scanner_pipeline", "MORPHOSYNTAX", "add_attributor", "add_dater",
    "add_morphosyntax", "default_morphosyntax_dir", "restoration_pipeline",
]
