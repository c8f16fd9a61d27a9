"""The parallels component's results: ``doc._.parallels`` is a list (most similar first) of
:class:`Passage` records, each frozen, ``to_dict()`` its JSON::

    {"id": "bgu.1.100", "source": "ddbdp", "text": "ομολογω πεπρακεναι σοι καμηλον", "start": 0,
     "end": 12, "line": 2, "shared": 9, "score": 0.75, "url": "https://papyri.info/ddbdp/bgu;1;100"}
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records import Record, record

__all__ = ["Passage"]


@record
@dataclass(frozen=True, slots=True)
class Passage(Record):
    """A passage of the open corpus similar to the Doc: ``id``/``source`` (its document),
    ``text`` (a snippet, letters-only with word division and the editor's supplements in
    ``[ ]``; a letter 12-gram it shares with the Doc at ``text[start:end]``), ``line`` (None
    where unknown), ``shared`` (how many of the Doc's sampled 12-grams it holds), ``score``
    (``shared`` over the number sampled) and ``url`` (papyri.info, None where the id gives none)."""

    id: str
    source: str
    text: str
    start: int
    end: int
    line: int | None
    shared: int
    score: float
    url: str | None = None
