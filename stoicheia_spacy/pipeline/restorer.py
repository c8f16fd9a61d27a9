"""The ``stoicheia_restorer`` pipe: restore Leiden gaps with the encoder pipe's backbone.

Place it after ``stoicheia_encoder``. Its ``[model]`` is a declared reference to that
pipe's backbone (``stoicheia.BackboneReference.v1``, ``upstream = "stoicheia_encoder"``),
connected when the pipeline is initialized or loaded (a restorer added afterwards links
itself on first use with :func:`~stoicheia_spacy.pipeline.base.link_listeners`); the
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

``doc._.restorations`` is a list (document order) of dicts::

    {"start": int, "end": int,        # the gap's markup (or span) in doc.text
     "gap_index": int | None,         # GapRun.index: index in parse_gaps(doc.text).gaps (None for spans)
     "min_width": int, "max_width": int | None, "kind": str,
     "candidates": [(text, logprob, probability), ...],   # up to n_candidates, best first
     "abstain": bool,                 # top probability < abstain_below, or not restored
     "status": "restored" | "too_wide"}   # too_wide: narrowest width > max_width, no candidates

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
count), ``probability`` a softmax over the returned scores; ``doc._.region`` /
``doc._.century`` reach the backbone's metadata tables there as in the encoder.

``doc._.restored`` is ``doc.text`` with every non-abstained gap filled by its top
candidate in Leiden brackets (``render_restorations``). Width conventions, scores and
probabilities: see :mod:`stoicheia_spacy.restore.beam` and :mod:`~.restore.widths`. Speed
options (defaults: the exact beam): ``unmask`` letters committed per forward at each
hypothesis's most confident slots, and ``final_forward = false`` to read the word breaks
from the step that committed the last letter instead of one more forward.

A restoration overlay (the fine-tuned top blocks and heads, :mod:`~.restore.overlay`) read
by ``from_disk`` from ``overlay.safetensors`` (or given to :meth:`StoicheiaRestorer.set_overlay`)
is applied through the reference: the untouched blocks are the encoder's own modules, the
overlaid ones copies; ``use_overlay = false`` restores with the plain backbone. The other
components keep reading the plain backbone. Serialization: parts ``cfg`` and ``model``
(the overlay), ``exclude`` honoured.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from thinc.api import Config, Model

from ..errors import ConfigError
from ..leiden import GappedText, parse_gaps, render_restorations
from ..models.reference import BackboneReference
from .base import SerializedPipe, link_listeners

logger = logging.getLogger(__name__)

if not Doc.has_extension("restorations"):
    Doc.set_extension("restorations", default=None)


def _restored(doc: Doc) -> str | None:
    items = doc._.restorations
    if items is None:
        return None
    if not items:
        return str(doc.text)
    if any(item["gap_index"] is None for item in items):  # span mode: splice into the text
        out, cursor = [], 0
        for item in sorted(items, key=lambda it: it["start"]):
            out.append(doc.text[cursor : item["start"]])
            top = item["candidates"][0][0] if item["candidates"] and not item["abstain"] else None
            out.append(f"[{top}]" if top is not None else doc.text[item["start"] : item["end"]])
            cursor = item["end"]
        out.append(doc.text[cursor:])
        return "".join(out)
    user_data: dict[Any, Any] = doc.user_data
    notation, strip = user_data.get(("stoicheia_restorer", "parse"), ("leiden", False))
    gapped = parse_gaps(doc.text, notation=notation, strip_restorations=strip)
    fills = {item["gap_index"]: item["candidates"][0][0] for item in items
             if item["candidates"] and not item["abstain"]}
    return render_restorations(gapped, fills, notation=notation)


if not Doc.has_extension("restored"):
    Doc.set_extension("restored", getter=_restored)

DEFAULT_RESTORER_MODEL = """
[model]
@architectures = "stoicheia.BackboneReference.v1"
upstream = "stoicheia_encoder"
"""

DEFAULT_CONFIG: dict[str, Any] = {
    "beam_width": 20,
    "n_candidates": 20,
    "context": 512,
    "mode": "any",
    "unmask": 1,
    "final_forward": True,
    "space_ratio": 0.25,
    "elastic_slots": 12,
    "unknown_slots": 5,
    "approx_slack": 2,
    "temperature": 1.0,
    "temperatures": {},
    "unknown": "enumerate",
    "max_letters": 10,
    "max_width": 64,
    "rank": "total",
    "length_bonus": 0.0,
    "width_log_prior": [],
    "abstain_below": 0.0,
    "notation": "leiden",
    "spans_key": "restore",
    "gaps_key": "restore_gaps",
    "strip_restorations": False,
    "use_overlay": True,
    "scoring": "beam",
}
#: ``scoring``: our beam (``"beam"``) or the paper's strict protocol (``"protocol"``,
#: :mod:`stoicheia_spacy.restore.protocol`; the default of packaged released restoration checkpoints).
SCORINGS = ("beam", "protocol")


@Language.factory(
    "stoicheia_restorer",
    assigns=["doc._.restorations", "doc._.restored"],
    requires=["doc._.stoicheia"],
    default_config={"model": Config().from_str(DEFAULT_RESTORER_MODEL)["model"], **DEFAULT_CONFIG},
)
def make_stoicheia_restorer(
    nlp: Language, name: str, model: Model, beam_width: int, n_candidates: int, context: int,
    mode: str, unmask: int, final_forward: bool, space_ratio: float, elastic_slots: int, unknown_slots: int,
    approx_slack: int, temperature: float, temperatures: dict[str, float], unknown: str, max_letters: int,
    max_width: int,
    rank: str, length_bonus: float, width_log_prior: list[float], abstain_below: float, notation: str,
    spans_key: str, gaps_key: str, strip_restorations: bool, use_overlay: bool, scoring: str = "beam",
) -> StoicheiaRestorer:
    """Create the ``stoicheia_restorer`` pipe (see the module docstring for the options)."""
    return StoicheiaRestorer(
        nlp, name, model=model, beam_width=beam_width, n_candidates=n_candidates, context=context,
        mode=mode, unmask=unmask, final_forward=final_forward, space_ratio=space_ratio,
        elastic_slots=elastic_slots, unknown_slots=unknown_slots, approx_slack=approx_slack,
        temperature=temperature, temperatures=temperatures, unknown=unknown,
        max_letters=max_letters, max_width=max_width, rank=rank, length_bonus=length_bonus,
        width_log_prior=width_log_prior, abstain_below=abstain_below,
        notation=notation, spans_key=spans_key, gaps_key=gaps_key,
        strip_restorations=strip_restorations, use_overlay=use_overlay, scoring=scoring)


class StoicheiaRestorer(SerializedPipe, Pipe):
    """Restore the gaps of each Doc; every gap of a batch of Docs shares one beam search."""

    def __init__(self, nlp: Language, name: str = "stoicheia_restorer", *, model: Model | None = None,
                 **cfg: Any) -> None:
        unknown = set(cfg) - set(DEFAULT_CONFIG)
        if unknown:
            raise ConfigError(f"unknown stoicheia_restorer options: {sorted(unknown)}")
        if model is None:
            model = BackboneReference()
        if not any(isinstance(node, BackboneReference) for node in model.walk()):
            raise ConfigError("the stoicheia_restorer model must hold a stoicheia.BackboneReference.v1")
        self.nlp = nlp
        self.name = name
        self.model = model
        self.cfg: dict[str, Any] = {**DEFAULT_CONFIG, **cfg}
        self._check()
        self.forwards = 0
        self._warned = False  # a markup error is logged once per pipe
        self.overlay: tuple[dict[str, Any], dict[str, str]] | None = None

    def _check(self) -> None:
        c = self.cfg
        if c["mode"] not in ("any", "confident"):
            raise ConfigError(f"mode must be 'any' or 'confident', got {c['mode']!r}")
        if int(c["unmask"]) < 1:
            raise ConfigError(f"unmask must be >= 1, got {c['unmask']!r}")
        if not 0.0 <= float(c["abstain_below"]) <= 1.0:
            raise ConfigError("abstain_below must be in [0, 1]")
        if float(c["temperature"]) <= 0 or any(float(t) <= 0 for t in (c["temperatures"] or {}).values()):
            raise ConfigError("temperature and temperatures must be > 0")
        if c["unknown"] not in ("enumerate", "elastic") or c["rank"] not in ("total", "mean"):
            raise ConfigError("unknown must be 'enumerate' or 'elastic', rank 'total' or 'mean'")
        if not 1 <= int(c["max_letters"]) <= int(c["max_width"]):
            raise ConfigError("need 1 <= max_letters <= max_width")
        if c["scoring"] not in SCORINGS:
            raise ConfigError(f"scoring must be one of {list(SCORINGS)}, got {c['scoring']!r}")
        if c["notation"] not in ("leiden", "ddbdp"):
            raise ConfigError(f"notation must be 'leiden' or 'ddbdp', got {c['notation']!r}")

    # ------------------------------------------------------------ backbone
    @property
    def reference(self) -> BackboneReference:
        """The declared reference to the encoder's backbone (the ``[model]`` block)."""
        return next(node for node in self.model.walk() if isinstance(node, BackboneReference))

    def backbone(self) -> Any:
        """The encoder's torch backbone through the reference, with the overlay when used."""
        ref = self.reference
        if not ref.connected:  # added after initialize/load: link as nlp.initialize would
            link_listeners(self.nlp)
        if not ref.connected:
            raise ConfigError(f"stoicheia_restorer needs the pipe {ref.upstream_name!r} before it "
                              f"(pipeline: {self.nlp.pipe_names})")
        return ref.backbone(self.overlay if self.cfg["use_overlay"] else None)

    def set_overlay(self, path: str | Path | None) -> None:
        """Use the restoration overlay at ``path`` (a file or a directory holding
        ``overlay.safetensors``); ``None`` drops it. Damaged files raise ``CheckpointError``."""
        from ..restore.overlay import read_overlay

        self.overlay = None if path is None else read_overlay(path)

    # ------------------------------------------------------------ gaps
    def plan(self, doc: Doc, only: list[int] | None = None) -> tuple[Any, bool]:
        """The restoration plan of ``doc`` (:class:`~stoicheia_spacy.restore.select.Plan`) and
        whether its gaps came from ``doc.spans[spans_key]``. Reads the encoder's parse
        (``doc._.stoicheia``); None when the markup did not parse (``markup_error``)."""
        from ..restore.select import plan, plan_runs

        c = self.cfg
        key = c["spans_key"]
        if key in doc.spans:
            gapped = _spans_gapped(doc, [(s.start_char, s.end_char) for s in doc.spans[key]])
            return plan(gapped, only=only, unknown_slots=c["unknown_slots"], approx_slack=c["approx_slack"],
                        max_width=int(c["max_width"]), context_cap=int(c["context"])), True
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
        if c["gaps_key"] in doc.spans:
            spans = [(s.start_char, s.end_char) for s in doc.spans[c["gaps_key"]]]
        if c["strip_restorations"]:  # the evaluation view: editorial restorations become gaps
            gapped = parse_gaps(doc.text, notation=c["notation"], strip_restorations=True)
            return plan(gapped, only=only, spans=spans, unknown_slots=c["unknown_slots"],
                        approx_slack=c["approx_slack"], max_width=int(c["max_width"]),
                        context_cap=int(c["context"])), False
        return plan_runs(doc.text, data.planes, data.gaps, only=only, spans=spans, approx_slack=c["approx_slack"],
                         max_width=int(c["max_width"])), False

    # ------------------------------------------------------------ running
    def __call__(self, doc: Doc, *, restore_only: Iterable[int] | None = None) -> Doc:
        """Restore ``doc``; ``restore_only``: gap indices (``gap_index``) to restore."""
        return next(iter(self.pipe([doc], restore_only=restore_only)))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 8,
             restore_only: Iterable[int] | None = None) -> Iterator[Doc]:
        only = None if restore_only is None else [int(i) for i in restore_only]
        batch: list[Doc] = []
        for doc in stream:
            batch.append(doc)
            if len(batch) >= batch_size:
                yield from self._restore(batch, only)
                batch = []
        if batch:
            yield from self._restore(batch, only)

    def _restore(self, docs: list[Doc], only: list[int] | None = None) -> list[Doc]:
        from ..release.metadata import doc_metadata
        from ..restore.select import Plan, restore_targets

        c = self.cfg
        plans, flags = [], []
        for doc in docs:
            p, from_spans = self.plan(doc, only)
            plans.append(Plan() if p is None else p)
            flags.append(from_spans)
        backbone = self.backbone() if any(p.decode for p in plans) else None
        config = backbone.config.to_dict() if backbone is not None and hasattr(backbone, "config") else {}
        meta = doc_metadata(docs, config)  # doc._.region / doc._.century -> table rows
        ids = list(zip(meta.get("region", [None] * len(docs)), meta.get("century", [None] * len(docs)), strict=True))
        if c["scoring"] == "protocol":
            from ..restore.protocol import protocol_targets

            results = protocol_targets(backbone, [d.text for d in docs], plans, ids, c, from_spans=flags)
        else:
            if meta:
                plans = [_with_metadata(p, region, century) for p, (region, century) in zip(plans, ids, strict=True)]
            results, forwards = restore_targets(backbone, plans, c, from_spans=flags)
            self.forwards += forwards
        for doc, items in zip(docs, results, strict=True):
            doc._.restorations = items
            user_data: dict[Any, Any] = doc.user_data
            user_data[("stoicheia_restorer", "parse")] = (c["notation"], bool(c["strip_restorations"]))
        return docs

    # ------------------------------------------------------------ serialization
    def set_cfg(self, cfg: dict[str, Any]) -> None:
        """Settings read back (a stored ``encoder`` name of older pipelines is ignored; their
        ``window`` is the restoration ``context``)."""
        if "window" in cfg and "context" not in cfg:
            cfg = {**cfg, "context": cfg["window"]}
        self.cfg.update({k: v for k, v in cfg.items() if k in DEFAULT_CONFIG})
        self._check()

    def model_to_disk(self, folder: Path) -> None:
        """The overlay as ``overlay.safetensors`` (nothing without one)."""
        from ..restore.overlay import OVERLAY_NAME

        if self.overlay is not None:
            (folder / OVERLAY_NAME).write_bytes(self.model_to_bytes())

    def model_from_disk(self, folder: Path) -> None:
        from ..restore.overlay import OVERLAY_NAME

        self.set_overlay(folder / OVERLAY_NAME if (folder / OVERLAY_NAME).exists() else None)

    def model_to_bytes(self) -> bytes:
        from safetensors.torch import save

        if self.overlay is None:
            return b""
        tensors, meta = self.overlay
        return bytes(save({k: v.contiguous() for k, v in tensors.items()}, metadata=meta))

    def model_from_bytes(self, data: bytes) -> None:
        if not data:
            self.set_overlay(None)
            return
        import tempfile

        from ..restore.overlay import OVERLAY_NAME

        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / OVERLAY_NAME
            file.write_bytes(data)
            self.set_overlay(file)

    def initialize(self, get_examples: Callable[[], Iterable[Any]] | None = None, *,
                   nlp: Language | None = None) -> None:
        """Nothing to initialize: the restorer reuses the encoder's backbone and heads
        (an overlay comes from ``from_disk`` or :meth:`set_overlay`)."""



def _with_metadata(plan: Any, region: int | None, century: int | None) -> Any:
    """``plan`` whose queries carry the document's region / century rows."""
    from dataclasses import replace

    plan.decode = [replace(t, query=replace(t.query, region=region, century=century)) for t in plan.decode]
    return plan


def _spans_gapped(doc: Doc, spans: list[tuple[int, int]]) -> GappedText:
    """Hide the given character spans of ``doc.text``: each becomes a ``restored`` gap."""
    from ..restore.queries import hide_spans

    return hide_spans(doc.text, spans)
