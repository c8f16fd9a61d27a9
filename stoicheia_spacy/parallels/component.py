"""The opt-in ``stoicheia_parallels`` pipe: ``doc._.parallels``, the passages of the open corpus
most similar to the whole Doc.

It reads the parallels index of the lexicon data package (``package``, null: ``stoicheia_lexicon_grc``;
or of ``path``), samples
up to ``samples`` letter 12-grams of the Doc's surviving letters (word division ignored, gaps
cut them), and ranks the documents holding them by how many they share
(:func:`~stoicheia_spacy.parallels.search.similar`), leaving out the Doc's own document and its
duplicates (:func:`~stoicheia_spacy.parallels.search.leave_out`): ``doc._.parallels`` is a list
of up to ``n`` :class:`~.results.Passage` records, most similar first. It needs no other pipe
(``spacy.blank("grc")`` will do) and assigns nothing else; a missing or corrupt index raises
:class:`~stoicheia_spacy.errors.ParallelsIndexError` naming the data package.
"""

from __future__ import annotations

from functools import cache

from spacy.language import Language
from spacy.tokens import Doc

from ..accent.lexasset import find_parallels
from ..errors import ConfigError
from ..records import set_records_extension
from .index import ParallelIndex, papyri_url, query_letters
from .results import Passage
from .search import GRAM, leave_out, similar

set_records_extension("parallels")  # a list of Passage records


@cache
def _index(folder: str) -> ParallelIndex:
    return ParallelIndex(folder)


class ParallelsPipe:
    """``doc._.parallels`` (module doc)."""

    def __init__(self, name: str = "stoicheia_parallels", *, n: int = 5, samples: int = 200,
                 package: str | None = None, path: str | None = None) -> None:
        if isinstance(n, bool) or int(n) < 1 or isinstance(samples, bool) or int(samples) < 1:
            raise ConfigError(f"stoicheia_parallels n and samples must be positive, got {n!r}, {samples!r}")
        self.name, self.n, self.samples, self.package, self.path = name, int(n), int(samples), package, path

    def index(self) -> ParallelIndex:
        """The index (loaded once per folder)."""
        return _index(str(find_parallels(self.path, self.package).resolve()))

    def passages(self, text: str, own_id: str | None = None) -> list[Passage]:
        """The passages most similar to ``text`` (Leiden markup allowed), ``own_id``'s left out."""
        index = self.index()
        letters = query_letters(text)
        exclude = leave_out(index, letters, own_id)
        out = []
        for d, pos, shared, score in similar(index, letters, n=self.n, exclude=exclude, samples=self.samples):
            snippet, start, end = index.snippet(pos, pos + GRAM, 40)
            out.append(Passage(id=index.ids[d], source=index.sources[d], text=snippet, start=start, end=end,
                               line=index.line(pos), shared=shared, score=float(score),
                               url=papyri_url(index.ids[d], index.sources[d])))
        return out

    def __call__(self, doc: Doc) -> Doc:
        doc._.parallels = self.passages(doc.text)
        return doc


@Language.factory("stoicheia_parallels", assigns=["doc._.parallels"], requires=[],
                  default_config={"n": 5, "samples": 200, "package": None, "path": None})
def make_parallels(nlp: Language, name: str, n: int, samples: int, package: str | None,
                   path: str | None) -> ParallelsPipe:
    """Create the opt-in ``stoicheia_parallels`` pipe (module doc)."""
    return ParallelsPipe(name, n=n, samples=samples, package=package, path=path)


__all__ = ["ParallelsPipe", "make_parallels"]
