"""``stoicheia package SOURCE --name NAME``: a released checkpoint -> installable spaCy pipeline."""

from __future__ import annotations

import tempfile
from enum import StrEnum
from pathlib import Path

import typer

from ..errors import ConfigError
from .options import fail, printer


class BuildFormat(StrEnum):
    """What ``spacy package`` builds."""

    sdist = "sdist"
    wheel = "wheel"
    both = "sdist,wheel"
    none = "none"

def package_name(name: str) -> str:
    """The importable package name, ``grc_stoicheia_NAME``."""
    return f"grc_stoicheia_{name}"


def package_pipeline(
    source: str, name: str, output: Path, *, prefix: str | None = None,
    revision: str | None = None, version: str | None = None, build: str = "sdist",
    force: bool = False, silent: bool = True, lexicon: bool = True,
) -> Path:
    """Assemble the pipeline of ``source`` with spaCy and run ``spacy package`` on it.

    ``source``'s ``config.cfg`` (the embedded default), else the config
    :func:`~stoicheia_spacy.assembly.checkpoint_config` writes for a released checkpoint
    (its ``[initialize]`` names the weights), is kept as ``OUTPUT/NAME.cfg``; spaCy loads it,
    ``nlp.initialize()`` reads the weights, ``nlp.to_disk`` saves them.

    ``lexicon=False`` sets ``lexicon = null`` on every component that names the lexicon data
    package (the explicit opt-out, for machines without the data mirror).

    Returns the package directory (``OUTPUT/grc_stoicheia_NAME-VERSION``); the sdist (and
    wheel, with ``build="sdist,wheel"``) lie in its ``dist/``. Installing the result makes
    ``spacy.load("grc_stoicheia_NAME")`` work.
    """
    from spacy import util as spacy_util
    from spacy.cli.package import package

    from .. import __version__, register_components
    from ..assembly import assemble, checkpoint_config, model_config_path

    if not name.isidentifier() or not name.isascii():
        raise ConfigError(f"pipeline name {name!r} must be an ASCII Python identifier (e.g. doc_clean)")
    formats = {f.strip() for f in build.split(",") if f.strip()}
    if not formats <= {"sdist", "wheel", "none"}:
        raise ConfigError(f"--build takes sdist, wheel or none, got {build!r}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    path = model_config_path(source, revision)
    config = (spacy_util.load_config(path, interpolate=False) if path is not None
              else checkpoint_config(source, prefix=prefix, revision=revision))
    overrides = {} if lexicon else {f"components.{n}.lexicon": None for n, c in config["components"].items()
                                    if "lexicon" in c}
    if path is not None:
        nlp = assemble(path, overrides=overrides)
    else:
        config.to_disk(output / f"{name}.cfg")
        nlp = assemble(config, overrides=overrides)
    version = version or __version__
    meta = dict(nlp.meta)
    nlp.meta.update({
        "name": f"stoicheia_{name}", "version": version,
        "description": meta.get("description") or f"Stoicheia character-level encoder for Ancient Greek ({source})",
        "sources": meta.get("sources") or [{"name": "Stoicheia", "url": str(source)}],
        "license": meta.get("license") or "MIT (code); weights: see the checkpoint's own licence",
        "requirements": [f"stoicheia-spacy>={__version__}", *_lexicon_requirements(nlp)],
    })
    nlp.config["paths"]["base"] = None  # no machine path in the saved config
    with tempfile.TemporaryDirectory() as tmp:
        pipeline_dir = Path(tmp) / "pipeline"
        nlp.to_disk(pipeline_dir)
        package(pipeline_dir, output, code_paths=[Path(register_components.__file__)],
                create_sdist="sdist" in formats, create_wheel="wheel" in formats,
                force=force, silent=silent)
    return output / f"{package_name(name)}-{version}"


def _lexicon_requirements(nlp: object) -> list[str]:
    """``stoicheia-lexicon-grc==VERSION`` for every lexicon a component pinned."""
    out = set()
    for _, pipe in getattr(nlp, "pipeline", []):
        pin = getattr(pipe, "lexicon_pin", None)  # the accentuator's and scanner's LexiconPin
        if pin is not None and getattr(pin, "version", None):
            out.add(f"{str(pin.package).replace('_', '-')}=={pin.version}")
    return sorted(out)


def package_command(
    source: str = typer.Argument(..., metavar="SOURCE",
                                 help="Checkpoint: a local folder, a Hugging Face repo id, or embedded:NAME"),
    name: str = typer.Option(..., "--name", "-n", help="Pipeline name: installs as grc_stoicheia_NAME"),
    output: Path = typer.Option(Path("packages"), "--output", "-o", metavar="DIR", help="Folder to write the package into"),
    prefix: str = typer.Option(None, "--prefix", help="Backbone prefix in task checkpoints (tagger.encoder.)"),
    revision: str = typer.Option(None, "--revision", help="Hub revision"),
    version: str = typer.Option(None, "--version", help="Package version (default: stoicheia-spacy's)"),
    build: BuildFormat = typer.Option(BuildFormat.sdist, "--build", help="What to build (wheel needs 'build' or 'wheel')"),
    force: bool = typer.Option(False, "--force", metavar="", help="Overwrite an existing package directory"),
    lexicon: bool = typer.Option(True, "--lexicon/--no-lexicon",
                                 help="Use the lexicon data package stoicheia-lexicon-grc (--no-lexicon: lexicon = null)"),
) -> None:
    """Build a spaCy pipeline from a released checkpoint and package it with spacy package.

    Example: stoicheia package embedded:grc_stoicheia_doc_clean --name doc_clean --output packages
    """
    check_source(source)
    msg = printer()
    msg.info(f"Loading checkpoint {source}")
    path = package_pipeline(source, name, output, prefix=prefix, revision=revision,
                            version=version, build=build.value, force=force, silent=False, lexicon=lexicon)
    msg.good(f"Packaged {package_name(name)}", str(path))


def check_source(source: str) -> None:
    """Refuse, in one line, a SOURCE that is written as a local path but does not exist (a
    mistyped folder is not sent to the Hugging Face Hub as a repo id)."""
    if source.startswith("embedded:") or Path(source).expanduser().exists():
        return
    local = (source.startswith((".", "/", "~")) or "\\" in source or source.count("/") != 1
             or Path(source).parent.exists() and Path(source).parent != Path("."))
    if local:
        raise fail(f"{source}: no such folder (SOURCE is a checkpoint folder, a Hugging Face repo id "
                   "OWNER/NAME, or embedded:NAME)")
