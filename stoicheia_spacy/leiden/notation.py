"""``parse_gaps``: one entry for every notation: Leiden and DDbDP text (:mod:`.parser`), EpiDoc
TEI XML (:mod:`.epidoc`, read as Leiden text and parsed)."""

from __future__ import annotations

from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.leiden.epidoc import epidoc_gapped
from stoicheia_spacy.leiden.model import GappedText, Notation
from stoicheia_spacy.leiden.parser import parse_leiden
from stoicheia_spacy.textcheck import validate_text

__all__ = ["parse_gaps"]


def parse_gaps(text: str, *, notation: Notation = "leiden", strip_restorations: bool = False) -> GappedText:
    """Parse Leiden / Ithaca / DDbDP gap markup (:func:`~.parser.parse_leiden`, whose
    docstring gives the conventions) or an EpiDoc file (``notation="epidoc"``:
    :func:`~.epidoc.epidoc_gapped`, offsets leading back into the XML) into a
    :class:`GappedText`. With ``strip_restorations=True`` editorial restorations become
    ``restored`` gaps of their length (the evaluation view).

    Raises :class:`~stoicheia_spacy.errors.InvalidTextError` for NUL bytes / lone
    surrogates, :class:`~stoicheia_spacy.errors.LeidenSyntaxError` (with the ``offset`` of
    the culprit in ``text``) for malformed markup and
    :class:`~stoicheia_spacy.errors.EpiDocError` for a bad EpiDoc file.
    """
    if notation == "epidoc":
        validate_text(text)
        return epidoc_gapped(text, strip_restorations=strip_restorations)
    if notation not in ("leiden", "ddbdp"):
        raise ConfigError(f"unknown notation {notation!r}: use 'leiden', 'ddbdp' or 'epidoc'")
    return parse_leiden(text, notation=notation, strip_restorations=strip_restorations)
