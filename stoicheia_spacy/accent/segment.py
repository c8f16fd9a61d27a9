"""``stoicheia.Segmenter.v1``: a tokenizer that accentuates and divides unaccented text.

Used as ``nlp.tokenizer``, ``nlp("ΕΝΑΡΧΗΗΝΟΛΟΓΟΣ")`` returns a Doc whose **text is the
rendered polytonic text** (e.g. ``"ἐν ἀρχῇ ἦν ὁ λόγος"`` when the model gets it right) and
whose tokens are the predicted words, with punctuation marks as tokens of their own
(an elided word keeps its ``’``).  The input is kept:

* ``doc._.source_text``: the text as given;
* ``doc._.source_alignment``: an :class:`~.align.Alignment` (``rendered_to_source`` per Doc
  character, ``source_to_rendered`` per source character; -1 where there is no counterpart);
* ``doc._.accent_planes``: the :class:`~.predict.PlanePrediction` (output planes, which
  positions were filled by the model, the probability of each chosen value); a gap's MASK
  letters are in these planes (offset -1) with the values the model chose for them.

Only modelled content is rendered: Greek letters, their diacritics, word division and the
five punctuation classes.  Other characters of the source (digits, Latin, brackets of
restorations and other Leiden sigla) do not appear in ``doc.text``; they stay in
``doc._.source_text``.

**Gaps.**  With ``notation`` ``"leiden"`` (default) or ``"ddbdp"`` the source is first read
with :func:`stoicheia_spacy.leiden.parse_gaps`.  Every gap is fed to the model as MASK
letters with UNKNOWN planes (its width; the rounded middle of a range; ``unknown_slots``
for an unknown width; a word end after its last letter when whitespace follows the markup
in the source), so the letters around it are accentuated and divided knowing that
something is missing, and the word division at its edges is predicted.  The gap is
rendered back as its own token in canonical notation (:func:`~stoicheia_spacy.leiden.format_gap`:
``[.4]``, ``[---]``, ``[5-8]``, ``????``; ``|gap=4|`` for ``"ddbdp"``), glued to the
neighbouring word when the model continues the word into the gap, so a
``stoicheia_restorer`` later in the pipeline finds it in ``doc.text`` and restores it
in the context of the accentuated text.  The alignment maps the gap's rendered markup
onto the source markup (first to first, last to last).  ``notation=None`` disables
markup parsing (the old behaviour: brackets are dropped, ``-``/``?`` are not gaps).
Malformed markup raises :class:`~stoicheia_spacy.errors.LeidenSyntaxError`.

Weights: the segmenter owns its backbone, loaded lazily from ``model_source`` (a directory
or hub id; default the embedded model, :func:`stoicheia_spacy.assets.default_model_dir`).
It does not share the ``stoicheia_encoder`` pipe's weights: the tokenizer is built before
any pipe and runs before them, and the encoder must encode the *rendered* Doc anyway.
``to_disk`` writes ``segmenter.json`` + ``config.json`` + ``model.safetensors`` and
``to_bytes`` holds both, so ``nlp.to_disk``/``spacy.load`` and ``nlp.to_bytes``/``from_bytes``
round-trip the weights (``exclude=["model"]`` leaves them out).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import srsly
from spacy import util
from spacy.tokens import Doc
from spacy.util import registry
from spacy.vocab import Vocab

from ..alphabet import (
    BND_INTERNAL,
    CAP_LOWER,
    PUNCT_NONE,
)
from ..assets import default_model_dir
from ..backbone import load_backbone, save_backbone
from ..codec import PUNCT_OUT, CharPlanes, decode_planes
from ..encoder.gaps import MAX_GAP_WIDTH, UNKNOWN_GAP_WIDTH, GapRun, encode_text
from ..encoder.gaps import gap_width as _gap_width
from ..errors import CheckpointError, ConfigError, InvalidTextError
from ..leiden import Gap
from ..textcheck import validate_text
from . import docview  # also registers doc._.accent_doc
from .align import Alignment, align, rendered_letter_offsets
from .formlex import FormLexicon
from .lexasset import DATA_PACKAGE, LEXICON_FILE, LexiconPin, _load
from .predict import PlaneControl, PlanePrediction, predict_planes

if TYPE_CHECKING:  # pragma: no cover
    from ..backbone import StoicheiaEncoder

for _name in ("source_text", "source_alignment", "accent_planes"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)

_PUNCT_CHARS = "".join(sorted({c for c in PUNCT_OUT if c}))
#: a word (no spaces, no punctuation) or one punctuation mark
_TOKEN = re.compile(rf"[^\s{re.escape(_PUNCT_CHARS)}]+|[{re.escape(_PUNCT_CHARS)}]")


def words_and_spaces(text: str, pattern: re.Pattern[str] = _TOKEN) -> tuple[list[str], list[bool]]:
    """spaCy ``words``/``spaces`` of rendered text: the matches of ``pattern`` (by default a
    word or one punctuation mark), each followed by a space or not."""
    return docview.words_and_spaces(text, pattern)


NOTATIONS: tuple[str | None, ...] = ("leiden", "ddbdp", None)


def gap_width(gap: Gap, unknown_slots: int = UNKNOWN_GAP_WIDTH) -> int:
    """MASK letters fed for ``gap``: its width, the rounded middle of a range,
    ``unknown_slots`` when unknown (at least 1, at most ``MAX_GAP_WIDTH``)."""
    return _gap_width(gap, unknown_slots, max(unknown_slots, MAX_GAP_WIDTH))[0]


def gapped_planes(source: str, *, notation: str | None = "leiden",
                  unknown_slots: int = UNKNOWN_GAP_WIDTH) -> tuple[CharPlanes, list[GapRun]]:
    """Planes of ``source`` (offsets into ``source``) with every Leiden gap replaced by
    MASK letters whose other planes are UNKNOWN (:func:`stoicheia_spacy.encoder.gaps.encode_text`,
    the encoder pipe's own route); malformed markup raises ``LeidenSyntaxError``."""
    planes, runs, _ = encode_text(source, notation=notation, unknown_width=unknown_slots,
                                  max_width=max(unknown_slots, MAX_GAP_WIDTH), strict=True)
    return planes, runs


def _stretch(start: int, n_from: int, n_to: int) -> np.ndarray:
    """Map ``n_from`` positions monotonically onto ``[start, start + n_to)``, first to
    first and last to last."""
    return start + np.round(np.arange(n_from) * (n_to - 1) / max(n_from - 1, 1)).astype(np.int64)


def render_with_gaps(source: str, planes: CharPlanes, runs: list[GapRun]) -> tuple[str, Alignment, list[tuple[int, int]]]:
    """Render predicted planes with each gap's MASK letters replaced by its markup.

    Returns the text, the source alignment and the ``(start, end)`` of every gap's markup
    in the text. Inside a gap only the last letter's word end and punctuation are shown
    (as a space / mark after the markup). In a spaced source the gap stays where it was
    written: glued to a letter before it, the word end and punctuation predicted after that
    letter move behind the gap (``β[.1].``, not ``β. [.1]``); glued to a letter after it, no
    word end is shown after the gap (``πῶ[.1]ον``)."""
    shown = planes.copy()
    spaced = any(ch.isspace() for ch in source)
    for run in runs:
        last = run.start + run.width - 1
        if spaced and run.start > 0 and run.source_start > 0 and source[run.source_start - 1].isalpha():
            before = run.start - 1
            if shown.punctuation[last] == PUNCT_NONE:
                shown.punctuation[last] = shown.punctuation[before]
            if shown.boundary[last] == BND_INTERNAL:
                shown.boundary[last] = shown.boundary[before]
            shown.boundary[before] = BND_INTERNAL
            shown.punctuation[before] = PUNCT_NONE
        if spaced and run.source_end < len(source) and source[run.source_end].isalpha():
            shown.boundary[last] = BND_INTERNAL
            shown.punctuation[last] = PUNCT_NONE
        inner = slice(run.start, run.start + run.width - 1)
        shown.boundary[inner] = BND_INTERNAL
        shown.punctuation[inner] = PUNCT_NONE
        gap = slice(run.start, run.start + run.width)
        shown.diacritics[gap] = 0
        shown.capitals[gap] = CAP_LOWER
    rendered = decode_planes(shown)
    al = align(source, shown, rendered)
    if not runs:
        return rendered, al, []
    offs = rendered_letter_offsets(shown, rendered)
    parts: list[str] = []
    r2s_parts: list[np.ndarray] = []
    old_to_new = np.arange(len(rendered) + 1, dtype=np.int64)
    s2r = al.source_to_rendered.copy()
    markup_spans: list[tuple[int, int]] = []
    cursor = shift = 0
    for run in runs:
        a, b = int(offs[run.start]), int(offs[run.start + run.width - 1]) + 1
        parts.append(rendered[cursor:a])
        r2s_parts.append(al.rendered_to_source[cursor:a])
        m, n_src = len(run.markup), run.source_end - run.source_start
        parts.append(run.markup)
        r2s_parts.append(_stretch(run.source_start, m, n_src))
        new_a = a + shift
        markup_spans.append((new_a, new_a + m))
        shift += m - (b - a)
        old_to_new[b:] += m - (b - a)
        cursor = b
    parts.append(rendered[cursor:])
    r2s_parts.append(al.rendered_to_source[cursor:])
    s2r = np.where(s2r >= 0, old_to_new[np.maximum(s2r, 0)], -1)
    for run, (new_a, new_b) in zip(runs, markup_spans, strict=True):
        s2r[run.source_start:run.source_end] = _stretch(new_a, run.source_end - run.source_start, new_b - new_a)
    return "".join(parts), Alignment(np.concatenate(r2s_parts), s2r), markup_spans


def _words_spaces_with_gaps(text: str, markup: list[tuple[int, int]]) -> tuple[list[str], list[bool]]:
    """:func:`words_and_spaces` of ``text`` where every markup span is one token."""
    spans: list[tuple[int, int]] = list(markup)
    cursor = 0
    for a, b in [*markup, (len(text), len(text))]:
        spans += [(cursor + m.start(), cursor + m.end()) for m in _TOKEN.finditer(text[cursor:a])]
        cursor = b
    spans.sort()
    words = [text[a:b] for a, b in spans]
    spaces = [b < len(text) and text[b].isspace() for _, b in spans]
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
        notation: str | None = "leiden",
        unknown_slots: int = 5,
        lexicon: LexiconPin | None = LexiconPin(),
    ) -> None:
        """``lexicon``: the lexicon data package decoded with (pinned on first use; a missing
        one raises :class:`~stoicheia_spacy.errors.LexiconMissingError`), None for none."""
        if notation not in NOTATIONS:
            raise ConfigError(f"notation must be one of {list(NOTATIONS)}, got {notation!r}")
        self.vocab = vocab
        self.notation = notation
        self.unknown_slots = unknown_slots
        self.model_source = model_source
        self.control = control or PlaneControl()
        self.max_length = max_length
        self.overlap = overlap
        self.batch_size = batch_size
        self.device = device
        self._model = model
        self.lexicon_pin = lexicon
        self._lexicon: FormLexicon | None = None

    @property
    def lexicon(self) -> FormLexicon | None:
        """The pinned accent lexicon (loaded once), or None where it is switched off."""
        if self.lexicon_pin is None:
            return None
        if self._lexicon is None:
            self._lexicon = _load(str(self.lexicon_pin.resolve(LEXICON_FILE, "stoicheia.Segmenter.v1")))
        return self._lexicon

    # ------------------------------------------------------------ model
    @property
    def model(self) -> StoicheiaEncoder:
        """The backbone (loaded on first use)."""
        if self._model is None:
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
        fed = [gapped_planes(t, notation=self.notation, unknown_slots=self.unknown_slots) for t in texts]
        preds = predict_planes(self.model, [p for p, _ in fed], self.control, max_length=self.max_length,
                               overlap=self.overlap, max_rows=self.batch_size, lexicon=self.lexicon)
        return [self.make_doc(t, p, runs) for t, p, (_, runs) in zip(texts, preds, fed, strict=True)]

    def make_doc(self, source: str, pred: PlanePrediction, runs: list[GapRun] | None = None) -> Doc:
        """Render a prediction as a Doc with its source and alignment attached; ``runs``
        (from :func:`gapped_planes`) are spliced back as markup tokens."""
        rendered, alignment, markup = render_with_gaps(source, pred.planes, runs or [])
        words, spaces = _words_spaces_with_gaps(rendered, markup)
        doc = Doc(self.vocab, words=words, spaces=spaces)
        if doc.text != rendered:  # pragma: no cover - a rendering invariant
            raise InvalidTextError(f"segmenter tokens do not rebuild the rendered text {rendered!r}")
        doc._.source_text = source
        doc._.source_alignment = alignment
        doc._.accent_planes = pred
        return doc

    # ------------------------------------------------------------ serialization
    def _cfg(self) -> dict[str, Any]:
        c = self.control
        return {"control": {k: getattr(c, k) for k in ("boundary", "diacritics", "punctuation", "capitals",
                                                        "lowercase", "orthography")},
                "max_length": self.max_length, "overlap": self.overlap, "batch_size": self.batch_size,
                "notation": self.notation, "unknown_slots": self.unknown_slots}

    def _set_cfg(self, cfg: dict[str, Any]) -> None:
        self.control = PlaneControl.from_dict(cfg["control"])
        self.max_length, self.overlap = int(cfg["max_length"]), int(cfg["overlap"])
        self.batch_size = int(cfg["batch_size"])
        self.notation = cfg.get("notation", "leiden")
        self.unknown_slots = int(cfg.get("unknown_slots", 5))

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> None:
        """Write the settings and the backbone weights (released format)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "segmenter.json", self._cfg())
        if "model" not in exclude:
            save_backbone(self.model, path)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> StoicheiaSegmenter:
        """Read what :meth:`to_disk` wrote."""
        path = Path(path)
        if not (path / "segmenter.json").is_file():
            raise CheckpointError(f"{path} holds no segmenter.json")
        self._set_cfg(srsly.read_json(path / "segmenter.json"))
        if "model" not in exclude:
            self._model = load_backbone(path, device=self.device)
        return self

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Settings (``cfg``) and backbone weights (``model``: config.json + model.safetensors)."""
        getters: dict[str, Callable[[], Any]] = {"cfg": self._cfg, "model": self._model_bytes}
        return bytes(util.to_bytes(getters, exclude))

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> StoicheiaSegmenter:
        """Restore what :meth:`to_bytes` wrote."""
        setters: dict[str, Callable[[Any], Any]] = {"cfg": self._set_cfg, "model": self._read_model_bytes}
        util.from_bytes(data, setters, exclude)
        return self

    def _model_bytes(self) -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            save_backbone(self.model, tmp)
            files = {n: (Path(tmp) / n).read_bytes() for n in ("config.json", "model.safetensors")}
        return bytes(srsly.msgpack_dumps(files))

    def _read_model_bytes(self, data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for n, blob in srsly.msgpack_loads(data).items():
                (Path(tmp) / n).write_bytes(blob)
            self._model = load_backbone(tmp, device=self.device)


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
    notation: str | None = "leiden",
    unknown_slots: int = 5,
    lexicon: str | None = DATA_PACKAGE,
) -> Callable[[Any], StoicheiaSegmenter]:
    """Tokenizer factory (``[nlp.tokenizer] @tokenizers = "stoicheia.Segmenter.v1"``; ``lexicon``:
    the import name of the lexicon data package, ``null`` for none)."""
    control = PlaneControl(boundary=boundary, diacritics=diacritics, punctuation=punctuation,
                           capitals=capitals, lowercase=lowercase, orthography=orthography)

    def make(nlp: Any) -> StoicheiaSegmenter:
        return StoicheiaSegmenter(nlp.vocab, model_source=model_source, control=control,
                                  max_length=max_length, overlap=overlap, batch_size=batch_size,
                                  device=device, notation=notation, unknown_slots=unknown_slots,
                                  lexicon=None if lexicon is None else LexiconPin(lexicon))

    return make


__all__ = ["Alignment", "GapRun", "StoicheiaSegmenter", "create_segmenter", "gap_width", "gapped_planes",
           "render_with_gaps", "words_and_spaces"]
