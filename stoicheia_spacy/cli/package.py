"""``stoicheia package SOURCE --name NAME``: a released checkpoint -> installable spaCy pipeline."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import typer
from spacy.language import Language
from wasabi import Printer

from ..errors import ConfigError
from .app import app

#: ``stoicheia.CharEncoder.v1`` arguments read from the checkpoint's config.json.
ARCH_KEYS = ("d_model", "n_heads", "depth", "char_window", "qk_norm", "attn_impl",
             "n_region", "n_century", "use_cap_input")


def package_name(name: str) -> str:
    """The importable package name, ``grc_stoicheia_NAME``."""
    return f"grc_stoicheia_{name}"


def stored_dtype(directory: str | Path | None) -> str | None:
    """The safetensors dtype (e.g. ``"BF16"``) of a local checkpoint's first tensor."""
    if directory is None or not (Path(directory) / "model.safetensors").is_file():
        return None
    from safetensors import safe_open

    with safe_open(str(Path(directory) / "model.safetensors"), framework="pt") as handle:
        names = list(handle.keys())
        return str(handle.get_slice(names[0]).get_dtype()) if names else None


def build_pipeline(
    source: str, *, prefix: str | None = None, revision: str | None = None,
    max_length: int = 4096, overlap: int = 512, components: bool = True,
) -> Language:
    """``spacy.blank("grc")`` (with ``stoicheia.GreekTokenizer.v1``) + an initialized ``stoicheia_encoder`` holding ``source``'s weights.

    The architecture comes from the checkpoint's ``config.json``; the initialize section
    records the loader so that the config retrains from the same weights. With
    ``components`` (default), a local checkpoint's ``pipeline.json`` adds the task
    components that ship beside it (see :func:`add_manifest_components`).
    """
    import spacy

    from ..backbone import load_backbone
    from ..backbone.loading import resolve_source
    from ..models import set_backbone_weights
    from ..release import add_released_heads, backbone_prefix

    directory = resolve_source(source, revision)  # a local snapshot for hub ids
    if prefix is None:
        prefix = backbone_prefix(directory)  # encoder. / tagger.encoder. in task checkpoints
    backbone = load_backbone(directory, prefix=prefix)
    config = backbone.config.to_dict()
    model: dict[str, Any] = {"@architectures": "stoicheia.CharEncoder.v1",
                             "max_length": max_length, "overlap": overlap}
    model.update({k: config.get(k, None if k.startswith("n_") else False) for k in ARCH_KEYS})
    from ..tokenizer import create_greek_tokenizer  # noqa: F401  (registers the tokenizer)

    nlp = spacy.blank("grc", config={"nlp": {"tokenizer": {"@tokenizers": "stoicheia.GreekTokenizer.v1"}}})
    encoder = nlp.add_pipe("stoicheia_encoder", config={"model": model})
    set_backbone_weights(encoder.model, backbone)  # type: ignore[attr-defined]
    nlp.initialize()  # keeps the weights just set (no second read)
    stored = stored_dtype(directory)
    if stored in {"BF16", "F16"}:  # keep a half-precision release half-precision in the package
        encoder.cfg["save_dtype"] = "bfloat16" if stored == "BF16" else "float16"  # type: ignore[attr-defined]
    loader = {"@misc": "stoicheia.BackboneLoader.v1", "source": str(source), "prefix": prefix,
              "revision": revision}
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {"loader": loader}
    if components:
        manifest = directory / MANIFEST
        if manifest.is_file():
            add_manifest_components(nlp, manifest)
        add_released_heads(nlp, directory)  # task heads of released fine-tunes (nothing for a backbone)
    return nlp


#: Optional file beside a checkpoint listing the components its package holds.
MANIFEST = "pipeline.json"


def add_manifest_components(nlp: Language, manifest: Path) -> None:
    """Add the components a ``pipeline.json`` lists, in order, after the encoder.

    Each entry has ``factory`` and optional ``name``, ``config`` and ``weights`` (a folder
    beside the manifest read with the component's ``from_disk``).
    """
    import srsly

    from .. import pipeline as _pipeline  # noqa: F401  (registers the factories)

    try:
        entries = srsly.read_json(manifest)["components"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"invalid component manifest {manifest}: {exc}") from exc
    for entry in entries:
        factory = entry["factory"]
        pipe = nlp.add_pipe(factory, name=entry.get("name", factory), config=entry.get("config", {}))
        if entry.get("weights"):
            folder = manifest.parent / entry["weights"]
            if not folder.is_dir():
                raise ConfigError(f"{manifest}: weights folder {folder} of {factory} is missing")
            pipe.from_disk(folder)  # type: ignore[attr-defined]
    link = getattr(nlp, "_link_components", None)  # connect listeners to the encoder
    if callable(link):
        link()


def package_pipeline(
    source: str, name: str, output: Path, *, prefix: str | None = None,
    revision: str | None = None, version: str | None = None, build: str = "sdist",
    force: bool = False, silent: bool = True,
) -> Path:
    """Build the pipeline of ``source`` and run ``spacy package`` on it.

    Returns the package directory (``OUTPUT/grc_stoicheia_NAME-VERSION``); the sdist (and
    wheel, with ``build="sdist,wheel"``) lie in its ``dist/``. Installing the result makes
    ``spacy.load("grc_stoicheia_NAME")`` work.
    """
    from spacy.cli.package import package

    from .. import __version__
    from ..pipeline import register_components

    if not name.isidentifier() or not name.isascii():
        raise ConfigError(f"pipeline name {name!r} must be an ASCII Python identifier (e.g. doc_clean)")
    formats = {f.strip() for f in build.split(",") if f.strip()}
    if not formats <= {"sdist", "wheel", "none"}:
        raise ConfigError(f"--build takes sdist, wheel or none, got {build!r}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    nlp = build_pipeline(source, prefix=prefix, revision=revision)
    version = version or __version__
    nlp.meta.update({
        "name": f"stoicheia_{name}", "version": version,
        "description": f"Stoicheia character-level encoder for Ancient Greek ({source})",
        "sources": [{"name": "Stoicheia", "url": str(source)}],
        "requirements": [f"stoicheia-spacy>={__version__}"],
    })
    with tempfile.TemporaryDirectory() as tmp:
        pipeline_dir = Path(tmp) / "pipeline"
        nlp.to_disk(pipeline_dir)
        package(pipeline_dir, output, code_paths=[Path(register_components.__file__)],
                create_sdist="sdist" in formats, create_wheel="wheel" in formats,
                force=force, silent=silent)
    return output / f"{package_name(name)}-{version}"


@app.command("package")
def package_command(
    source: str = typer.Argument(..., help="Checkpoint directory or Hugging Face repo id"),
    name: str = typer.Option(..., "--name", "-n", help="Pipeline name: installs as grc_stoicheia_NAME"),
    output: Path = typer.Option(Path("packages"), "--output", "-o", help="Output directory"),
    prefix: str = typer.Option(None, "--prefix", help="Backbone prefix in task checkpoints (tagger.encoder.)"),
    revision: str = typer.Option(None, "--revision", help="Hub revision"),
    version: str = typer.Option(None, "--version", help="Package version (default: stoicheia-spacy's)"),
    build: str = typer.Option("sdist", "--build", help="sdist, wheel (needs 'build' or 'wheel'), or none"),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing package directory"),
) -> None:
    """Build a spaCy pipeline from a released checkpoint and package it with ``spacy package``."""
    msg = Printer()
    msg.info(f"Loading checkpoint {source}")
    try:
        path = package_pipeline(source, name, output, prefix=prefix, revision=revision,
                                version=version, build=build, force=force, silent=False)
    except ConfigError as exc:
        msg.fail(str(exc), exits=1)
    msg.good(f"Packaged {package_name(name)}", str(path))
