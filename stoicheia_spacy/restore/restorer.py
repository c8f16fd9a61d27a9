"""The ``stoicheia_restorer`` pipe: restore Leiden gaps with the encoder pipe's backbone.

Place it after ``stoicheia_encoder``. Its ``[model]`` is a declared reference to that
pipe's backbone (``stoicheia.BackboneReference.v1``, ``upstream = "stoicheia_encoder"``),
connected when the pipeline is initialized or loaded (a restorer added afterwards links
itself on first use with :func:`~stoicheia_spacy.component.link_listeners`); the
beam search (:func:`stoicheia_spacy.restore.beam_search`) runs that backbone, one batched
forward per decoding step, and holds no copy of it. The Doc text
is the input text WITH its Leiden markup; the restorer does not parse it: the gaps are the
encoder's single parse, ``doc._.stoicheia.gaps`` (the candidate widths come from each gap's
markup, ``GapRun.gap``; the other gaps stay in the context as the MASK letters the encoder
fed, over ``doc._.stoicheia.planes``). When the encoder read the text as plain text because
its markup did not parse (``doc._.stoicheia.markup_error``), the restorer restores nothing
(``doc._.restorations == []``) and logs the error once; it does not raise. Evaluation views:
with ``strip_restorations`` editorial restorations ``[αβγ]`` become gaps too (the one case
that re-reads the markup, with ``parse_gaps(..., strip_restorations=True)``); when
``doc.spans[spans_key]`` exists, the gaps are those spans (each span's characters are
hidden and become a gap of ``len(span.text)`` characters).

``doc._.restorations`` is a list (document order) of frozen
:class:`~stoicheia_spacy.restore.results.Restoration` records: each gap's markup (or span)
``start``/``end`` in ``doc.text``, ``gap_index`` (its index in ``parse_gaps(doc.text).gaps``;
None for spans), ``min_width``/``max_width``, ``kind``, ``candidates`` (up to ``n_candidates``
:class:`~stoicheia_spacy.restore.results.Candidate` s, best first: ``text``, ``score``,
``share``, ``accented``), ``abstain`` (top share < ``abstain_below``, or not restored),
``confidence`` (the top candidate's calibrated chance of being right, Platt on dev),
``confident`` (``confidence >= confident_above``, fitted for 90 % precision on dev) and
``status`` (``"restored"``, or ``"too_wide"``: narrowest width > ``max_width``, no candidates).
``Restoration.to_dict()`` is its JSON. Accented candidates come from a declared service, the
``accenter`` block (:class:`~stoicheia_spacy.restore.accented.CandidateAccenter`): it borrows
the decoding of the accentuator pipe it names when that pipe is in the pipeline. Attested
parallels (``Candidate.parallels``) come from another, the ``parallels`` block
(:class:`~stoicheia_spacy.restore.parallels.CandidateParallels`, off by default).

Which gaps: all target gaps; only those whose markup overlaps a span of
``doc.spans[gaps_key]`` when that group exists; or only the gap indices given per call
(``nlp(text, component_cfg={"stoicheia_restorer": {"restore_only": [2]}})`` or
``restorer(doc, restore_only=[2])``). The other lacunae stay in the context as unknown
letters. Probabilities are normalised over a gap's candidates and calibrated per width
bucket (``temperatures``, fitted on dev; ``temperature`` is the fallback). The decoding
itself lives in :mod:`stoicheia_spacy.restore.select` (functions of the backbone module).

``scoring = "protocol"`` (the default of a packaged released restoration checkpoint)
scores every gap as the paper's strict protocol instead
(:mod:`stoicheia_spacy.restore.protocol`): candidates are ``(text, score, probability)``
with the protocol's length-normalised log-probability as ``score`` (σ only, spaces
count), ``share`` a softmax over the returned scores; ``doc._.region`` /
``doc._.century`` reach the backbone's metadata tables there as in the encoder.

``doc._.restored`` is ``doc.text`` with every non-abstained gap filled by its top
candidate in Leiden brackets (``render_restorations``). Width conventions, scores and
probabilities: see :mod:`stoicheia_spacy.restore.beam` and :mod:`~.restore.widths`. Speed
options (defaults: the exact beam): ``unmask`` letters committed per forward at each
hypothesis's most confident slots, and ``final_forward = false`` to read the word breaks
from the step that committed the last letter instead of one more forward.

A restoration overlay (the fine-tuned top blocks and heads, :mod:`~..backbone.overlay`) read
by ``from_disk`` from ``overlay.safetensors`` (or given to :meth:`StoicheiaRestorer.set_overlay`)
is applied through the reference: the untouched blocks are the encoder's own modules, the
overlaid ones copies; ``use_overlay = false`` restores with the plain backbone. The other
components keep reading the plain backbone. Serialization: the settings live in the pipeline's
``config.cfg`` (:meth:`StoicheiaRestorer.configure` records changes there); ``to_disk`` writes
the overlay only (a ``cfg`` file of an older pipeline is still read).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import torch
from safetensors.torch import save
from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from thinc.api import Config, Model

from ..accent.lexasset import RESTORE_KN_FILE, RESTORE_LM_FILE, LexiconPin, find_domain_sources
from ..backbone.overlay import OVERLAY_NAME, MappedOverlay
from ..component import SerializedPipe, link_listeners, read_json, write_json
from ..encoder.metadata import doc_metadata
from ..encoder.reference import BackboneReference
from ..errors import ConfigError, ParallelsIndexError
from ..leiden import GappedText, parse_gaps, render_restorations
from ..parallels.index import query_letters
from ..parallels.search import leave_out
from ..records import set_records_extension
from .accented import CandidateAccenter
from .beam import ModelScorer
from .combine import settings_use_backbone
from .domain import doc_domain
from .domain_sources import load_domain_sources
from .fusion import FusedScorer
from .infgram import Evidence
from .kneser_ney import load_kn
from .ngram_lm import NgramScorer, load_lm
from .parallels import CandidateParallels
from .protocol import protocol_targets
from .queries import hide_spans
from .results import Restoration
from .select import Plan, plan, plan_runs, restore_targets
from .settings import RestorerSettings

#: The LM's data-package pin beside the overlay (data; the settings are ``config.cfg``'s).
PIN_FILE = "lexicon.json"

logger = logging.getLogger(__name__)
_warned_index: list[bool] = []
_warned_sources: list[str] = []  # the domains whose missing sources were logged

set_records_extension("restorations")  # a list of Restoration records


def _restored(doc: Doc) -> str | None:
    items: list[Restoration] | None = doc._.restorations
    if items is None:
        return None
    if not items:
        return str(doc.text)
    if any(item.gap_index is None for item in items):  # span mode: splice into the text
        out, cursor = [], 0
        for item in sorted(items, key=lambda it: it.start):
            out.append(doc.text[cursor : item.start])
            top = item.candidates[0].text if item.candidates and not item.abstain else None
            out.append(f"[{top}]" if top is not None else doc.text[item.start : item.end])
            cursor = item.end
        out.append(doc.text[cursor:])
        return "".join(out)
    user_data: dict[Any, Any] = doc.user_data
    notation, strip = user_data.get(("stoicheia_restorer", "parse"), ("leiden", False))
    gapped = parse_gaps(doc.text, notation=notation, strip_restorations=strip)
    fills = {item.gap_index: item.candidates[0].text for item in items
             if item.gap_index is not None and item.candidates and not item.abstain}
    return render_restorations(gapped, fills, notation=notation)


if not Doc.has_extension("restored"):
    Doc.set_extension("restored", getter=_restored)

DEFAULT_RESTORER_MODEL = """
[model]
@architectures = "stoicheia.BackboneReference.v1"
upstream = "stoicheia_encoder"
"""

#: The options and their defaults (:class:`~stoicheia_spacy.restore.settings.RestorerSettings`).
DEFAULT_CONFIG: dict[str, Any] = RestorerSettings().to_dict()


@Language.factory(
    "stoicheia_restorer",
    assigns=["doc._.restorations", "doc._.restored"],
    requires=["doc._.stoicheia"],
    default_config={"model": Config().from_str(DEFAULT_RESTORER_MODEL)["model"],
                    "settings": {"@misc": "stoicheia.RestorerSettings.v1"}, "lexicon": None,
                    "accenter": {"@misc": "stoicheia.CandidateAccenter.v1"},
                    "parallels": {"@misc": "stoicheia.CandidateParallels.v1"}},
)
def make_stoicheia_restorer(nlp: Language, name: str, model: Model, settings: RestorerSettings,
                            lexicon: LexiconPin | None, accenter: CandidateAccenter | None,
                            parallels: CandidateParallels | None = None) -> StoicheiaRestorer:
    """Create the ``stoicheia_restorer`` pipe; ``settings``: the
    ``[components.stoicheia_restorer.settings]`` block (:mod:`stoicheia_spacy.restore.settings`);
    ``lexicon``: the data package whose Kneser-Ney 8-gram (``kn_lm8.npz``, with ``kn_weights`` set: the
    default) or character 7-gram (``ngram_lm7.npz``, fused into the beam) the restorer reads
    (``stoicheia.Lexicon.v1``, that file pinned at ``initialize``; null: no LM unless ``settings.kn_lm`` /
    ``settings.lm`` names a file);
    ``accenter``: the service that accents the candidates (``stoicheia.CandidateAccenter.v1``; null: none);
    ``parallels``: the service that finds attested parallels of the candidates
    (``stoicheia.CandidateParallels.v1``, ``top = 0``: off; :mod:`~stoicheia_spacy.restore.parallels`)."""
    return StoicheiaRestorer(nlp, name, model=model, settings=settings, lexicon=lexicon,
                             accenter=accenter, parallels=parallels).bind(nlp)


class StoicheiaRestorer(SerializedPipe, Pipe):
    """Restore the gaps of each Doc; every gap of a batch of Docs shares one beam search."""

    settings_in_config = True  # config.cfg holds the settings; to_disk writes no cfg

    def __init__(self, nlp: Language, name: str = "stoicheia_restorer", *, model: Model | None = None,
                 settings: RestorerSettings | None = None, lexicon: LexiconPin | None = None,
                 accenter: CandidateAccenter | None = None, parallels: CandidateParallels | None = None,
                 **options: Any) -> None:
        if model is None:
            model = BackboneReference()
        if not any(isinstance(node, BackboneReference) for node in model.walk()):
            raise ConfigError("the stoicheia_restorer model must hold a stoicheia.BackboneReference.v1")
        self.nlp = nlp
        self.name = name
        self.model = model
        base = settings if settings is not None else RestorerSettings()
        self.settings: RestorerSettings = base.replace(**options) if options else base
        self.forwards = 0
        self._warned = False  # a markup error is logged once per pipe
        self.overlay: MappedOverlay | None = None  # read when the overlaid view is built
        self._cast: tuple[int, Any] | None = None  # (id of the float32 module, its bf16 copy)
        self._lm: tuple[str, Any] | None = None  # (path, the loaded n-gram LM)
        self._kn: tuple[str, Any] | None = None  # (path, the loaded Kneser-Ney 8-gram)
        self._sources: dict[str, tuple[str, Any]] = {}  # domain -> (folder name, its loaded DomainSources or None)
        self._pinned_for: str | None = None  # the file whose sha256 the pin holds
        #: the data package of the fused n-gram LM (pinned to version + sha256 at initialize)
        self.lexicon_pin = LexiconPin.from_dict(lexicon) if isinstance(lexicon, dict) else lexicon
        #: the declared service that accents the candidates (None: no accented forms)
        self.accenter = accenter
        #: the declared service that finds the candidates' attested parallels (None or top 0: none)
        self.parallels = parallels

    @property
    def cfg(self) -> Mapping[str, Any]:
        """The settings as a read-only mapping; change them with :meth:`configure` (which
        records them in the pipeline's ``config.cfg``)."""
        return MappingProxyType(self.settings.to_dict())

    def configure(self, **changes: Any) -> RestorerSettings:
        """Replace the settings by a validated copy with ``changes`` (unknown names and bad
        values raise :class:`~stoicheia_spacy.errors.ConfigError`), recorded in
        ``[components.NAME.settings]`` of the pipeline's config (``nlp.to_disk`` saves them)."""
        self.settings = self.settings.replace(**changes)
        self.record_settings()
        return self.settings

    # ------------------------------------------------------------ backbone
    @property
    def reference(self) -> BackboneReference:
        """The declared reference to the encoder's backbone (the ``[model]`` block)."""
        return next(node for node in self.model.walk() if isinstance(node, BackboneReference))

    def backbone(self) -> Any:
        """The encoder's torch backbone through the reference, with the overlay when used, in the
        encoder's inference ``precision``."""
        ref = self.reference
        if not ref.connected:  # added after initialize/load: link as nlp.initialize would
            link_listeners(self.nlp)
        if not ref.connected:
            raise ConfigError(f"stoicheia_restorer needs the pipe {ref.upstream_name!r} before it "
                              f"(pipeline: {self.nlp.pipe_names})")
        return ref.backbone(self.overlay if self.settings.use_overlay else None, runtime=True)

    def beam_backbone(self) -> Any:
        """:meth:`backbone` in the beam's ``dtype``: float32, the encoder's own weights (in the
        encoder's ``precision``), or a bf16 copy, made once per backbone (the encoder and the
        other components keep their float32 weights)."""
        module = self.backbone()
        if self.settings.dtype == "float32" or self.reference.precision != "float32":
            return module
        if self._cast is None or self._cast[0] != id(module):


            self._cast = (id(module), copy.deepcopy(module).to(torch.bfloat16).eval())
        return self._cast[1]

    def pin_file(self) -> str:
        """The data-package file the pin checks: the Kneser-Ney 8-gram when ``kn_weights`` is set
        (the combined decoder), else the fused 7-gram."""
        return RESTORE_KN_FILE if self.settings.kn_weights else RESTORE_LM_FILE

    def _resolve(self, file: str) -> str:
        """The pinned data package's ``file``: checked against the pin's sha256 when the pin was
        made for it (:meth:`pin_file` at initialize or load), else by version alone (a decoder
        switched at run time, e.g. ``configure(kn_weights={})``)."""
        pin = self.lexicon_pin
        assert pin is not None
        if self._pinned_for is not None and self._pinned_for != file:
            pin = dataclasses.replace(pin, sha256=None)
        return str(pin.resolve(file, self.name))

    def kn_path(self) -> str | None:
        """The Kneser-Ney 8-gram of the combined decoder: ``settings.kn_lm``, else the pinned data
        package's ``kn_lm8.npz``, else None (the backbone's beam alone)."""
        if self.settings.kn_lm:
            return str(self.settings.kn_lm)
        if self.lexicon_pin is not None and self.settings.kn_weights:
            return self._resolve(RESTORE_KN_FILE)
        return None

    def kn(self) -> Any:
        """The Kneser-Ney 8-gram of :meth:`kn_path` (memory-mapped once), or None."""
        path = self.kn_path()
        if path is None:
            return None
        if self._kn is None or self._kn[0] != path:
            self._kn = (path, load_kn(path, self.settings.kn_lm_sha256 if self.settings.kn_lm else None))
        return self._kn[1]

    def lm_path(self) -> str | None:
        """The n-gram LM fused into the beam: the file ``settings.lm`` names, else the pinned data
        package's ``ngram_lm7.npz`` (checked against the pin), else None (the backbone alone)."""
        if self.settings.lm:
            return str(self.settings.lm)
        if self.lexicon_pin is not None and not self.settings.kn_weights:
            return self._resolve(RESTORE_LM_FILE)
        return None

    def ngram(self) -> Any:
        """The n-gram LM of :meth:`lm_path` (loaded once), or None."""
        path = self.lm_path()
        if path is None:
            return None
        if self._lm is None or self._lm[0] != path:
            self._lm = (path, load_lm(path, self.settings.lm_sha256 if self.settings.lm else None))
        return self._lm[1]

    def scorer(self, backbone: Any, lm: Any = None) -> Any:
        """The beam's scorer: ``backbone`` alone, or fused with the n-gram LM (``lm``, default
        :meth:`ngram`) when ``lm_weight`` > 0."""
        c = self.settings
        if backbone is None or float(c.lm_weight) <= 0:
            return backbone
        lm = lm if lm is not None else self.ngram()
        if lm is None:
            return backbone

        return FusedScorer(ModelScorer(backbone), NgramScorer(lm), float(c.lm_weight))

    def set_overlay(self, path: str | Path | None) -> None:
        """Use the restoration overlay at ``path`` (a file or a directory holding
        ``overlay.safetensors``); ``None`` drops it. Damaged files raise ``CheckpointError``."""
        self.overlay = None if path is None else MappedOverlay(path)
        self._cast = None

    # ------------------------------------------------------------ gaps
    def plan(self, doc: Doc, only: list[int] | None = None) -> tuple[Any, bool]:
        """The restoration plan of ``doc`` (:class:`~stoicheia_spacy.restore.select.Plan`) and
        whether its gaps came from ``doc.spans[spans_key]``. Reads the encoder's parse
        (``doc._.stoicheia``); None when the markup did not parse (``markup_error``)."""
        c = self.settings
        key = c.spans_key
        if key in doc.spans:
            gapped = _spans_gapped(doc, [(s.start_char, s.end_char) for s in doc.spans[key]])
            return plan(gapped, only=only, unknown_slots=c.unknown_slots, approx_slack=c.approx_slack,
                        max_width=c.max_width, context_cap=c.context), True
        data = doc._.stoicheia
        if data is None:
            raise ConfigError(f"stoicheia_restorer reads doc._.stoicheia: put the pipe {self.reference.upstream_name!r} "
                              f"before it (pipeline: {self.nlp.pipe_names})")
        if data.markup_error is not None:
            if not self._warned:
                logger.warning("stoicheia_restorer: markup did not parse, nothing restored (%s)", data.markup_error)
                self._warned = True
            return None, False
        spans = None
        if c.gaps_key in doc.spans:
            spans = [(s.start_char, s.end_char) for s in doc.spans[c.gaps_key]]
        if c.strip_restorations:  # the evaluation view: editorial restorations become gaps
            gapped = parse_gaps(doc.text, notation=cast(Any, c.notation), strip_restorations=True)
            return plan(gapped, only=only, spans=spans, unknown_slots=c.unknown_slots,
                        approx_slack=c.approx_slack, max_width=c.max_width, context_cap=c.context), False
        return plan_runs(doc.text, data.planes, data.gaps, only=only, spans=spans, approx_slack=c.approx_slack,
                         max_width=c.max_width), False

    # ------------------------------------------------------------ running
    def __call__(self, doc: Doc, *, restore_only: Iterable[int] | None = None, **settings: Any) -> Doc:
        """Restore ``doc``; ``restore_only``: gap indices (``gap_index``) to restore;
        ``settings``: settings for this call only (e.g. ``beam_width``; :meth:`settings_for_call`)."""
        only = None if restore_only is None else [int(i) for i in restore_only]
        with self.settings_for_call(settings):
            return self._restore([doc], only)[0]

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 8,
             restore_only: Iterable[int] | None = None, **settings: Any) -> Iterator[Doc]:
        """Restore Docs in batches of ``batch_size`` (``nlp.pipe(texts, component_cfg={"stoicheia_restorer":
        {"beam_width": 5}})`` passes ``settings`` for that call only); a batch that fails goes to the
        pipe's error handler (``nlp.set_error_handler``; the default raises)."""
        only = None if restore_only is None else [int(i) for i in restore_only]
        handler = self.get_error_handler()
        with self.settings_for_call(settings):
            for batch in util.minibatch(stream, size=batch_size):
                try:
                    done = self._restore(list(batch), only)
                except Exception as error:
                    handler(self.name, self, list(batch), error)
                    continue
                yield from done

    def _restore(self, docs: list[Doc], only: list[int] | None = None) -> list[Doc]:
        c = self.settings
        plans, flags = [], []
        for doc in docs:
            p, from_spans = self.plan(doc, only)
            plans.append(Plan() if p is None else p)
            flags.append(from_spans)
        decoding = any(p.decode for p in plans)
        scored: list[bool] | None = None  # per Doc: its known-width gaps scored by the index's evidence
        scored_hidden: list[bool] | None = None  # per Doc: its hidden-width gaps too (weights for "unknown")
        kn = self.kn() if decoding and c.scoring == "beam" and c.kn_weights else None
        needs_backbone = kn is None or settings_use_backbone(c)
        backbone = ((self.backbone() if c.scoring == "protocol" else self.beam_backbone())
                    if decoding and needs_backbone else None)
        config = backbone.config.to_dict() if backbone is not None and hasattr(backbone, "config") else {}
        meta = doc_metadata(docs, config)  # doc._.region / doc._.century -> table rows
        ids = list(zip(meta.get("region", [None] * len(docs)), meta.get("century", [None] * len(docs)), strict=True))
        if c.scoring == "protocol":
            results = protocol_targets(backbone, [d.text for d in docs], plans, ids, c, from_spans=flags)
        else:
            if meta:
                plans = [_with_metadata(p, region, century) for p, (region, century) in zip(plans, ids, strict=True)]
            if kn is not None:  # the combined decoder: the n-gram's beam (+ the backbone's), one combination
                domains = [doc_domain(doc, c.domain) for doc in docs]  # the weights of each text's domain
                evidence = self.evidence(docs, plans, domains)
                scored = [e is not None for e in evidence] if evidence is not None else None
                scored_hidden = ([e is not None and "unknown" in e.weights for e in evidence]
                                 if evidence is not None else None)
                results, forwards = restore_targets(backbone, plans, c, from_spans=flags, kn=kn, domains=domains,
                                                    evidence=evidence)
            else:
                uses_lm = decoding and (float(c.lm_weight) > 0 or float(c.lm_rescore) > 0)
                lm = self.ngram() if uses_lm else None  # resolved once per batch: fusion and rescoring
                results, forwards = restore_targets(self.scorer(backbone, lm), plans, c, from_spans=flags,
                                                    lm=lm if float(c.lm_rescore) > 0 else None)
            self.forwards += forwards
        # parallels first: their rerank settles the order, so the accenter's top candidates are the ones shown
        if self.parallels is not None and self.parallels.active and decoding:
            results = self.parallels(docs, results, scored=scored, scored_hidden=scored_hidden)
        if self.accenter is not None and decoding:
            results = self.accenter(self.nlp, self.reference.upstream_name, docs, results)
        for doc, items in zip(docs, results, strict=True):
            doc._.restorations = list(items)
            user_data: dict[Any, Any] = doc.user_data
            user_data[("stoicheia_restorer", "parse")] = (c.notation, c.strip_restorations)
        return docs

    def evidence(self, docs: Sequence[Doc], plans: Sequence[Any], domains: Sequence[str]) -> list[Evidence | None] | None:
        """Per Doc, the parallels index's evidence for its gaps (``infgram_weights`` of its
        domain; the Doc's duplicates in the index left out), or None where its domain has no
        weights; None for all without weights or without an installed index (logged once)."""
        tables = self.settings.infgram_weights or {}
        if not any(tables.get(d) for d, p in zip(domains, plans, strict=True) if p.decode):
            return None
        try:
            index = (self.parallels or CandidateParallels()).index()
        except ParallelsIndexError as exc:
            if not _warned_index:
                _warned_index.append(True)
                logger.warning("restoring without the parallels index's candidates: %s", exc)
            return None
        return [Evidence(index, tables[d], leave_out(index, query_letters(doc.text)), domain=self.sources_for(doc, d))
                if tables.get(d) and p.decode else None for doc, p, d in zip(docs, plans, domains, strict=True)]

    def sources_for(self, doc: Doc, domain: str) -> Any:
        """The domain's own sources for ``doc`` (``domain_sources`` with its
        ``domain_source_weights``; the Doc's duplicates in their index left out), or None where
        the domain has none or they are not installed (logged once)."""
        c = self.settings
        name, weights = (c.domain_sources or {}).get(domain), (c.domain_source_weights or {}).get(domain)
        if not name or not weights:
            return None
        if self._sources.get(domain, (None,))[0] != name:
            try:
                self._sources[domain] = (name, load_domain_sources(find_domain_sources(name), weights))
            except ParallelsIndexError as exc:
                if domain not in _warned_sources:
                    _warned_sources.append(domain)
                    logger.warning("restoring %s text without its own sources: %s", domain, exc)
                self._sources[domain] = (name, None)
        src = self._sources[domain][1]
        if src is None:
            return None
        return replace(src, weights=weights, exclude=leave_out(src.index, query_letters(doc.text)))

    # ------------------------------------------------------------ serialization
    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """The ``cfg`` file of a pipeline saved before the settings block (read, never written;
        recorded in the config): a stored ``encoder`` name is ignored, ``window`` is ``context``."""
        if "window" in cfg and "context" not in cfg:
            cfg = {**cfg, "context": cfg["window"]}
        self.settings = RestorerSettings.from_dict({**self.settings.to_dict(), **cfg}, strict=False)
        self.record_settings()

    def model_to_disk(self, folder: Path) -> None:
        """The overlay as ``overlay.safetensors`` (nothing without one) and the LM's data-package
        pin as ``lexicon.json``."""
        if self.overlay is not None:
            (folder / OVERLAY_NAME).write_bytes(self.model_to_bytes())
        write_json(folder / PIN_FILE, None if self.lexicon_pin is None else self.lexicon_pin.to_dict())

    def model_from_disk(self, folder: Path) -> None:
        self.set_overlay(folder / OVERLAY_NAME if (folder / OVERLAY_NAME).exists() else None)
        if (folder / PIN_FILE).is_file():
            self._read_pin(read_json(folder / PIN_FILE))

    def _read_pin(self, data: dict[str, Any] | None) -> None:
        """A saved pin, checked here: a saved pipeline loads only with the LM file it was saved with."""
        self.lexicon_pin = LexiconPin.from_dict(data)
        self._lm = None
        self._kn = None
        if self.lexicon_pin is not None:
            self.lexicon_pin.resolve(self.pin_file(), self.name)
            self._pinned_for = self.pin_file() if self.lexicon_pin.sha256 else None

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """The overlay (``model``) and the LM pin (``lexicon``) as one msgpack message."""
        pin = None if self.lexicon_pin is None else self.lexicon_pin.to_dict()
        getters: dict[str, Callable[[], Any]] = {"model": self.model_to_bytes, "lexicon": lambda: pin}
        return bytes(util.to_bytes(getters, exclude))

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> StoicheiaRestorer:
        setters: dict[str, Callable[[Any], Any]] = {"cfg": lambda c: self.set_cfg(dict(c)),
                                                     "model": self.model_from_bytes, "lexicon": self._read_pin}
        util.from_bytes(bytes_data, setters, exclude)
        return self

    def model_to_bytes(self) -> bytes:
        if self.overlay is None:
            return b""
        tensors, meta = self.overlay
        return bytes(save({k: v.contiguous() for k, v in tensors.items()}, metadata=meta))

    def model_from_bytes(self, data: bytes) -> None:
        if not data:
            self.set_overlay(None)
            return

        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / OVERLAY_NAME
            file.write_bytes(data)
            self.set_overlay(file)

    def initialize(self, get_examples: Callable[[], Iterable[Any]] | None = None, *,
                   nlp: Language | None = None, weights: str | None = None) -> None:
        """``weights`` (``[initialize.components.NAME]``): a folder whose restoration overlay
        (``overlay.safetensors``) is loaded; the settings are the config's own
        (``[components.NAME.settings]``), not the folder's ``cfg``. Without it there is
        nothing to initialize: the restorer reuses the encoder's backbone and heads."""
        if weights is not None:
            self.from_disk(_weights_folder(weights, self.name), exclude=["cfg"])
        if self.lexicon_pin is not None:  # raises LexiconMissingError without the data package
            self.lexicon_pin = self.lexicon_pin.pin(self.pin_file(), self.name)
            self._pinned_for = self.pin_file()



def _with_metadata(plan: Any, region: int | None, century: int | None) -> Any:
    """``plan`` whose queries carry the document's region / century rows."""
    plan.decode = [replace(t, query=replace(t.query, region=region, century=century)) for t in plan.decode]
    return plan


def _weights_folder(weights: str | Path, name: str) -> Path:
    folder = Path(weights)
    if not folder.is_dir():
        raise ConfigError(f"[initialize.components.{name}] weights: no folder {folder}")
    return folder


def _spans_gapped(doc: Doc, spans: list[tuple[int, int]]) -> GappedText:
    """Hide the given character spans of ``doc.text``: each becomes a ``restored`` gap."""
    return hide_spans(doc.text, spans)
