"""What each command loads: only the components it needs (:func:`load_for`).

``--model`` names a pipeline (an installed package or a folder with a ``config.cfg``) or a
backbone checkpoint (hub id, folder with ``model.safetensors``, ``embedded:NAME``); without
it, the installed default package, else the embedded default model. A saved pipeline is read
with ``spacy.load(..., exclude=[...])`` and a model config (the embedded default's
``config.cfg``) assembled with ``assembly.assemble(..., only=[...])``, so the components a
command does not use are never built or read from disk (``stoicheia restore`` on the full
default pipeline loads two components, not eight). A checkpoint without a config goes
through :func:`stoicheia_spacy.assembly.build_pipeline`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from spacy import util
from spacy.language import Language
from spacy.util import load_config

from ..assembly import (
    DEFAULT_PACKAGE,
    DEFAULT_SOURCE,
    ENCODER,
    MORPHOSYNTAX,
    assemble,
    build_pipeline,
    extend,
    load_pipeline,
    model_config_path,
)
from ..errors import CheckpointError, ConfigError, ModelNotAvailableError

#: The component factories each command needs, in pipeline order.
NEEDS: dict[str, tuple[str, ...]] = {
    "restore": (ENCODER, "stoicheia_restorer"),
    "parse": (ENCODER, *MORPHOSYNTAX),
    "scan": (ENCODER, "stoicheia_scanner"),
    # the accentuator runs as the tokenizer (stoicheia.Segmenter.v1) on the encoder's backbone
    "accentuate": (ENCODER,),
    "date": (ENCODER, "stoicheia_dater"),
}
#: Components a command may add itself when the pipeline lacks them (they need no weights).
ADDABLE = frozenset({"stoicheia_restorer"})


def needed(command: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The factories ``command`` loads (:data:`NEEDS`), plus ``extra``."""
    try:
        names = NEEDS[command]
    except KeyError as exc:
        raise ConfigError(f"unknown command {command!r}: one of {', '.join(NEEDS)}") from exc
    return (*names, *(e for e in extra if e not in names))


def pipeline_path(model: str | Path) -> Path | None:
    """The folder of ``model`` when it is a saved spaCy pipeline (installed package, or a
    folder ``nlp.to_disk`` wrote), else None (a model config or a checkpoint)."""
    if isinstance(model, str) and util.is_package(model):
        return package_data_path(Path(util.get_package_path(model)))
    path = Path(model)
    if (path / "config.cfg").is_file() and (path / "tokenizer").exists():
        return path
    return None


def package_data_path(package: Path) -> Path:
    """The pipeline folder inside an installed pipeline package: ``LANG_NAME-VERSION`` beside its
    ``__init__.py``, as spaCy's ``load_model_from_init_py`` finds it (the package folder itself
    holds no ``config.cfg``)."""
    if (package / "config.cfg").is_file():
        return package
    meta = util.get_model_meta(package)
    return package / f"{meta['lang']}_{meta['name']}-{meta['version']}"


def _names(config: Any, factories: Sequence[str]) -> list[str]:
    components = config.get("components", {})
    return [name for name in config["nlp"]["pipeline"]
            if components.get(name, {}).get("factory", name) in factories]


def excluded(path: Path, factories: Sequence[str]) -> list[str]:
    """Names of the components of the pipeline at ``path`` whose factory is not wanted."""
    config = load_config(path / "config.cfg", interpolate=False)
    wanted = set(_names(config, factories))
    return [name for name in config["nlp"]["pipeline"] if name not in wanted]


def _load_pipeline(path: Path, factories: Sequence[str]) -> Language:
    return load_pipeline(path, exclude=excluded(path, factories))  # older flat settings too


def _assemble(config_path: Path, factories: Sequence[str]) -> Language:
    """A model config (``config.cfg`` naming its weights) assembled with only the wanted components."""
    return assemble(config_path, only=_names(load_config(config_path, interpolate=False), factories))


def _from_checkpoint(source: str, factories: Sequence[str]) -> Language:
    """A pipeline of a model config or a checkpoint, with only the wanted components."""
    config_path = model_config_path(source)
    if config_path is not None:
        return _assemble(config_path, factories)
    nlp = build_pipeline(source)
    for name in list(nlp.pipe_names):
        if nlp.get_pipe_meta(name).factory not in factories:
            nlp.remove_pipe(name)
    return nlp


def load_for(command: str, model: str | Path | None = None, *, extra: Iterable[str] = (),
             add: Iterable[str] = ()) -> Language:
    """The pipeline of ``model`` (module doc) with only the components ``command`` needs.

    ``extra``: more factories to keep (e.g. the restorer for ``accentuate --restore``);
    ``add``: factories added (untrained) when missing, because the caller loads their
    weights itself (e.g. ``scan --heads``).
    Raises :class:`~stoicheia_spacy.errors.ConfigError` when a needed component is missing
    and cannot be added, or when ``model`` does not exist.
    """
    factories = needed(command, extra)
    if model is None or str(model) == DEFAULT_SOURCE:
        path = pipeline_path(DEFAULT_PACKAGE)
        nlp = _load_pipeline(path, factories) if path is not None else _from_checkpoint(DEFAULT_SOURCE, factories)
    else:
        path = pipeline_path(model)
        if path is not None:
            nlp = _load_pipeline(path, factories)
        else:
            try:
                nlp = _from_checkpoint(str(model), factories)
            except (OSError, ModelNotAvailableError, CheckpointError, ConfigError) as exc:
                raise ConfigError(f"--model {model}: not an installed pipeline, a pipeline folder "
                                  f"(config.cfg) or a checkpoint ({exc})") from exc
    present = {nlp.get_pipe_meta(name).factory for name in nlp.pipe_names}
    for factory in factories:
        if factory in present:
            continue
        if factory not in ADDABLE and factory not in set(add):
            raise ConfigError(f"{model or 'the default model'} has no {factory}, which "
                              f"`stoicheia {command}` needs: name a pipeline that has it with --model")
        extend(nlp, {"components": {factory: {"factory": factory}}})
    return nlp


__all__ = ["NEEDS", "excluded", "load_for", "needed", "package_data_path", "pipeline_path"]
