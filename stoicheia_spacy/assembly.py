"""Pipeline assembly: a checkpoint, a package or the embedded default -> a ready spaCy pipeline.

:func:`build_pipeline` is the one place where a backbone becomes a ``stoicheia_encoder``
pipeline; the task pipelines (:func:`morphosyntax_pipeline`, :func:`restorer_pipeline`,
:func:`scanner_pipeline`) and :func:`load_pipeline` build on it. The command line,
the benchmarks and the projects call these functions; nothing here depends on ``cli``.

``--model`` on the command line always names a pipeline (:func:`load_pipeline`: an
installed package or a saved directory); ``--source`` names a backbone checkpoint
(:func:`build_pipeline`: hub id, directory or ``embedded:NAME``).

Listeners need no linking here: spaCy's public ``add_pipe``, ``remove_pipe``,
``initialize`` and ``load`` hand every component to the ``stoicheia_encoder``'s
``find_listeners``, and the components load their weights in place (``from_disk``), so a
component added and then loaded stays linked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spacy.language import Language

from .errors import ConfigError

#: The embedded default backbone (``assets/models/grc_stoicheia_doc_clean``).
DEFAULT_SOURCE = "embedded:grc_stoicheia_doc_clean"
#: The installed default pipeline (``make demo``).
DEFAULT_PACKAGE = "grc_stoicheia_doc_clean"
#: ``stoicheia.CharEncoder.v1`` arguments read from the checkpoint's config.json.
ARCH_KEYS = ("d_model", "n_heads", "depth", "char_window", "qk_norm", "attn_impl",
             "n_region", "n_century", "use_cap_input")
#: Optional file beside a checkpoint listing the components its package holds.
MANIFEST = "pipeline.json"


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

    The architecture comes from the checkpoint's ``config.json``; ``max_length`` and
    ``overlap`` are the long-document windows of one forward (see
    :mod:`stoicheia_spacy.backbone.windows`). The initialize section records the loader so
    that the config retrains from the same weights. With ``components`` (default), a local
    checkpoint's ``pipeline.json`` adds the task components that ship beside it (see
    :func:`add_manifest_components`) and a released task checkpoint its heads.
    """
    import spacy

    from .backbone import load_backbone
    from .backbone.loading import resolve_source
    from .models import set_backbone_weights
    from .release import AS_WRITTEN_KINDS, add_released_heads, backbone_prefix, detect_kind

    directory = resolve_source(source, revision)  # a local snapshot for hub ids
    if prefix is None:
        prefix = backbone_prefix(directory)  # encoder. / tagger.encoder. in task checkpoints
    backbone = load_backbone(directory, prefix=prefix)
    config = backbone.config.to_dict()
    model: dict[str, Any] = {"@architectures": "stoicheia.CharEncoder.v1",
                             "max_length": max_length, "overlap": overlap}
    model.update({k: config.get(k, None if k.startswith("n_") else False) for k in ARCH_KEYS})
    kind = detect_kind(directory)
    if components and kind in AS_WRITTEN_KINDS:  # fine-tunes read planes as written
        model["hide_unmarked"] = False
    if components and kind == "tagger_parser":  # words encoded one by one, as written (models/token_planes.py)
        model.update({"planes": "tokens", "hide_unmarked": False})
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


def add_manifest_components(nlp: Language, manifest: Path) -> None:
    """Add the components a ``pipeline.json`` lists, in order, after the encoder.

    Each entry has ``factory`` and optional ``name``, ``config`` and ``weights`` (a folder
    beside the manifest read with the component's ``from_disk``).
    """
    import srsly

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


def load_pipeline(model: str | Path) -> Language:
    """``spacy.load`` of a pipeline: an installed package name or a saved directory."""
    import spacy

    return spacy.load(model)


def morphosyntax_pipeline(model: str | Path | None = None) -> Language:
    """``model`` (a pipeline), else the default backbone + the morphosyntax heads shipped beside it."""
    if model:
        return load_pipeline(model)
    from .morph.package import add_morphosyntax, default_morphosyntax_dir

    nlp = build_pipeline(DEFAULT_SOURCE, components=False)
    if not add_morphosyntax(nlp, default_morphosyntax_dir()):
        raise ConfigError("no morphosyntax heads are shipped with the default model: name a pipeline")
    return nlp


def restorer_pipeline(model: str | Path | None = None, *, beam_width: int = 20, n_candidates: int = 20) -> Language:
    """``model`` (a pipeline), else the installed ``grc_stoicheia_doc_clean``, else the
    restoration preset (:func:`stoicheia_spacy.restore.preset.restoration_pipeline`); a
    ``stoicheia_restorer`` is added when missing."""
    nlp = None
    if model:
        nlp = load_pipeline(model)
    else:
        try:
            nlp = load_pipeline(DEFAULT_PACKAGE)
        except OSError:  # the restoration-only preset: encoder + restorer
            from .restore.preset import restoration_pipeline

            nlp = restoration_pipeline()
    config = {"beam_width": beam_width, "n_candidates": n_candidates}
    if "stoicheia_restorer" not in nlp.pipe_names:
        nlp.add_pipe("stoicheia_restorer", config=config)
    else:
        restorer: Any = nlp.get_pipe("stoicheia_restorer")
        restorer.cfg.update(config)
    return nlp


def scanner_dir() -> Path | None:
    """The shipped scanner heads folder, or None when they are not trained/shipped."""
    from .assets import default_model_dir

    path = Path(default_model_dir()) / "scanner"
    return path if (path / "heads.safetensors").is_file() else None


def scanner_pipeline(source: str = DEFAULT_SOURCE, heads: Path | None = None) -> Language:
    """Encoder from ``source`` + ``stoicheia_scanner`` loaded from ``heads`` (default: shipped)."""
    heads = heads or scanner_dir()
    if heads is None:
        raise ConfigError("no trained scanner heads found (train them with projects/meter)")
    nlp = build_pipeline(source, components=False)  # only the encoder: the scanner is added below
    nlp.add_pipe("stoicheia_scanner").from_disk(heads)  # type: ignore[attr-defined]
    return nlp


__all__ = [
    "ARCH_KEYS", "DEFAULT_PACKAGE", "DEFAULT_SOURCE", "MANIFEST", "add_manifest_components",
    "build_pipeline", "load_pipeline", "morphosyntax_pipeline",
    "restorer_pipeline", "scanner_dir", "scanner_pipeline", "stored_dtype",
]
