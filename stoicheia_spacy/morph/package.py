"""Add trained morphosyntax components (directories written by their ``to_disk``) to a pipeline.

The default model's ``config.cfg`` names ``assets/models/grc_stoicheia_doc_clean/morphosyntax``
in its ``[initialize]``; :func:`add_morphosyntax` does the same for other head folders (through
spaCy: each component's ``initialize(weights=...)``). The heads read the shared
``stoicheia_encoder`` through listeners with ``grad_factor`` 0 (they were trained on a frozen
backbone).
"""

from __future__ import annotations

from pathlib import Path

from spacy.language import Language

#: Components in pipeline order (each one is added when its directory exists).
COMPONENTS: tuple[str, ...] = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


def add_morphosyntax(nlp: Language, directory: str | Path) -> list[str]:
    """Add every component found under ``directory`` (``directory/<factory name>/``) after the
    encoder; returns the names added."""
    from ..assembly import add_from_weights

    directory = Path(directory)
    added = []
    for name in COMPONENTS:
        path = directory / name
        if not any((path / f).is_file() for f in ("data.json", "cfg")):  # cfg: a folder saved before data.json
            continue
        add_from_weights(nlp, name, path, config={"model": {"tok2vec": {"grad_factor": 0.0}}})
        added.append(name)
    return added


def default_morphosyntax_dir() -> Path:
    """``morphosyntax/`` beside the embedded default backbone."""
    from ..assets import default_model_dir

    return default_model_dir() / "morphosyntax"
