"""Exceptions raised by stoicheia-spacy. Every public function raises one of these
(or a documented fallback) on bad input, never a bare crash."""

from __future__ import annotations


class StoicheiaError(Exception):
    """Base class of every error raised by this package."""


class InvalidTextError(StoicheiaError, ValueError):
    """Text that cannot be processed (NUL bytes, lone surrogates, wrong type...);
    ``offset`` is the index of the offending character (-1 when not positional)."""

    def __init__(self, message: str, offset: int = -1) -> None:
        super().__init__(message)
        self.offset = offset


class LeidenSyntaxError(StoicheiaError, ValueError):
    """Malformed Leiden / Ithaca markup; ``offset`` is the index in the input text."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at offset {offset})")
        self.offset = offset


class CheckpointError(StoicheiaError):
    """A checkpoint that is missing, corrupt, truncated, or of the wrong shape."""


class ModelNotAvailableError(StoicheiaError):
    """A model that cannot be fetched (offline, unknown repo id)."""


class ConfigError(StoicheiaError, ValueError):
    """An invalid model or pipeline configuration."""


class LexiconMissingError(ConfigError):
    """A pipeline names a lexicon data package (``stoicheia-lexicon-grc``) that is not
    installed, or not the version / file it was saved with."""


class ParallelsIndexError(StoicheiaError):
    """The parallels index (in the lexicon data package ``stoicheia-lexicon-grc``) is not
    installed, incomplete or corrupt."""


class CorpusError(StoicheiaError, ValueError):
    """A training corpus that cannot be read: missing file, bad record schema, no usable text."""


class AssetChecksumError(CorpusError):
    """A fetched asset whose sha256 differs from the pinned one."""


class ContaminationError(CorpusError):
    """Verification found text shared between training data and held-out or documentary text."""


class InvalidInputError(StoicheiaError, ValueError):
    """Model inputs of the wrong type, shape or id range (e.g. a plane id out of its vocabulary)."""


class InvalidExampleError(StoicheiaError, ValueError):
    """A training example whose planes are malformed (shape, length, dtype or id range)."""


class DecodingError(StoicheiaError, ValueError):
    """Scores that cannot be decoded: wrong shape, NaN, or no valid structure
    (no spanning tree with a single root, no path through a metre automaton)."""


class ScoringError(StoicheiaError, ValueError):
    """Inputs to a scorer that do not fit together (lengths, tokenisation, empty gold)."""


class InvalidPlanesError(StoicheiaError, ValueError):
    """Character planes that are malformed (unequal lengths, ids out of range...)."""


class InvalidTagError(StoicheiaError, ValueError):
    """A morphological tag that is not a valid 9-position AGDT tag."""


class TreebankError(StoicheiaError, ValueError):
    """A treebank file or sentence that cannot be read (bad XML, missing source, bad tree)."""


class EpiDocError(StoicheiaError, ValueError):
    """An EpiDoc TEI file that cannot be read or written safely: unreadable, too large,
    malformed or not TEI, declaring entities, or with an impossible gap width."""
