"""The ``stoicheia_accentuator`` pipe: accentuate Docs from the encoder's forward.

Place it after ``stoicheia_encoder``: it runs no backbone of its own but decodes the
per-plane logits the encoder stored on ``doc._.stoicheia`` (``store_logits = true``, the
default). Unmarked text gets predictions because the encoder feeds the planes a text does
not mark as UNKNOWN (``hide_unmarked``, :mod:`stoicheia_spacy.encoder.gaps`). In ``keep``
and ``copy`` modes every value the backbone read as known is kept (a plane the text marks
is kept as written; a gap followed by a space keeps its word end); ``predict`` decodes
every position from the logits. Decoding (per-plane modes, orthographic constraints) is
:func:`stoicheia_spacy.accent.predict.decode_heads`.

A pipe cannot change ``doc.text``, so it annotates: ``doc._.accent_text`` is the rendered
polytonic text, ``doc._.source_alignment`` its :class:`~stoicheia_spacy.accent.align.Alignment`
with ``doc.text``, ``doc._.accent_planes`` the prediction, and each token whose letters
render contiguously gets its accented form, lower-cased as spaCy's norms are, as ``token.norm_``
(LatinCy-style; the morphosyntax components embed NORM, so a capital the accentuator predicts
must not change their input: ``μοῦσα`` stays ``μοῦσα``, not ``Μοῦσα``). By default
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

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc

from ..alphabet import BND_UNKNOWN, DIA_UNKNOWN, PUNCT_UNKNOWN
from ..component import SerializedPipe, read_json, write_json
from ..errors import ConfigError
from . import docview  # noqa: F401  (registers doc._.accent_doc)
from .formlex import FormLexicon
from .lexasset import DATA_PACKAGE, LEXICON_FILE, LexiconPin, _load
from .predict import PlaneControl, decode_heads, model_inputs
from .segment import render_with_gaps
from .settings import AccentuatorSettings

for _name in ("accent_text", "source_alignment", "accent_planes"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)

#: Input planes and their UNKNOWN ids (capitals are not a backbone input).
_UNKNOWN: dict[str, int] = {"boundary": BND_UNKNOWN, "diacritics": DIA_UNKNOWN, "punctuation": PUNCT_UNKNOWN}

CONTROL_KEYS: tuple[str, ...] = ("boundary", "diacritics", "punctuation", "capitals", "lowercase", "orthography")

#: The lexicon pin of a saved accentuator (data; the settings are ``config.cfg``'s).
PIN_FILE = "lexicon.json"


@Language.factory(
    "stoicheia_accentuator",
    assigns=["doc._.accent_text", "doc._.source_alignment", "doc._.accent_planes", "token.norm"],
    requires=["doc._.stoicheia"],
    default_config={"settings": {"@misc": "stoicheia.AccentuatorSettings.v1"},
                    "lexicon": {"@misc": "stoicheia.Lexicon.v1", "package": DATA_PACKAGE}},
)
def make_stoicheia_accentuator(nlp: Language, name: str, settings: AccentuatorSettings,
                               lexicon: LexiconPin | None) -> StoicheiaAccentuator:
    """Create the accentuator pipe; ``settings``: the plane modes, the
    ``[components.stoicheia_accentuator.settings]`` block (:mod:`stoicheia_spacy.accent.settings`);
    ``lexicon``: the lexicon data package, ``null`` to decode without it."""
    return StoicheiaAccentuator(name, settings, lexicon=lexicon).bind(nlp)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.shape[0] == 0:
        return x
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class StoicheiaAccentuator(SerializedPipe, Pipe):
    """Annotate Docs with their accentuated rendering (see the module docstring)."""

    settings_in_config = True

    def __init__(self, name: str = "stoicheia_accentuator", control: PlaneControl | None = None, *,
                 lexicon: LexiconPin | None = None) -> None:
        self.name = name
        self.settings: PlaneControl = control if control is not None else AccentuatorSettings()
        self.lexicon_pin = lexicon
        self._lexicon: FormLexicon | None = None

    @property
    def control(self) -> PlaneControl:
        """The plane modes (the settings object)."""
        return self.settings

    @property
    def cfg(self) -> Mapping[str, Any]:
        """The settings as a read-only mapping (change them with :meth:`configure`)."""
        return MappingProxyType({k: getattr(self.settings, k) for k in self._keys()})

    def _keys(self) -> tuple[str, ...]:
        """The option names of the settings object (the plane modes, and ``candidates``)."""
        return tuple(f.name for f in fields(self.settings))

    def configure(self, **changes: Any) -> PlaneControl:
        """Replace the settings with a validated copy holding ``changes``."""
        allowed = self._keys()
        unknown = sorted(set(changes) - set(allowed))
        if unknown:
            raise ConfigError(f"unknown stoicheia_accentuator options {unknown}; choose from {list(allowed)}")
        self.settings = replace(self.settings, **changes)
        self.record_settings()
        return self.settings

    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """The ``cfg`` file of a pipeline saved before the settings block (read, never
        written): its plane modes and its lexicon pin."""
        self.configure(**{k: v for k, v in cfg.items() if k in self._keys()})
        if "lexicon" in cfg:
            self._read_pin(cfg["lexicon"])

    def _read_pin(self, data: dict[str, Any] | None) -> None:
        """A saved pin, checked here: a saved pipeline loads only with the lexicon file it
        was saved with."""
        self.lexicon_pin = LexiconPin.from_dict(data)
        self._lexicon = None
        if self.lexicon_pin is not None:
            self.lexicon_pin.resolve(LEXICON_FILE, self.name)

    def model_to_disk(self, folder: Path) -> None:
        """The lexicon pin (``lexicon.json``: data; the settings are ``config.cfg``'s)."""
        write_json(folder / PIN_FILE, None if self.lexicon_pin is None else self.lexicon_pin.to_dict())

    def model_from_disk(self, folder: Path) -> None:
        if (folder / PIN_FILE).is_file():
            self._read_pin(read_json(folder / PIN_FILE))

    def model_to_bytes(self) -> bytes:
        return bytes(srsly.json_dumps(None if self.lexicon_pin is None else self.lexicon_pin.to_dict()).encode())

    def model_from_bytes(self, data: bytes) -> None:
        if data:
            self._read_pin(srsly.json_loads(data.decode()))

    @property
    def lexicon(self) -> FormLexicon | None:
        """The pinned lexicon (loaded once), or None where the config opts out."""
        if self.lexicon_pin is None:
            return None
        if self._lexicon is None:
            self._lexicon = _load(str(self.lexicon_pin.resolve(LEXICON_FILE, self.name)))
        return self._lexicon

    def __call__(self, doc: Doc) -> Doc:
        self.annotate(doc)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 64) -> Iterator[Doc]:
        """Accentuate Docs (decoding only: the encoder ran the forward); a Doc that fails goes
        to the pipe's error handler (``nlp.set_error_handler``; the default raises).
        Restoration candidates get their accented forms from the restorer, which calls
        :meth:`annotate` through its accenting service (:mod:`stoicheia_spacy.restore.accented`)."""
        handler = self.get_error_handler()
        for doc in stream:
            try:
                self.annotate(doc)
            except Exception as error:
                handler(self.name, self, [doc], error)
                continue
            yield doc

    def annotate(self, doc: Doc) -> None:
        """Set ``doc._.accent_text``, ``source_alignment``, ``accent_planes`` and token norms."""
        data = doc._.stoicheia
        if data is None:
            raise ConfigError("stoicheia_accentuator needs a 'stoicheia_encoder' pipe before it")
        if data.logits is None:
            raise ConfigError("stoicheia_accentuator decodes the encoder's logits: set store_logits = true in "
                              "[components.stoicheia_encoder.settings]")
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
                token.norm_ = rendered[lo:hi].lower()

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = tuple()) -> StoicheiaAccentuator:
        """Read the settings (also those of a pipeline saved when the accentuator owned a
        backbone: its ``segmenter.json``; the old backbone copy is ignored)."""
        legacy = Path(path) / "segmenter.json"
        if not (Path(path) / "cfg").is_file() and not (Path(path) / PIN_FILE).is_file() and legacy.is_file() \
                and "cfg" not in exclude:
            self.set_cfg(srsly.read_json(legacy)["control"])
            return self
        super().from_disk(path, exclude=exclude)
        return self

    def initialize(self, get_examples: Any = None, *, nlp: Language | None = None) -> None:
        """Pin the lexicon data package: its installed version and file checksum, saved by
        ``to_disk`` (raises :class:`~stoicheia_spacy.errors.LexiconMissingError` without it)."""
        if self.lexicon_pin is not None:
            self.lexicon_pin = self.lexicon_pin.pin(LEXICON_FILE, self.name)


__all__ = ["StoicheiaAccentuator", "make_stoicheia_accentuator"]
