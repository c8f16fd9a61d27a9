"""The base of the components' typed results: frozen records with one ``to_dict()`` for JSON.

Each component's results module (``restore/results.py``, ``scan/results.py``,
``date/results.py``) defines its records as frozen dataclasses on :class:`Record`, marked with
:func:`record`. ``to_dict()`` gives JSON-ready data (nested records as dicts, tuples as
lists); ``from_dict()`` rebuilds a record from it (lists or tuples alike). A Doc holding records
in its extensions still round-trips through ``Doc.to_bytes`` and ``DocBin(store_user_data=True)``:
spaCy writes ``doc.user_data`` with srsly's msgpack, for which this module registers an encoder
(a record becomes ``{"__stoicheia__": class name, "data": to_dict()}``) and a decoder that
rebuilds it, as srsly does for numpy arrays. A Doc extension holding a list of records is
declared with :func:`set_records_extension`, so that it reads back as a list whichever reader
(``DocBin`` returns tuples, ``Doc.from_bytes`` lists).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import srsly
from spacy.tokens import Doc

#: The key of a record written by msgpack (its class name; the record's dict is under ``data``).
RECORD_KEY = "__stoicheia__"

_TYPES: dict[str, type[Record]] = {}

R = TypeVar("R", bound="Record")


def record(cls: type[R]) -> type[R]:
    """Register the record class ``cls`` for the msgpack round trip (by its class name)."""
    if cls.__name__ in _TYPES and _TYPES[cls.__name__] is not cls:
        raise TypeError(f"two record classes named {cls.__name__}")
    _TYPES[cls.__name__] = cls
    return cls


def plain(value: Any) -> Any:
    """``value`` as JSON-ready data: records as their ``to_dict()``, tuples as lists, numpy
    scalars as Python numbers."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    item: Callable[[], Any] | None = getattr(value, "item", None)  # a numpy scalar
    if item is not None and not isinstance(value, str | bytes):
        return item()
    return value


class Record:
    """A frozen result (subclasses are ``@dataclass(frozen=True, slots=True)``)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (one key per field)."""
        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls: type[R], data: Mapping[str, Any]) -> R:
        """The record of :meth:`to_dict`'s data (unknown keys are ignored, sequences become tuples)."""
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: _frozen(v) for k, v in data.items() if k in names})


def _frozen(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def _encode(obj: Any, chain: Callable[[Any], Any] | None = None) -> Any:
    if isinstance(obj, Record):
        return {RECORD_KEY: type(obj).__name__, "data": obj.to_dict()}
    return obj if chain is None else chain(obj)


def _decode(obj: Any, chain: Callable[[Any], Any] | None = None) -> Any:
    if isinstance(obj, dict) and RECORD_KEY in obj:
        cls = _TYPES.get(str(obj[RECORD_KEY]))
        if cls is not None:
            return cls.from_dict(obj["data"])
    return obj if chain is None else chain(obj)


def set_records_extension(name: str) -> None:
    """Declare ``doc._.NAME`` (default None): a list of records, stored at spaCy's own
    ``user_data`` key for the extension and read back as a list (a copy: the records are frozen,
    and so is what a component wrote)."""
    if Doc.has_extension(name):
        return
    key = ("._.", name, None, None)

    def get(doc: Doc) -> list[Any] | None:
        user_data: dict[Any, Any] = doc.user_data  # spaCy's keys are tuples
        value = user_data.get(key)
        return None if value is None else list(value)

    def put(doc: Doc, value: Any) -> None:
        user_data: dict[Any, Any] = doc.user_data
        user_data[key] = None if value is None else list(value)

    Doc.set_extension(name, getter=get, setter=put)


srsly.msgpack_encoders.register("stoicheia_records", func=_encode)
srsly.msgpack_decoders.register("stoicheia_records", func=_decode)

__all__ = ["RECORD_KEY", "Record", "plain", "record", "set_records_extension"]
