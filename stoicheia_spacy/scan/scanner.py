"""The ``stoicheia_scanner`` pipe: vowel lengths, syllable weights and metre.

Reads per-letter encoder states through ``stoicheia.ScannerHeads.v1`` (a
``StoicheiaListener`` without pooling + torch heads, :mod:`stoicheia_spacy.scan.model`).
Per verse (the Doc's lines when it has newlines, else its sentences when set, else
the whole Doc):

1. rule syllabification and weights (:mod:`stoicheia_spacy.scan.syllabify`);
2. per-syllable heavy/light log-probabilities: rule-known syllables get
   ``1 - rule_eps``; undetermined ones the scan head's heavy-end vs light-end
   probability at the syllable's last letter, averaged with the macron head's long
   probability when the nucleus is a dichronon (final syllable: 0.5, brevis in longo);
3. metre detection and gated Viterbi (θ nats per letter) over ``load_meters()`` and the
   synizesis lattice (:func:`~stoicheia_spacy.scan.lattice.decode_lattice`: ``ε``+vowel
   hiatus may merge into one heavy syllable at ``synizesis_cost`` nats per merge);
   word-final long open syllables before a vowel get ``correption_eps`` instead of
   ``rule_eps`` (epic correption);
4. macrons: the macron head's temperature-calibrated probability at every dichronon;
   where the metre was used, open-syllable dichrona follow the decoded weight.
   Probabilities whose max is below ``abstain_below`` leave the vowel unmarked.
   With the macron lexicon of the data package the ``lexicon`` setting names
   (:class:`~stoicheia_spacy.accent.lexasset.LexiconPin`: pinned at ``initialize``, saved,
   checked at load; a missing one raises :class:`~stoicheia_spacy.errors.LexiconMissingError`;
   or one given to :meth:`ScannerPipe.load_lexicon`) and ``cfg["macron_calibration"]``, the
   head's probability is first combined with the lexicon's candidates and, after the metre,
   with the metre's vote into one calibrated probability
   (:class:`~stoicheia_spacy.scan.macron_decoder.MacronDecoder`); ``lexicon = null`` uses the
   head alone. The metres are read at ``initialize`` from the package's ``assets/meters``
   and saved with the pipe (``meters.json``), so a saved scanner scans alike everywhere.

``decode`` chooses the decoder: ``"lattice"`` (the default, steps 1-4 above) or
``"research"``, the released meter model's decode as its authors evaluate it
(:mod:`stoicheia_spacy.scan.research`: per-letter labels, the two rules, gated Viterbi
over the research grammars, macrons from the macron head alone, never changed by the
metre). ``stoicheia package`` sets ``decode = "research"`` for a released meter or
macronizer checkpoint. ``meter`` (a grammar name such as ``"hex"``, a corpus name such as
``"dactylic hexameter"``, or ``"elegiac"``: hexameter and pentameter alternate) forces the
verse's metre: under ``"research"`` the research ``gated_decode``, under ``"lattice"`` the
best path of that metre's automata whatever the gate says; unset, the metre is detected.

Writes ``token._.macronized`` (U+0304 long, U+0306 short) and typed records of one shape for
both decoders (:mod:`stoicheia_spacy.scan.results`): ``doc._.macrons`` (a
:class:`~stoicheia_spacy.scan.results.Macron` per dichronon: ``offset``, ``p_long``, ``length``
1/0/None, ``metre`` vote +1/-1/0 and ``metre_margin``), and on each verse of ``doc._.verses``
``span._.scansion`` (a :class:`~stoicheia_spacy.scan.results.Scansion`: ``syllables``,
``pattern`` in – ⏑, ``synizesis``; the research decode's per-letter ``labels``, ``bracketed``
and ``macronized`` strings) and ``span._.meter`` (a :class:`~stoicheia_spacy.scan.results.Meter`:
``name``, ``cost``, ``used``; the research gate's ``forced``, ``labels``, ``pattern`` H/L/V,
``bracketed``, ``costs`` per grammar, and ``auto`` when the metre was forced). Gold for ``update`` is
``reference._.scan_gold = {"macron": [...], "scan": [...]}`` per codec letter (-1 =
no label), as built by :mod:`stoicheia_lab.scan.silver`. The heads are a torch module
in a ``PyTorchWrapper_v3`` node, stepped by the training config's optimizer
(``[training.optimizer]``) through ``finish_update`` like every stoicheia component;
``to_disk`` writes the data only: ``heads.json`` + ``heads.safetensors``, ``meters.json``,
``calibration.json`` (the macron calibration, when fitted) and ``lexicon.json`` (the lexicon
pin); the settings live in ``config.cfg`` alone (:mod:`stoicheia_spacy.scan.settings`,
``[components.stoicheia_scanner.settings]``). A ``cfg`` file of an older saved scanner is
still read. Gap letters (``doc._.stoicheia.gaps``) are left out
of syllabification and scansion.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import srsly
from safetensors.torch import load_file, save_file
from spacy.language import Language
from spacy.tokens import Doc, Span, Token
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..accent.lexasset import DATA_PACKAGE, MACRON_FILE, LexiconPin
from ..component import StoicheiaPipe, read_json, write_json
from ..encoder.gaps import select_letters
from ..encoder.listener import _zeros
from ..errors import CheckpointError, ConfigError, InvalidExampleError
from ..records import set_records_extension
from . import research as rs
from .lattice import (
    correption_mask,
    decode_lattices,
    expand_weights,
    synizesis_candidates,
    weight_margins_batch,
)
from .macron_decoder import MacronDecoder
from .macron_lexicon import MacronLexicon
from .meters import load_meters, meter_from_dict, meter_to_dict, shipped_meter_dirs
from .model import N_MACRON, ScannerHeads, heads_node, make_heads, torch_heads
from .results import Macron, Meter, Scansion
from .settings import ScannerSettings
from .syllabify import (
    HEAVY,
    LIGHT,
    UNKNOWN,
    dichrona_mask,
    macronize_offsets,
    syllabify,
    word_syllable_ends,
)

for _name, _cls in (("macronized", Token), ("scansion", Span), ("meter", Span)):
    if not _cls.has_extension(_name):
        _cls.set_extension(_name, default=None)
set_records_extension("macrons")  # a list of Macron records
for _name in ("verses", "scan_gold"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)

DEFAULT_SCANNER_MODEL = """
[model]
@architectures = "stoicheia.ScannerHeads.v1"
upstream = "*"
grad_factor = 0.0
hidden = 128
dropout = 0.1
"""


@Language.factory(
    "stoicheia_scanner",
    assigns=["token._.macronized", "doc._.macrons", "doc._.verses", "span._.scansion", "span._.meter"],
    requires=["doc._.stoicheia"],
    default_config={"model": Config().from_str(DEFAULT_SCANNER_MODEL)["model"],
                    "settings": {"@misc": "stoicheia.ScannerSettings.v1"},
                    "lexicon": {"@misc": "stoicheia.Lexicon.v1", "package": DATA_PACKAGE}},
)
def make_stoicheia_scanner(nlp: Language, name: str, model: Model, settings: ScannerSettings,
                           lexicon: LexiconPin | None = None) -> ScannerPipe:
    """Create the ``stoicheia_scanner`` pipe; ``settings``: the
    ``[components.stoicheia_scanner.settings]`` block (:mod:`stoicheia_spacy.scan.settings`);
    ``lexicon``: the lexicon data package of the macron lexicon, ``null`` for none."""
    return ScannerPipe(nlp.vocab, model, name, settings=settings, lexicon=lexicon).bind(nlp)


#: The decoders (``settings.decode``), as ``Scansion.decoder`` / ``Meter.decoder`` name them.
LATTICE, RESEARCH = "lattice", "research"


def _research_meter(decision: dict[str, Any], *, costs: dict[str, float | None] | None = None,
                    auto: Meter | None = None) -> Meter:
    """``span._.meter`` of one research gated decode (:func:`~stoicheia_spacy.scan.research.decision_dict`)."""
    return Meter(name=decision["name"], cost=decision["cost"], used=bool(decision["used"]), decoder=RESEARCH,
                 forced=bool(decision["forced"]), labels=tuple(decision["labels"]), pattern=decision["pattern"],
                 bracketed=decision["bracketed"], costs=dict(costs or {}), auto=auto)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


@dataclass
class _Pending:
    """One Doc between the phases of a batch's lattice decode (:meth:`ScannerPipe._annotate_batch`)."""

    doc: Doc
    text: str
    planes: Any
    token_ends: np.ndarray
    p_long: np.ndarray
    dich: np.ndarray
    decoder: MacronDecoder | None
    lengths: np.ndarray
    metre_vote: np.ndarray
    metre_margin: np.ndarray
    verse_metre: np.ndarray
    offsets: np.ndarray
    verses: list[Span]
    #: per verse with syllables: span, lo, hi, planes, syllables, weight scores, synizesis candidates
    lines: list[tuple[Any, ...]] = field(default_factory=list)
    line_index: list[int] = field(default_factory=list)  # the verse number of each line
    decoded: list[Any] = field(default_factory=list)
    line_weights: list[np.ndarray] = field(default_factory=list)
    margin_at: list[np.ndarray] = field(default_factory=list)


#: Data files of a saved scanner beside its heads (the settings are ``config.cfg``'s).
CALIBRATION_FILE = "calibration.json"
PIN_FILE = "lexicon.json"


class ScannerPipe(StoicheiaPipe):
    """Macronizer + scansion + metre detection on the shared encoder (see module doc)."""

    settings_in_config = True
    _keep_pin = False  # True while initialize reads a weights folder

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_scanner", *,
                 settings: ScannerSettings | None = None, lexicon: LexiconPin | dict[str, Any] | None = None,
                 calibration: dict[str, Any] | None = None, **options: Any) -> None:
        self.vocab = vocab
        self.model = model
        self.name = name
        base = settings if settings is not None else ScannerSettings()
        self.settings: ScannerSettings = base.replace(**options) if options else base
        self.pin: LexiconPin | None = lexicon if isinstance(lexicon, LexiconPin) or lexicon is None \
            else LexiconPin.from_dict(lexicon)
        #: the macron calibration (data: ``calibration.json``; None: the head and metre alone)
        self.calibration: dict[str, Any] | None = calibration
        self._meters: dict[str, Any] | None = None
        self._lexicon: MacronLexicon | None = None

    @property
    def cfg(self) -> Mapping[str, Any]:
        """The settings as a read-only mapping (change them with :meth:`configure`)."""
        return MappingProxyType(self.settings.to_dict())

    def configure(self, **changes: Any) -> ScannerSettings:
        """Replace the settings with a validated copy holding ``changes`` (recorded in the
        pipeline's ``config.cfg``, so a saved pipeline keeps them)."""
        meters = self.settings.meters
        self.settings = self.settings.replace(**changes)
        if self.settings.meters != meters:
            self._meters = None
        self.record_settings()
        return self.settings

    def load_lexicon(self, path: str | Path | None) -> None:
        """Use (or, with None, stop using) a macron lexicon asset (``macron_lexicon.json.gz``)."""
        self._lexicon = None if path is None else MacronLexicon.from_disk(path)

    @property
    def macron_decoder(self) -> MacronDecoder | None:
        """The lexicon-aware decoder, or None (head + metre only) when nothing is calibrated."""
        calibration = self.calibration
        pin = self.lexicon_pin
        if self._lexicon is None and pin is not None:
            self.load_lexicon(pin.resolve(MACRON_FILE, self.name))
        return MacronDecoder(self._lexicon, calibration) if calibration else None

    @property
    def lexicon_pin(self) -> LexiconPin | None:
        """The ``lexicon`` block, pinned once initialized (None: no macron lexicon)."""
        return self.pin

    @property
    def meters(self) -> dict[str, Any]:
        """The metres (read at ``initialize`` or from the saved pipe; else the shipped ones)."""
        if self._meters is None:
            self._meters = self._select_meters(load_meters(shipped_meter_dirs()))
        return self._meters

    def _select_meters(self, allm: dict[str, Any]) -> dict[str, Any]:
        names = self.settings.meters
        return {k: v for k, v in allm.items() if not names or k in names}

    # ------------------------------------------------------------ inference
    def __call__(self, doc: Doc, **settings: Any) -> Doc:
        """Scan ``doc``; ``settings``: settings for this call only (e.g. ``meter``, ``decode``)."""
        with self.settings_for_call(settings):
            return super().__call__(doc)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128, **settings: Any) -> Iterator[Doc]:
        """Scan the Docs of ``stream``; ``nlp.pipe(texts, component_cfg={"stoicheia_scanner":
        {"meter": "hex"}})`` passes ``settings`` for that call only."""
        with self.settings_for_call(settings):
            yield from super().pipe(stream, batch_size=batch_size)

    def predict(self, docs: Iterable[Doc]) -> list[np.ndarray]:
        """Logits (n_letters, 6) per Doc, one batched forward."""
        docs = list(docs)
        if not docs:
            return []
        return self.model.predict(docs)

    def verses(self, doc: Doc) -> list[Span]:
        """Lines (newlines), else sentences (when set), else the whole Doc."""
        if "\n" in doc.text.strip():
            spans, start = [], 0
            for tok in doc:
                if "\n" in tok.text or "\n" in tok.whitespace_:
                    end = tok.i if "\n" in tok.text else tok.i + 1
                    if end > start:
                        spans.append(doc[start:end])
                    start = tok.i + 1
            if start < len(doc):
                spans.append(doc[start:])
            return spans
        if doc.has_annotation("SENT_START"):
            return list(doc.sents)
        return [doc[:]] if len(doc) else []

    def set_annotations(self, docs: Iterable[Doc], scores: Sequence[np.ndarray]) -> None:
        """Write macrons, per-verse scansion and metre (see module doc). Under the lattice
        decoder the verses of every Doc of the batch share one metre decode and one margin
        decode (:meth:`_annotate_batch`)."""
        docs = list(docs)
        if self.settings.decode == "research":
            for doc, logits in zip(docs, scores, strict=True):
                self._annotate_research(doc, np.asarray(logits, dtype=np.float64))
            return
        self._annotate_batch(docs, [np.asarray(logits, dtype=np.float64) for logits in scores])

    def _annotate_research(self, doc: Doc, logits: np.ndarray) -> None:
        """``decode = "research"``: the released model's decode (see the module doc)."""
        data = doc._.stoicheia
        text = doc.text
        planes = data.planes
        letter_token = np.asarray(data.letter_token)
        if data.gaps:
            keep = ~data.gap_letters
            planes, logits, letter_token = select_letters(planes, keep), logits[keep], letter_token[keep]
        token_ends = np.cumsum(np.bincount(letter_token, minlength=len(doc)))
        n = len(planes)
        offsets = np.asarray(planes.offsets)
        mac = np.exp(_log_softmax(logits[:, :N_MACRON])) if n else np.zeros((0, 2))
        scan = np.exp(_log_softmax(logits[:, N_MACRON:])) if n else np.zeros((0, 4))
        p_long = mac[:, 1]
        amb = rs.ambiguous_mask(planes.letters, planes.boundary, planes.diacritics)
        long_ = mac[:, 1] >= mac[:, 0]  # the released argmax: long (its class 0) on equal scores
        lengths = np.where(amb, long_.astype(np.int64), -1)
        theta = self.settings.theta
        forced = rs.grammar_name(self.settings.meter) if self.settings.meter else None
        verses = self.verses(doc)
        for index, span in enumerate(verses):
            lo = int(np.searchsorted(offsets, span.start_char))
            hi = int(np.searchsorted(offsets, span.end_char))
            vtext = text[span.start_char : span.end_char]
            grammar = rs.verse_grammar(forced, index)
            if hi <= lo:
                span._.scansion = Scansion(syllables=(), pattern="", decoder=RESEARCH, bracketed=vtext,
                                           macronized=vtext)
                span._.meter = None
                continue
            off = offsets[lo:hi] - span.start_char
            labels = rs.scan_labels(planes.letters[lo:hi], planes.diacritics[lo:hi], scan[lo:hi])
            marks = {k: (rs.MAC_LONG if lengths[lo + k] == 1 else rs.MAC_SHORT)
                     for k in range(hi - lo) if lengths[lo + k] >= 0}
            span._.scansion = Scansion(
                syllables=tuple(p.strip() for p, lab in rs.bracket_spans(vtext, off, labels) if lab != rs.NONE),
                pattern=rs.metrical_pattern(labels), decoder=RESEARCH, labels=tuple(int(x) for x in labels),
                bracketed=rs.bracketize(vtext, off, labels), macronized=rs.insert_marks(vtext, off, marks))
            logp = rs.log_probs(scan[lo:hi])
            costs = rs.meter_costs(logp)
            auto = _research_meter(rs.decision_dict(rs.gated_auto(logp, labels, theta), vtext, off, forced=False))
            if grammar is not None:
                chosen = rs.decision_dict(rs.gated(logp, grammar, labels, theta), vtext, off, forced=True)
                span._.meter = _research_meter(chosen, costs=costs, auto=auto)
            else:
                span._.meter = replace(auto, costs=costs)
        doc._.verses = verses
        doc._.macrons = [Macron(offset=int(offsets[i]), p_long=float(p_long[i]), length=int(lengths[i]))
                         for i in np.nonzero(amb)[0]]
        for tok in doc:
            sl = slice(int(token_ends[tok.i - 1]) if tok.i else 0, int(token_ends[tok.i]))
            tok._.macronized = macronize_offsets(tok.text, offsets[sl] - tok.idx, lengths[sl])

    def _annotate(self, doc: Doc, logits: np.ndarray) -> None:
        """The lattice decode of one Doc (:meth:`_annotate_batch` of a batch of one)."""
        self._annotate_batch([doc], [logits])

    def _annotate_batch(self, docs: Sequence[Doc], scores: Sequence[np.ndarray]) -> None:
        """The lattice decode of a batch: each Doc's verses are prepared on their own
        (:meth:`_prepare`), the verses of all Docs go through one metre decode
        (:meth:`_decode_lines`) and one margin decode, then each Doc is finished
        (:meth:`_finish`). Every verse's decode is its own (the batched Viterbi is
        elementwise over lines), so a Doc is scanned alike in any batch."""
        pending = [self._prepare(doc, logits) for doc, logits in zip(docs, scores, strict=True)]
        lines = [line for p in pending for line in p.lines]
        decoded = self._decode_lines(lines, [i for p in pending for i in p.line_index])
        first = 0
        margin_lines: list[tuple[np.ndarray, tuple[int, ...], Any, np.ndarray]] = []
        for p in pending:
            p.decoded = decoded[first:first + len(p.lines)]
            first += len(p.lines)
            margin_lines += self._apply_metre(p)
        margins = weight_margins_batch(margin_lines, rule_eps=self.settings.rule_eps)
        first = 0
        for p in pending:
            for idx, values in zip(p.margin_at, margins[first:first + len(p.margin_at)], strict=True):
                p.metre_margin[idx] = values
            first += len(p.margin_at)
            self._finish(p)

    def _prepare(self, doc: Doc, logits: np.ndarray) -> _Pending:
        """Head probabilities, the macron prior and every verse's syllables and weight scores."""
        data = doc._.stoicheia
        text = doc.text  # spaCy re-joins every token on each doc.text: read it once
        planes = data.planes
        letter_token = np.asarray(data.letter_token)
        if data.gaps:  # a gap's MASK letters have no sound: scan the text letters only
            keep = ~data.gap_letters
            planes, logits, letter_token = select_letters(planes, keep), logits[keep], letter_token[keep]
        token_ends = np.cumsum(np.bincount(letter_token, minlength=len(doc)))
        n = len(planes)
        t = self.settings.temperature
        mac = _log_softmax(logits[:, :N_MACRON] / t) if n else np.zeros((0, 2))
        scan = _log_softmax(logits[:, N_MACRON:]) if n else np.zeros((0, 4))
        p_long = np.exp(mac[:, 1])
        dich = dichrona_mask(planes)
        decoder = self.macron_decoder
        if decoder is not None:
            p_long = decoder.prior(text, planes, p_long, dich)
        p = _Pending(doc=doc, text=text, planes=planes, token_ends=token_ends, p_long=p_long, dich=dich,
                     decoder=decoder, lengths=np.where(dich, (p_long > 0.5).astype(np.int64), -1),
                     metre_vote=np.zeros(n, dtype=np.int64), metre_margin=np.zeros(n, dtype=np.float64),
                     verse_metre=np.zeros(n, dtype=np.float64), offsets=np.asarray(planes.offsets),
                     verses=self.verses(doc))
        for index, span in enumerate(p.verses):
            lo = int(np.searchsorted(p.offsets, span.start_char))
            hi = int(np.searchsorted(p.offsets, span.end_char))
            sub = planes[lo:hi] if hi > lo else None
            syl = syllabify(sub, text=text) if sub is not None else None
            if sub is None or syl is None or len(syl) == 0:
                span._.scansion = Scansion(syllables=(), pattern="", decoder=LATTICE)
                span._.meter = None
                continue
            corr = correption_mask(syl, sub, text)
            p.line_index.append(index)
            p.lines.append((span, lo, hi, sub, syl, self._weight_logp(syl, scan[lo:hi], p_long[lo:hi], dich[lo:hi], corr),
                            synizesis_candidates(syl, sub, text)))
        return p

    def _apply_metre(self, p: _Pending) -> list[tuple[np.ndarray, tuple[int, ...], Any, np.ndarray]]:
        """The decoded weights of each verse of ``p``, and the lengths and votes the metre gives
        its open dichrona; returns the margin decode's lines (see :meth:`_annotate_batch`)."""
        lengths, dich = p.lengths, p.dich
        margin_lines: list[tuple[np.ndarray, tuple[int, ...], Any, np.ndarray]] = []
        for (_, lo, hi, _, syl, logp, _), res in zip(p.lines, p.decoded, strict=True):
            weights = np.where(np.argmax(logp, axis=1) == 0, HEAVY, LIGHT)
            if res is not None:
                merged = res.merged
                reduced = np.array([HEAVY if c == "H" else LIGHT for c in res.path])
                weights = expand_weights(reduced, merged, len(syl))
                if res.used_viterbi:
                    p.verse_metre[lo:hi] = 1.0
                    open_dich = (syl.weights == UNKNOWN) & dich[lo:hi][syl.nucleus] & ~syl.muta_cum_liquida
                    open_dich[-1] = False
                    for k in merged:  # a dichronon inside a synizesis gets no length from the metre
                        open_dich[k : k + 2] = False
                    idx = syl.nucleus[open_dich] + lo
                    lengths[idx] = np.where(weights[open_dich] == HEAVY, 1, 0)
                    p.metre_vote[idx] = 2 * lengths[idx] - 1
                    margin_lines.append((logp, merged, self.meters[res.meter], np.nonzero(open_dich)[0]))
                    p.margin_at.append(idx)
            p.line_weights.append(weights)
        return margin_lines

    def _finish(self, p: _Pending) -> None:
        """Scansion and metre of each verse, the macron posterior and the token annotations."""
        doc, text, planes, offsets = p.doc, p.text, p.planes, p.offsets
        dich, decoder = p.dich, p.decoder
        p_long, lengths, metre_vote, metre_margin = p.p_long, p.lengths, p.metre_vote, p.metre_margin
        abstain = self.settings.abstain_below
        cuts: list[tuple[Span, int, int, np.ndarray, np.ndarray]] = []  # span, lo, hi, syllable ends, weights
        for (span, lo, hi, sub, syl, _, _), res, weights in zip(p.lines, p.decoded, p.line_weights, strict=True):
            merged = res.merged if res is not None else ()
            # the decoded weights move a boundary only where a light syllable keeps a mute +
            # liquid onset; elsewhere the display syllables are the ones decoded
            moved = (syl.muta_cum_liquida & (np.asarray(weights)[: len(syl)] == LIGHT)).any()
            disp = syllabify(sub, text=text, weights=weights) if moved else syl
            sub_off = np.asarray(sub.offsets)
            keep = np.ones(len(disp), dtype=bool)
            if merged:
                keep[np.asarray(merged, dtype=np.int64)] = False  # a merge ends where its second half ends
            first_nuc = disp.nucleus[np.concatenate([[True], keep[:-1]])]  # a merge's first nucleus
            ends = word_syllable_ends(disp.ends[keep], first_nuc, disp.nucleus[keep], sub, text)
            starts = np.concatenate([[disp.starts[0]], ends[:-1] + 1])
            sylls = [text[int(sub_off[a]) : int(sub_off[b]) + 1] for a, b in zip(starts, ends, strict=True)]
            shown = weights[keep]  # both halves of a merge share its weight
            cuts.append((span, lo, hi, disp.ends[keep], shown))
            span._.scansion = Scansion(syllables=tuple(sylls), pattern=syl.pattern(shown), decoder=LATTICE,
                                       synizesis=tuple(int(k) for k in merged))
            span._.meter = None if res is None else Meter(
                name=res.meter, cost=float(res.cost), used=bool(res.used_viterbi), decoder=LATTICE,
                synizesis=tuple(int(k) for k in merged))
        if decoder is not None:
            p_long = decoder.posterior(p_long, metre_vote, dich, margin=metre_margin, planes=planes,
                                       verse_metre=p.verse_metre, text=text)
            lengths = np.where(dich, (p_long > 0.5).astype(np.int64), -1)
        conf = np.maximum(p_long, 1 - p_long)
        lengths = np.where(dich & (conf < abstain), -1, lengths)
        for span, lo, hi, ends, shown in cuts:  # the research strings of this decode's quantities
            vtext = text[span.start_char : span.end_char]
            off = offsets[lo:hi] - span.start_char
            labels = np.zeros(hi - lo, dtype=np.int64)
            labels[ends] = np.where(shown == HEAVY, rs.HEAVY, rs.LIGHT)
            marks = {int(k): rs.MAC_LONG if lengths[lo + k] == 1 else rs.MAC_SHORT
                     for k in np.nonzero(lengths[lo:hi] >= 0)[0]}
            span._.scansion = replace(span._.scansion, labels=tuple(int(x) for x in labels),
                                      bracketed=rs.bracketize(vtext, off, labels),
                                      macronized=rs.insert_marks(vtext, off, marks))
        doc._.verses = p.verses
        doc._.macrons = [Macron(offset=int(offsets[i]), p_long=float(p_long[i]),
                                length=None if lengths[i] < 0 else int(lengths[i]), metre=int(metre_vote[i]),
                                metre_margin=float(metre_margin[i])) for i in np.nonzero(dich)[0]]
        ends = p.token_ends.tolist()
        marked = np.concatenate([[0], np.cumsum(lengths >= 0)]).tolist()  # marked letters before each
        for tok in doc:
            a, b = ends[tok.i - 1] if tok.i else 0, ends[tok.i]
            word = tok.text  # a token without a marked letter is its text (as macronize_offsets gives it)
            tok._.macronized = word if marked[b] == marked[a] else \
                macronize_offsets(word, offsets[a:b] - tok.idx, lengths[a:b])

    def _forced_meters(self, grammar: str) -> dict[str, Any]:
        """The loaded metres that realise ``grammar`` (a research grammar name)."""
        chosen = {k: m for k, m in self.meters.items() if k in rs.LATTICE_METERS.get(grammar, ())}
        if not chosen:
            raise ConfigError(f"stoicheia_scanner meter {self.settings.meter!r}: the scanner has no metre for it "
                              f"(loaded: {sorted(self.meters)})")
        return chosen

    def _decode_lines(self, lines: Sequence[tuple[Any, ...]], indices: Sequence[int]) -> list[Any]:
        """The lattice decode of every verse (``lines`` as :meth:`_prepare` builds them, ``indices``
        their verse numbers): detected over all metres in one batch, or, with ``meter`` set, each
        verse under its forced metre (an elegiac couplet alternates), the gate not consulted."""
        decoded: list[Any] = [None] * len(lines)
        if not self.meters or not lines:
            return decoded
        forced = rs.grammar_name(self.settings.meter) if self.settings.meter else None
        groups: dict[str | None, list[int]] = {}
        for j, index in enumerate(indices):
            groups.setdefault(rs.verse_grammar(forced, index), []).append(j)
        for grammar, members in groups.items():
            meters = self.meters if grammar is None else self._forced_meters(grammar)
            batch = [lines[j] for j in members]
            results = decode_lattices([(logp, cands, hi - lo) for _, lo, hi, _, _, logp, cands in batch], meters,
                                      theta=self.settings.theta, synizesis_cost=self.settings.synizesis_cost,
                                      rule_eps=self.settings.rule_eps, force=grammar is not None)
            for j, res in zip(members, results, strict=True):
                decoded[j] = res
        return decoded

    def _weight_logp(self, syl: Any, scan: np.ndarray, p_long: np.ndarray, dich: np.ndarray,
                     correption: np.ndarray | None = None) -> np.ndarray:
        eps = self.settings.rule_eps
        corr_eps = self.settings.correption_eps
        ends = syl.ends
        heavy_end, light_end = np.exp(scan[ends, 1]), np.exp(scan[ends, 2])
        p_h = heavy_end / np.maximum(heavy_end + light_end, 1e-12)
        at_dich = dich[syl.nucleus]
        p_h = np.where(at_dich & ~syl.muta_cum_liquida, 0.5 * (p_h + p_long[syl.nucleus]), p_h)
        p = np.where(syl.weights == HEAVY, 1 - eps, np.where(syl.weights == LIGHT, eps, p_h))
        if correption is not None:
            p = np.where(correption & (syl.weights == HEAVY), 1 - corr_eps, p)
        if syl.weights[-1] == UNKNOWN:
            p[-1] = 0.5
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return np.log(np.stack([p, 1 - p], axis=1))

    # ------------------------------------------------------------- training
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optimizer | None = None,
               losses: dict[str, float] | None = None) -> dict[str, float]:
        """One step of the heads (and of the backbone through the listener, if its grad_factor > 0)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "ScannerPipe.update")
        set_dropout_rate(self.model, drop)
        docs = [eg.predicted for eg in examples]
        scores, backprop = self.model.begin_update(docs)
        loss, d_scores = self.get_loss(examples, scores)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Sequence[np.ndarray]) -> tuple[float, list[np.ndarray]]:
        """Mean cross-entropy of both heads over labelled letters; gradients w.r.t. the logits."""
        grads, total = [], 0.0
        examples = list(examples)
        gold = [self._gold(eg, len(s)) for eg, s in zip(examples, scores, strict=True)]
        n_mac = max(1, sum(int((g[0] >= 0).sum()) for g in gold))
        n_scan = max(1, sum(int((g[1] >= 0).sum()) for g in gold))
        for (mac_y, scan_y), logits in zip(gold, scores, strict=True):
            logits = np.asarray(logits, dtype=np.float32)
            d = np.zeros_like(logits)
            for sl, y, denom in ((slice(0, N_MACRON), mac_y, n_mac), (slice(N_MACRON, None), scan_y, n_scan)):
                lp = _log_softmax(logits[:, sl].astype(np.float64))
                m = y >= 0
                if m.any():
                    total += float(-lp[m, y[m]].sum() / denom)
                    g = np.exp(lp)
                    g[np.arange(len(y))[m], y[m]] -= 1.0
                    d[:, sl] = (g * m[:, None] / denom).astype(np.float32)
            grads.append(d)
        return total, grads

    def _gold(self, eg: Example, n: int) -> tuple[np.ndarray, np.ndarray]:
        g = eg.reference._.scan_gold
        if g is None:
            return np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        mac, scan = np.asarray(g["macron"], dtype=np.int64), np.asarray(g["scan"], dtype=np.int64)
        if mac.shape != (n,) or scan.shape != (n,):
            raise InvalidExampleError(f"scan_gold has {mac.shape}/{scan.shape} labels for {n} letters")
        return mac, scan

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Language | None = None,
                   weights: str | None = None) -> None:
        """Read the shipped metres and pin the lexicon data package (its version and sha256,
        saved by ``to_disk``); then either read ``weights`` (a saved scanner folder: heads and
        calibration) or infer the encoder width/depth from the listener and build the heads."""
        self._meters = self._select_meters(load_meters(shipped_meter_dirs()))
        pin = self.lexicon_pin
        if pin is not None:
            self.pin = pin.pin(MACRON_FILE, self.name)
        if weights is not None:  # the folder's data; the settings and the lexicon are the config's own
            self._keep_pin = True  # the folder's lexicon.json is not read
            try:
                self.from_disk(_weights_folder(weights, self.name), exclude=["cfg"])
            finally:
                self._keep_pin = False
            self._legacy_data(Path(weights))
            return
        validate_get_examples(get_examples, "ScannerPipe.initialize")
        docs = [eg.predicted for eg in list(get_examples())[:2]]
        self.model.initialize(X=docs if docs else None)
        node = heads_node(self.model)
        if not node.layers and docs:
            sample = _zeros(self.model.layers[0], docs)  # type: ignore[arg-type]
            node.initialize(X=sample)

    def add_label(self, label: str) -> int:
        raise NotImplementedError("the scanner has fixed labels")

    # -------------------------------------------------------- serialization
    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """The ``cfg`` file of a scanner saved before the settings block (read, never
        written): its settings, its macron calibration and its lexicon pin."""
        settings = {k: v for k, v in cfg.items() if k in ScannerSettings.names()}
        if settings:
            self.configure(**settings)
        self._set_data(cfg)

    def _legacy_data(self, folder: Path) -> None:
        """The data an older scanner folder kept in its ``cfg`` (calibration, lexicon pin)."""
        if (folder / "cfg").is_file() and not (folder / CALIBRATION_FILE).is_file():
            self._set_data(read_json(folder / "cfg"), pin=False)

    def _set_data(self, data: dict[str, Any], *, pin: bool = True) -> None:
        if data.get("macron_calibration") is not None:
            self.calibration = dict(data["macron_calibration"])
        if pin and "lexicon" in data:
            self._read_pin(data["lexicon"])

    def _read_pin(self, data: dict[str, Any] | None) -> None:
        """A saved pin, checked here (a saved pipeline loads only with the lexicon file it
        was saved with)."""
        self._lexicon = None
        self.pin = LexiconPin.from_dict(data)
        if self.pin is not None:
            self.pin.resolve(MACRON_FILE, self.name)

    def model_to_disk(self, folder: Path) -> None:
        """The heads as ``heads.json`` (sizes) + ``heads.safetensors``, the metres, the macron
        calibration and the lexicon pin (data; the settings are ``config.cfg``'s)."""
        heads = torch_heads(self.model)
        srsly.write_json(folder / "heads.json", heads.config)
        save_file({k: v.detach().cpu().contiguous() for k, v in heads.state_dict().items()},
                  str(folder / "heads.safetensors"))
        srsly.write_json(folder / "meters.json", [meter_to_dict(m) for m in self.meters.values()])
        if self.calibration is not None:
            write_json(folder / CALIBRATION_FILE, self.calibration)
        # the macron lexicon (GPL-3.0 / CC BY-SA data) stays in its data package: lexicon.json pins it
        write_json(folder / PIN_FILE, None if self.pin is None else self.pin.to_dict())

    def model_from_disk(self, folder: Path) -> None:
        """Read what :meth:`model_to_disk` wrote (also a trained-heads folder without ``cfg``)."""
        if not (folder / "heads.safetensors").is_file():
            raise CheckpointError(f"{folder} has no heads.safetensors")
        conf = srsly.read_json(folder / "heads.json")
        module = ScannerHeads(conf["n_layers"], conf["d_model"], conf["hidden"], conf["dropout"])
        module.load_state_dict(load_file(str(folder / "heads.safetensors")))
        make_heads(heads_node(self.model), conf["n_layers"], conf["d_model"], module)
        if (folder / "meters.json").is_file():
            self._meters = self._select_meters({m.name: m for m in (meter_from_dict(d, "meters.json")
                                                                    for d in srsly.read_json(folder / "meters.json"))})
        if (folder / CALIBRATION_FILE).is_file():
            self.calibration = dict(read_json(folder / CALIBRATION_FILE))
        if (folder / PIN_FILE).is_file() and not self._keep_pin:
            self._read_pin(read_json(folder / PIN_FILE))

    def model_to_bytes(self) -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            self.model_to_disk(Path(tmp))
            files = {f.name: f.read_bytes() for f in Path(tmp).iterdir()}
        return bytes(srsly.msgpack_dumps(files))

    def model_from_bytes(self, data: bytes) -> None:
        files = srsly.msgpack_loads(data)
        with tempfile.TemporaryDirectory() as tmp:
            for n, b in files.items():
                (Path(tmp) / n).write_bytes(b)
            self.model_from_disk(Path(tmp))


def _weights_folder(weights: str | Path, name: str) -> Path:
    folder = Path(weights)
    if not folder.is_dir():
        raise ConfigError(f"[initialize.components.{name}] weights: no folder {folder}")
    return folder
