"""The ``stoicheia_accentuator`` pipe: accentuate Docs that are already tokenized.

A pipe cannot change ``doc.text``, so it annotates: ``doc._.accent_text`` is the rendered
polytonic text, ``doc._.source_alignment`` its :class:`~stoicheia_spacy.accent.align.Alignment`
with ``doc.text``, ``doc._.accent_planes`` the prediction, and each token whose letters
render contiguously gets its accented form as ``token.norm_`` (LatinCy-style).  By default
word division is copied from the Doc (``boundary = "copy"``) so that tokens and rendered
words agree; set ``boundary = "predict"`` to re-divide (then only ``doc._.accent_text``
reflects the new division).  To make the rendered text the Doc text, use the tokenizer
``stoicheia.Segmenter.v1`` instead.  The pipe owns its backbone like the segmenter
(``model_source``, default the embedded model; saved by ``to_disk``).

Leiden gaps in ``doc.text`` (``notation``, as for the segmenter) are fed to the model as
MASK letters and appear in ``doc._.accent_text`` as canonical markup; a text whose markup
does not parse (e.g. an unbalanced ``(``) is accentuated as plain text (documented fallback,
so that ordinary prose never fails in the pipe).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc

from ..accent.predict import PlaneControl
from ..accent.segment import StoicheiaSegmenter
from ..errors import LeidenSyntaxError

if not Doc.has_extension("accent_text"):
    Doc.set_extension("accent_text", default=None)


@Language.factory(
    "stoicheia_accentuator",
    assigns=["doc._.accent_text", "doc._.source_alignment", "doc._.accent_planes", "token.norm"],
    default_config={"model_source": None, "boundary": "copy", "diacritics": "keep", "punctuation": "keep",
                    "capitals": "keep", "lowercase": False, "orthography": True, "max_length": 2048,
                    "overlap": 256, "batch_size": 64, "device": "cpu", "notation": "leiden",
                    "unknown_slots": 5},
)
def make_stoicheia_accentuator(
    nlp: Language, name: str, model_source: str | None, boundary: str, diacritics: str, punctuation: str,
    capitals: str, lowercase: bool, orthography: bool, max_length: int, overlap: int, batch_size: int,
    device: str, notation: str | None, unknown_slots: int,
) -> StoicheiaAccentuator:
    """Create the accentuator pipe."""
    control = PlaneControl(boundary=boundary, diacritics=diacritics, punctuation=punctuation,
                           capitals=capitals, lowercase=lowercase, orthography=orthography)
    return StoicheiaAccentuator(nlp, name, StoicheiaSegmenter(
        nlp.vocab, model_source=model_source, control=control, max_length=max_length, overlap=overlap,
        batch_size=batch_size, device=device, notation=notation, unknown_slots=unknown_slots))


class StoicheiaAccentuator:
    """Annotate Docs with their accentuated rendering (see the module docstring)."""

    def __init__(self, nlp: Language, name: str, segmenter: StoicheiaSegmenter) -> None:
        self.name = name
        self.segmenter = segmenter

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 64) -> Iterator[Doc]:
        """Accentuate Docs in batches (one packed forward per batch)."""
        batch: list[Doc] = []
        for doc in stream:
            batch.append(doc)
            if len(batch) >= batch_size:
                yield from self._process(batch)
                batch = []
        if batch:
            yield from self._process(batch)

    def _process(self, docs: list[Doc]) -> list[Doc]:
        from ..accent.predict import predict_planes
        from ..accent.segment import gapped_planes, render_with_gaps

        seg = self.segmenter
        fed = []
        for doc in docs:
            try:
                fed.append(gapped_planes(doc.text, notation=seg.notation, unknown_slots=seg.unknown_slots))
            except LeidenSyntaxError:
                fed.append(gapped_planes(doc.text, notation=None))
        preds = predict_planes(seg.model, [p for p, _ in fed], seg.control, max_length=seg.max_length,
                               overlap=seg.overlap, max_rows=seg.batch_size)
        for doc, pred, (_, runs) in zip(docs, preds, fed, strict=True):
            rendered, alignment, _ = render_with_gaps(doc.text, pred.planes, runs)
            doc._.accent_text = rendered
            doc._.source_alignment = alignment
            doc._.accent_planes = pred
            s2r = alignment.source_to_rendered
            for token in doc:
                hits = s2r[token.idx: token.idx + len(token.text)]
                hits = hits[hits >= 0]
                if not len(hits):
                    continue
                lo, hi = int(hits.min()), int(hits.max()) + 1
                while hi < len(rendered) and not rendered[hi].isspace() and rendered[hi] not in ",·:.;":
                    hi += 1  # trailing combining marks / elision of the last letter
                if " " not in rendered[lo:hi]:
                    token.norm_ = rendered[lo:hi]
        return docs

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> None:
        """Settings and backbone weights."""
        self.segmenter.to_disk(path, exclude=exclude)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> StoicheiaAccentuator:
        """Read what :meth:`to_disk` wrote."""
        self.segmenter.from_disk(path, exclude=exclude)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return self.segmenter.to_bytes(exclude=exclude)

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> StoicheiaAccentuator:
        self.segmenter.from_bytes(data, exclude=exclude)
        return self

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None) -> None:
        """Nothing to train; the backbone loads lazily."""


__all__ = ["StoicheiaAccentuator", "make_stoicheia_accentuator"]
