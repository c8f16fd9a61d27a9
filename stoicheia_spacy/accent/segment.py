"""``stoicheia.Segmenter.v1``: a tokenizer that accentuates and divides unaccented text.

Used as ``nlp.tokenizer``, ``nlp("ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ")`` returns a Doc whose **text is the
rendered polytonic text** (e.g. ``"ἐν ἀρχῇ ἦν ὁ λόγος"`` when the model gets it right) and
whose tokens are the predicted words, with punctuation marks as tokens of their own
(an elided word keeps its ``’``).  The input is kept:

* ``doc._.source_text``: the text as given;
* ``doc._.source_alignment``: an :class:`~.align.Alignment` (``rendered_to_source`` per Doc
  character, ``source_to_rendered`` per source character; -1 where there is no counterpart);
* ``doc._.accent_planes``: the :class:`~.predict.PlanePrediction` (output planes, which
  positions were filled by the model, the probability of each chosen value).

Only modelled content is rendered: Greek letters, their diacritics, word division and the
five punctuation classes.  Other characters of the source (digits, Latin, brackets, Leiden
sigla) do not appear in ``doc.text``; they stay in ``doc._.source_text``.  Leiden gaps are
not restored here: a MASK letter renders as ``◌`` (see :mod:`stoicheia_spacy.codec`).

Weights: the segmenter owns its backbone, loaded lazily from ``model_source`` (a directory
or hub id; default the embedded model, :func:`stoicheia_spacy.assets.default_model_dir`).
It does not share the ``stoicheia_encoder`` pipe's weights: the tokenizer is built before
any pipe and runs before them, and the encoder must encode the *rendered* Doc anyway.
``to_disk`` writes ``segmenter.json`` + ``config.json`` + ``model.safetensors``, so
``nlp.to_disk``/``spacy.load`` round-trip the weights.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import srsly
from spacy.tokens import Doc
from spacy.util import registry
from spacy.vocab import Vocab

from ..codec import PUNCT_OUT, decode_planes, encode_planes
from ..errors import CheckpointError, InvalidTextError
from ..textcheck import validate_text
from .align import Alignment, align
from .predict import PlaneControl, PlanePrediction, predict_planes

if TYPE_CHECKING:  # pragma: no cover
    from ..backbone import StoicheiaEncoder

for _name in ("source_text", "source_alignment", "accent_planes"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)

_PUNCT_CHARS = "".join(sorted({c for c in PUNCT_OUT if c}))
#: a word (no spaces, no punctuation) or one punctuation mark
_TOKEN = re.compile(rf"[^\s{re.escape(_PUNCT_CHARS)}]+|[{re.escape(_PUNCT_CHARS)}]")


def words_and_spaces(text: str) -> tuple[list[str], list[bool]]:
    """spaCy ``words``/``spaces`` of rendered text: words and punctuation marks."""
    words: list[str] = []
    spaces: list[bool] = []
    for m in _TOKEN.finditer(text):
        words.append(m.group())
        spaces.append(m.end() < len(text) and text[m.end()].isspace())
    return words, spaces


class StoicheiaSegmenter:
    """Tokenizer: source text -> Doc of the rendered, accentuated, word-divided text."""

    def __init__(
        self,
        vocab: Vocab,
        *,
        model_source: str | None = None,
        control: PlaneControl | None = None,
        max_length: int = 2048,
        overlap: int = 256,
        batch_size: int = 64,
        device: str = "cpu",
        model: StoicheiaEncoder | None = None,
    ) -> None:
        self.vocab = vocab
        self.model_source = model_source
        self.control = control or PlaneControl()
        self.max_length = max_length
        self.overlap = overlap
        self.batch_size = batch_size
        self.device = device
        self._model = model

    # ------------------------------------------------------------ model
    @property
    def model(self) -> StoicheiaEncoder:
        """The backbone (loaded on first use)."""
        if self._model is None:
            from ..assets import default_model_dir
            from ..backbone import load_backbone

            source = self.model_source or str(default_model_dir())
            self._model = load_backbone(source, device=self.device)
        return self._model

    # ------------------------------------------------------------ inference
    def __call__(self, text: str) -> Doc:
        return next(iter(self.pipe([text], batch_size=1)))

    def pipe(self, texts: Iterable[str], batch_size: int | None = None) -> Iterator[Doc]:
        """Segment texts in batches; each batch is one packed backbone forward."""
        size = batch_size or self.batch_size
        batch: list[str] = []
        for text in texts:
            batch.append(text)
            if len(batch) >= size:
                yield from self._process(batch)
                batch = []
        if batch:
            yield from self._process(batch)

    def _process(self, texts: list[str]) -> list[Doc]:
        for text in texts:
            if not isinstance(text, str):
                raise InvalidTextError(f"the segmenter takes str, not {type(text).__name__}")
            validate_text(text)
        planes = [encode_planes(t) for t in texts]
        preds = predict_planes(self.model, planes, self.control, max_length=self.max_length,
                               overlap=self.overlap, max_rows=self.batch_size)
        return [self.make_doc(t, p) for t, p in zip(texts, preds, strict=True)]

    def make_doc(self, source: str, pred: PlanePrediction) -> Doc:
        """Render a prediction as a Doc with its source and alignment attached."""
        rendered = decode_planes(pred.planes)
        words, spaces = words_and_spaces(rendered)
        doc = Doc(self.vocab, words=words, spaces=spaces)
        doc._.source_text = source
        doc._.source_alignment = align(source, pred.planes, rendered)
        doc._.accent_planes = pred
        return doc

    # ------------------------------------------------------------ serialization
    def _cfg(self) -> dict[str, Any]:
        c = self.control
        return {"control": {k: getattr(c, k) for k in ("boundary", "diacritics", "punctuation", "capitals",
                                                        "lowercase", "orthography")},
                "max_length": self.max_length, "overlap": self.overlap, "batch_size": self.batch_size}

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> None:
        """Write the settings and the backbone weights (released format)."""
        from ..backbone import save_backbone

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "segmenter.json", self._cfg())
        if "model" not in exclude:
            save_backbone(self.model, path)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> StoicheiaSegmenter:
        """Read what :meth:`to_disk` wrote."""
        from ..backbone import load_backbone

        path = Path(path)
        if not (path / "segmenter.json").is_file():
            raise CheckpointError(f"{path} holds no segmenter.json")
        cfg = srsly.read_json(path / "segmenter.json")
        self.control = PlaneControl.from_dict(cfg["control"])
        self.max_length, self.overlap = int(cfg["max_length"]), int(cfg["overlap"])
        self.batch_size = int(cfg["batch_size"])
        if "model" not in exclude:
            self._model = load_backbone(path, device=self.device)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Settings only (weights travel with ``to_disk``)."""
        return srsly.json_dumps(self._cfg()).encode("utf8")

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> StoicheiaSegmenter:
        """Restore settings written by :meth:`to_bytes`."""
        cfg = srsly.json_loads(data.decode("utf8"))
        self.control = PlaneControl.from_dict(cfg["control"])
        self.max_length, self.overlap = int(cfg["max_length"]), int(cfg["overlap"])
        self.batch_size = int(cfg["batch_size"])
        return self


@registry.tokenizers("stoicheia.Segmenter.v1")
def create_segmenter(
    model_source: str | None = None,
    boundary: str = "keep",
    diacritics: str = "keep",
    punctuation: str = "keep",
    capitals: str = "predict",
    lowercase: bool = False,
    orthography: bool = True,
    max_length: int = 2048,
    overlap: int = 256,
    batch_size: int = 64,
    device: str = "cpu",
) -> Callable[[Any], StoicheiaSegmenter]:
    """Tokenizer factory (``[nlp.tokenizer] @tokenizers = "stoicheia.Segmenter.v1"``)."""
    control = PlaneControl(boundary=boundary, diacritics=diacritics, punctuation=punctuation,
                           capitals=capitals, lowercase=lowercase, orthography=orthography)

    def make(nlp: Any) -> StoicheiaSegmenter:
        return StoicheiaSegmenter(nlp.vocab, model_source=model_source, control=control,
                                  max_length=max_length, overlap=overlap, batch_size=batch_size,
                                  device=device)

    return make


__all__ = ["Alignment", "StoicheiaSegmenter", "create_segmenter", "words_and_spaces"]
