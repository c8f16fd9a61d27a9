"""Docs that leave the process: msgpack encoders for the objects our components store.

``doc.to_bytes()`` (used by ``nlp.pipe(n_process=...)`` to send Docs back from its workers,
and by ``DocBin(store_user_data=True)``) packs ``doc.user_data`` with msgpack, which cannot
pack :class:`~stoicheia_spacy.encoder.types.StoicheiaDocData` (the encoder's per-letter states) or
the other objects our components store (alignments, planes, plane predictions). Registered
here: the encoder's data is dropped (``doc._.stoicheia`` is None on the other side: hundreds
of megabytes of hidden states never cross a process boundary; the components already used
them); any other object of this package travels as its ``to_dict()`` or as a dict of its
dataclass fields (arrays included).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from srsly.msgpack import msgpack_encoders

from .types import StoicheiaDocData


def encode_stoicheia(obj: Any, chain: Callable[[Any], Any] | None = None) -> Any:
    """msgpack ``default`` hook (see the module docstring)."""
    if isinstance(obj, StoicheiaDocData):
        return None
    if type(obj).__module__.startswith("stoicheia_spacy."):
        if callable(getattr(obj, "to_dict", None)):
            return obj.to_dict()
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return obj if chain is None else chain(obj)


msgpack_encoders.register("stoicheia", func=encode_stoicheia)
