"""Configs written before the settings blocks: their flat component options, moved into
the block (``[components.NAME.settings]``) that now holds them.

A pipeline saved (or a released checkpoint packaged by ``stoicheia package``) before a
component's options became one settings object has them as flat keys of
``[components.NAME]``; :func:`migrate_config` moves those keys into the component's
settings block, so :func:`stoicheia_spacy.assembly.load_pipeline` and
:func:`~stoicheia_spacy.assembly.assemble` read both layouts. A flat key that is no option
of the component raises :class:`~stoicheia_spacy.errors.ConfigError` naming the options.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from thinc.api import Config

from .accent.settings import AccentuatorSettings
from .encoder.pipe import EncoderSettings
from .errors import ConfigError
from .morph.settings import LemmatizerSettings, MorphologizerSettings, ParserSettings
from .scan.settings import ScannerSettings


def _blocks() -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """factory -> (the settings block's function, its option names, the factory's own arguments)."""
    def names(cls: Any) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    return {
        "stoicheia_scanner": ("stoicheia.ScannerSettings.v1", names(ScannerSettings), ("model", "lexicon")),
        "stoicheia_accentuator": ("stoicheia.AccentuatorSettings.v1", names(AccentuatorSettings), ("lexicon",)),
        "stoicheia_encoder": ("stoicheia.EncoderSettings.v1", names(EncoderSettings), ("model",)),
        "stoicheia_morphologizer": ("stoicheia.MorphologizerSettings.v1", names(MorphologizerSettings),
                                    ("model", "scorer")),
        "stoicheia_lemmatizer": ("stoicheia.LemmatizerSettings.v1", names(LemmatizerSettings), ("model", "scorer")),
        "stoicheia_parser": ("stoicheia.ParserSettings.v1", names(ParserSettings), ("model", "scorer")),
    }


def migrate_config(config: Config) -> tuple[Config, bool]:
    """``config`` with every legacy flat option inside its settings block, and whether
    anything moved (the input is not changed)."""
    blocks = _blocks()
    out = Config(config)
    changed = False
    for name, block in dict(out.get("components", {})).items():
        if not isinstance(block, dict) or block.get("factory") not in blocks:
            continue
        func, options, own = blocks[block["factory"]]
        flat = {k: v for k, v in block.items() if k not in ("factory", "settings", *own)}
        if not flat:
            continue
        unknown = sorted(set(flat) - set(options))
        if unknown:
            raise ConfigError(f"[components.{name}] has unknown option(s) {unknown}; the settings of "
                              f"{block['factory']} are {list(options)} (in [components.{name}.settings])")
        settings = dict(block.get("settings") or {"@misc": func})
        settings.update(flat)
        new_block = {k: v for k, v in block.items() if k not in flat}
        new_block["settings"] = settings
        out["components"][name] = new_block
        changed = True
    return out, changed


__all__ = ["migrate_config"]
