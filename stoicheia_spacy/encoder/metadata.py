"""Inscription metadata of the restoration fine-tunes: region and century ids.

``doc._.region`` (a name of :data:`REGIONS`, case-insensitive, or its id) and
``doc._.century`` (a year, negative = BC) set before the encoder runs reach the
backbone's ``e_region``/``e_century`` tables (:func:`doc_metadata`); unset, both are the
tables' last row, "unknown". A backbone without the tables ignores them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spacy.tokens import Doc

from ..errors import InvalidInputError

for _name in ("region", "century"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)

#: Region names of the restoration fine-tunes, in id order (the last, ``unknown``, is id 14).
REGIONS: tuple[str, ...] = (
    "Asia Minor", "Aegean Islands, incl. Crete", "Attica", "Central Greece", "Peloponnesos",
    "Egypt, Nubia and Cyrenaïca", "Northern Greece", "Greater Syria and the East",
    "Sicily, Italy, and the West", "Thrace and the Lower Danube", "North Shore of the Black Sea",
    "Cyprus", "Upper Danube", "North Africa", "unknown",
)
#: First year of the century bins (bins of 100 years from here).
CENTURY_FROM, CENTURY_TO = -800, 600
REGION_ROWS = (len(REGIONS),)
CENTURY_ROWS = (15, 16)


def region_id(region: Any, n_rows: int) -> int:
    """The ``e_region`` row of ``region`` (a name of :data:`REGIONS`, case-insensitive, or an
    id); None, ``""`` and ``"unknown"`` give the last row."""
    unknown = n_rows - 1
    if region is None or (isinstance(region, str) and region.strip().lower() in ("", "unknown")):
        return unknown
    if isinstance(region, int) and not isinstance(region, bool):
        if not 0 <= region < n_rows:
            raise InvalidInputError(f"region id {region} outside 0..{n_rows - 1}")
        return region
    if isinstance(region, str):
        if region.strip().isdigit():
            return region_id(int(region), n_rows)
        names = {name.lower(): i for i, name in enumerate(REGIONS[: n_rows - 1])}
        key = region.strip().lower()
        if key in names:
            return names[key]
        raise InvalidInputError(f"unknown region {region!r}; expected one of: {', '.join(REGIONS[:-1])}")
    raise InvalidInputError(f"region must be a name or an id, got {type(region).__name__}")


def century_id(year: Any, n_rows: int) -> int:
    """The ``e_century`` row of a year (negative = BC): its 100-year bin counted from
    :data:`CENTURY_FROM`, clamped to the table's known bins; None or ``"unknown"`` give the
    last row (unknown). A 16-row table has the research code's 15 bins (−800 … 600), a
    15-row table the specification's 14."""
    unknown = n_rows - 1
    if year is None or (isinstance(year, str) and year.strip().lower() in ("", "unknown")):
        return unknown
    if isinstance(year, str):
        try:
            year = int(year.strip())
        except ValueError as exc:
            raise InvalidInputError(f"century must be a year such as -450 (450 BC), got {year!r}") from exc
    if isinstance(year, bool) or not isinstance(year, int):
        raise InvalidInputError(f"century must be a year (int), got {type(year).__name__}")
    clamped = max(CENTURY_FROM, min(CENTURY_TO, year))
    return min((clamped - CENTURY_FROM) // 100, unknown - 1)



def doc_metadata(docs: Sequence[Doc], config: dict[str, Any]) -> dict[str, list[int]]:
    """Per Doc, the ``region``/``century`` row ids for a backbone of ``config`` (its
    ``n_region``/``n_century``); only the tables the backbone has."""
    out: dict[str, list[int]] = {}
    for key, ext, to_id in (("n_region", "region", region_id), ("n_century", "century", century_id)):
        rows = config.get(key)
        if rows:
            out[ext] = [to_id(getattr(doc._, ext), int(rows)) for doc in docs]
    return out
