"""The ``stoicheia_accentuator`` pipe: accentuate Docs from the encoder's forward.

Place it after ``stoicheia_encoder``: it runs no backbone of its own but decodes the
per-plane logits the encoder stored on ``doc._.stoicheia`` (``store_logits = true``, the
default). Unmarked text gets predictions because the encoder feeds the planes a text does
not mark as UNKNOWN (``hide_unmarked``, :mod:`stoicheia_spacy.models.gaps`). In ``keep``
and ``copy`` modes every value the backbone read as known is kept (a plane the text marks
is kept as written; a gap followed by a space keeps its word end); ``predict`` decodes
every position from the logits. Decoding (per-plane modes, orthographic constraints) is
:func:`stoicheia_spacy.accent.predict.decode_heads`.

A pipe cannot change ``doc.text``, so it annotates: ``doc._.accent_text`` is the rendered
polytonic text, ``doc._.source_alignment`` its :class:`~stoicheia_spacy.accent.align.Alignment`
with ``doc.text``, ``doc._.accent_planes`` the prediction, and each token whose letters
render contiguously gets its accented form as ``token.norm_`` (LatinCy-style). By default
(``boundary = "auto"``) word division is copied from a Doc whose text divides words, so
that tokens and rendered words agree, and predicted for *scriptio continua*: then
``doc._.accent_text`` is the divided, accented text and ``doc._.accent_doc``
(:mod:`stoicheia_spacy.accent.docview`) its words as a Doc. ``"copy"`` never re-divides,
``"predict"`` always does (then only ``doc._.accent_text`` reflects the new division).
Word division and diacritics are decoded jointly with the accent lexicon
(:mod:`stoicheia_spacy.accent.lattice`) of the data package the ``lexicon`` setting names
(:class:`~stoicheia_spacy.accent.lexasset.LexiconPin`: pinned to its version and sha256 at
``initialize``, saved with the pipe, checked at load; a missing or different lexicon raises
:class:`~stoicheia_spacy.errors.LexiconMissingError`); ``lexicon = null`` decodes from the
logits alone. To make the rendered text the Doc text, use the
tokenizer ``stoicheia.Segmenter.v1`` instead.

Leiden gaps are the encoder's (``doc._.stoicheia.gaps``: MASK letters in the forward) and
appear in ``doc._.accent_text`` as canonical markup; a text whose markup does not parse
was encoded as plain text by the encoder (documented fallback).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc

from ..accent import docview  # noqa: F401  (registers doc._.accent_doc)
from ..accent.formlex import FormLexicon
from ..accent.lexasset import DATA_PACKAGE, LEXICON_FILE, LexiconPin
from ..accent.predict import PlaneControl
from ..alphabet import BND_UNKNOWN, DIA_UNKNOWN, PUNCT_UNKNOWN
from ..errors import ConfigError
from .base import SerializedPipe

for _name in ("accent_text", "source_alignment", "accent_planes"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)

#: Input planes and their UNKNOWN ids (capitals are not a backbone input).
_UNKNOWN: dict[str, int] = {"boundary": BND_UNKNOWN, "diacritics": DIA_UNKNOWN, "punctuation": PUNCT_UNKNOWN}

CONTROL_KEYS: tuple[str, ...] = ("boundary", "diacritics", "punctuation", "capitals", "lowercase", "orthography")


@Language.factory(
    "stoicheia_accentuator",
    assigns=["doc._.accent_text", "doc._.source_alignment", "doc._.accent_planes", "token.norm"],
    requires=["doc._.stoicheia"],
    default_config={"boundary": "auto", "diacritics": "keep", "punctuation": "keep", "capitals": "keep",
                    "lowercase": False, "orthography": True,
                    "lexicon": {"@misc": "stoicheia.Lexicon.v1", "package": DATA_PACKAGE}},
)
def make_stoicheia_accentuator(
    nlp: Language, name: str, boundary: str, diacritics: str, punctuation: str, capitals: str,
    lowercase: bool, orthography: bool, lexicon: LexiconPin | None,
) -> StoicheiaAccentuator:
    """Create the accentuator pipe (plane modes: see :mod:`stoicheia_spacy.accent.predict`;
    ``lexicon``: the lexicon data package, ``null`` to decode without it)."""
    return StoicheiaAccentuator(name, PlaneControl(
        boundary=boundary, diacritics=diacritics, punctuation=punctuation, capitals=capitals,
        lowercase=lowercase, orthography=orthography), lexicon=lexicon)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.shape[0] == 0:
        return x
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class StoicheiaAccentuator(SerializedPipe, Pipe):
    """Annotate Docs with their accentuated rendering (see the module docstring)."""

    def __init__(self, name: str = "stoicheia_accentuator", control: PlaneControl | None = None, *,
                 lexicon: LexiconPin | None = None) -> None:
        self.name = name
        self.control = control or PlaneControl(boundary="auto", capitals="keep")
        self.lexicon_pin = lexicon
        self._lexicon: FormLexicon | None = None
        self.cfg: dict[str, Any] = self._control_cfg()

    def _control_cfg(self) -> dict[str, Any]:
        cfg = {k: getattr(self.control, k) for k in CONTROL_KEYS}
        cfg["lexicon"] = None if self.lexicon_pin is None else self.lexicon_pin.to_dict()
        return cfg

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """Settings read back: the plane modes and the lexicon pin (checked here: a saved
        pipeline loads only with the lexicon file it was saved with)."""
        self.control = PlaneControl.from_dict({k: v for k, v in cfg.items() if k in CONTROL_KEYS})
        if "lexicon" in cfg:
            self.lexicon_pin = LexiconPin.from_dict(cfg["lexicon"])
            self._lexicon = None
            if self.lexicon_pin is not None:
                self.lexicon_pin.resolve(LEXICON_FILE, self.name)
        self.cfg = self._control_cfg()

    @property
    def lexicon(self) -> FormLexicon | None:
        """The pinned lexicon (loaded once), or None where the config opts out."""
        if self.lexicon_pin is None:
            return None
        if self._lexicon is None:
            from ..accent.lexasset import _load

            self._lexicon = _load(str(self.lexicon_pin.resolve(LEXICON_FILE, self.name)))
        return self._lexicon

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 64) -> Iterator[Doc]:
        """Accentuate Docs (decoding only: the encoder ran the forward)."""
        for doc in stream:
            self._annotate(doc)
            yield doc

    def _annotate(self, doc: Doc) -> None:
        from ..accent.predict import decode_heads, model_inputs
        from ..accent.segment import render_with_gaps

        data = doc._.stoicheia
        if data is None:
            raise ConfigError("stoicheia_accentuator needs a 'stoicheia_encoder' pipe before it")
        if data.logits is None:
            raise ConfigError("stoicheia_accentuator decodes the encoder's logits: set store_logits = true "
                              "on the stoicheia_encoder pipe")
        control = self.control.resolve(data.planes)  # boundary "auto": copy, or predict scriptio continua
        inputs, fixed = model_inputs(data.planes, control)
        if data.inputs is not None:  # keep/copy: what the backbone read as known is kept
            for plane, unknown in _UNKNOWN.items():
                if control.mode(plane) in ("keep", "copy"):
                    seen = getattr(data.inputs, plane) != unknown  # (a gap's letters: its word end)
                    getattr(inputs, plane)[seen] = getattr(data.inputs, plane)[seen]
                    fixed[plane] = fixed[plane] | seen
        logp = {head: _log_softmax(values) for head, values in data.logits.items()}
        pred = decode_heads(data.planes, inputs, fixed, logp, control, lexicon=self.lexicon)
        rendered, alignment, _ = render_with_gaps(doc.text, pred.planes, list(data.gaps))
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

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> StoicheiaAccentuator:
        """Read the settings (also those of a pipeline saved when the accentuator owned a
        backbone: its ``segmenter.json``; the old backbone copy is ignored)."""
        legacy = Path(path) / "segmenter.json"
        if not (Path(path) / "cfg").is_file() and legacy.is_file() and "cfg" not in exclude:
            self.set_cfg(srsly.read_json(legacy)["control"])
            return self
        super().from_disk(path, exclude=exclude)
        return self

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None) -> None:
        """Pin the lexicon data package: its installed version and file checksum, saved by
        ``to_disk`` (raises :class:`~stoicheia_spacy.errors.LexiconMissingError` without it)."""
        if self.lexicon_pin is not None:
            self.lexicon_pin = self.lexicon_pin.pin(LEXICON_FILE, self.name)
            self.cfg = self._control_cfg()


__all__ = ["StoicheiaAccentuator", "make_stoicheia_accentuator"]
