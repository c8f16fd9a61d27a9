"""The restorer's settings: one validated, frozen object, registered as a config block.

``[components.stoicheia_restorer.settings]`` (``@misc = "stoicheia.RestorerSettings.v1"``)
holds every option of :class:`~stoicheia_spacy.restore.restorer.StoicheiaRestorer`;
spaCy fills the defaults and validates the types, :meth:`RestorerSettings.__post_init__`
the values. The pipe, the planner (:mod:`.select`) and the beam search read the fields of
this one object; a changed setting is a new object (:meth:`RestorerSettings.replace`).
Adding an option touches this class and the code that uses it, nothing else.

Options (defaults in brackets):

* search: ``beam_width`` [20] hypotheses, ``n_candidates`` [20] returned, ``context`` [512]
  letters a side, ``mode`` [any] (``confident``: unmask the most confident slot first),
  ``unmask`` [1] letters committed per forward, ``final_forward`` [true] (one more forward
  for the word breaks), ``space_ratio`` [0.25], ``elastic_slots`` [12], ``unknown_slots`` [5],
  ``approx_slack`` [2], ``unknown`` [enumerate | elastic], ``max_letters`` [10] and
  ``max_width`` [64] of a gap;
* scores: ``rank`` [total | mean], ``length_bonus`` [0], ``width_log_prior`` [] (one log
  prior per width), ``temperature`` [1] and per-width-bucket ``temperatures`` [{}]
  (calibrated on dev), ``abstain_below`` [0];
* which gaps: ``notation`` [leiden | ddbdp], ``spans_key`` [restore], ``gaps_key``
  [restore_gaps], ``strip_restorations`` [false];
* ``use_overlay`` [true]: restore with the fine-tuned overlay when one is loaded;
* ``scoring`` [beam | protocol]: our beam search, or the paper's strict protocol;
* ``dtype`` [float32 | bfloat16]: the weights the beam's forwards run in: ``float32``, the
  encoder's own (shared, no copy; set the encoder's ``precision`` for a faster forward);
  ``bfloat16``, a cached bf16 copy of the backbone (one more backbone in memory, 1.5-1.7x faster
  only on CPUs with AVX512-BF16, several times slower on AVX2-only CPUs; protocol scoring always
  runs the encoder's weights);
* ``confidence_slope`` [1.0], ``confidence_bias`` [0.0]: ``doc._.restorations[i].confidence``,
  the top candidate's calibrated chance of being right, is ``sigmoid(slope * logit(p) + bias)`` of
  its probability ``p`` among the candidates (Platt scaling fitted on dev by ``restore-eval``,
  :func:`.calibration.fit_confidence`); ``confidence_slopes`` / ``confidence_biases`` [{}] hold
  the pair per width bucket (as ``temperatures``), a bucket without its own pair uses those two;
* ``confident_above`` [0.6212]: ``doc._.restorations[i].confident`` is True when the top
  candidate's calibrated probability reaches it (fitted for 90 % precision on dev gaps by
  ``projects/restore``'s ``restore-eval``, :func:`.calibration.fit_threshold`; the embedded model's
  config sets its own, ``projects/restore/calibration_run10.json``);
* ``lm`` [null], ``lm_sha256`` [null], ``lm_weight`` [1.0]: a character n-gram LM (``.npz`` of
  :mod:`.ngram_lm`, built by ``make restore-lm``, loaded lazily, checked against ``lm_sha256`` when
  set) fused into the beam at ``lm_weight`` (:class:`.fusion.FusedScorer`; 1.0 fitted on dev for
  the embedded model). ``lm = null`` or ``lm_weight = 0``: the backbone alone. ``lm_rescore``
  [1.0]: with the LM fused, every finished candidate's score also gets ``lm_rescore`` × the LM's
  joint log-probability of the filled window (:class:`.ngram_lm.LMRescorer`; fitted on dev by
  ``restore-eval``); 0: none.
* ``kn_lm`` [null], ``kn_lm_sha256`` [null], ``kn_weights`` [{}], ``kn_beam`` [20], ``kn_far`` [10]:
  with ``kn_weights`` set, the restorer decodes with the bidirectional Kneser-Ney 8-gram
  (:mod:`.kneser_ney`; the file ``kn_lm`` names, else the pinned data package's ``kn_lm8.npz``):
  its own two-sided beam of ``kn_beam`` per direction, merged with the backbone's beam, every
  candidate scored by :func:`.combine.combine` with its width bucket's four weights
  ``[backbone, fwd, rev, length]`` (``default`` for other buckets; fitted on dev by
  ``restore-eval``'s ``combined`` arm). When no bucket weighs the backbone, its beam is skipped;
  the 7-gram settings (``lm_weight``, ``lm_rescore``) are then not used.
* ``domain`` [auto | papyrus | inscription | literary], ``kn_domain_weights`` [{}]: the
  combination weights of a domain (``{domain: {bucket: [backbone, fwd, rev, length]}}``, fitted on
  each domain's dev gaps by ``restore-eval``); a domain without its own uses ``kn_weights``.
  ``auto`` restores a Doc as ``doc._.domain`` when set (``restore_epidoc`` sets it from the TEI
  header), else as its text suggests (:mod:`.domain`).
* ``infgram_weights`` [{}]: per domain, per width bucket ``[a, b]`` of the parallels index's
  evidence (:mod:`.infgram`, Run 13): with the index installed (the ``parallels`` block's data
  package) every known-width gap of a domain listed here also gets the index's candidates (the
  letters between the longest matches of its context), and each candidate's combined score
  ``+ a · context letters matched + b · log(1 + documents)``; fitted on dev per domain.
* ``domain_sources`` [{}], ``domain_source_weights`` [{}] (Run 14): per domain, the folder of its
  own sources (:mod:`.domain_sources`: an 8-gram pair, a parallels index and the word list; a
  path, or a name under the data package's ``domains/``) and per width bucket the six weights
  ``[ifwd, irev, ictx, lidocs, oov, known]`` of their terms; a known-width gap of a domain listed in
  both (and in ``infgram_weights``) also takes their candidates and those terms; fitted on dev.
* ``domain_calibration`` [{}]: per domain, its own ``temperatures``, ``confidence_slopes`` /
  ``confidence_biases`` (per width bucket) and ``confident_above``, fitted on that domain's dev
  scores; a bucket or value a domain does not set is the global one.
  ``+ a · context letters matched + b · log(1 + documents)``; fitted on dev per domain. A hidden (``unknown``)
  or range (``range``) bucket named here also gets the index's candidates, of every width (Run 15).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from spacy.util import registry

from ..errors import ConfigError
from .domain import DOMAINS, check_domain

#: ``scoring``: our beam (``"beam"``) or the paper's strict protocol (``"protocol"``,
#: :mod:`stoicheia_spacy.restore.protocol`; the default of packaged released restoration checkpoints).
SCORINGS = ("beam", "protocol")
#: ``dtype``: the beam's weights (``"bfloat16"``: a cached bf16 copy; ``"float32"``: the encoder's own).
DTYPES = ("float32", "bfloat16")


@dataclasses.dataclass(frozen=True)
class RestorerSettings:
    """Every option of the restorer (see the module doc), validated once."""

    beam_width: int = 20
    n_candidates: int = 20
    context: int = 512
    mode: str = "any"
    unmask: int = 1
    final_forward: bool = True
    space_ratio: float = 0.25
    elastic_slots: int = 12
    unknown_slots: int = 5
    approx_slack: int = 2
    temperature: float = 1.0
    temperatures: Mapping[str, float] | None = None
    unknown: str = "enumerate"
    max_letters: int = 10
    max_width: int = 64
    rank: str = "total"
    length_bonus: float = 0.0
    width_log_prior: Sequence[float] = ()  # a tuple once validated
    abstain_below: float = 0.0
    notation: str = "leiden"
    spans_key: str = "restore"
    gaps_key: str = "restore_gaps"
    strip_restorations: bool = False
    use_overlay: bool = True
    scoring: str = "beam"
    dtype: str = "float32"
    confident_above: float = 0.6212
    confidence_slope: float = 1.0
    confidence_bias: float = 0.0
    confidence_slopes: Mapping[str, float] | None = None
    confidence_biases: Mapping[str, float] | None = None
    lm: str | None = None
    lm_sha256: str | None = None
    lm_weight: float = 1.0
    lm_rescore: float = 1.0
    kn_lm: str | None = None
    kn_lm_sha256: str | None = None
    kn_weights: Mapping[str, Sequence[float]] | None = None
    kn_beam: int = 20
    kn_far: int = 10
    domain: str = "auto"
    kn_domain_weights: Mapping[str, Mapping[str, Sequence[float]]] | None = None
    infgram_weights: Mapping[str, Mapping[str, Sequence[float]]] | None = None
    domain_sources: Mapping[str, str] | None = None
    domain_source_weights: Mapping[str, Mapping[str, Sequence[float]]] | None = None
    domain_calibration: Mapping[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        # frozen containers: the object never changes after validation
        object.__setattr__(self, "temperatures",
                           MappingProxyType({str(k): float(v) for k, v in dict(self.temperatures or {}).items()}))
        object.__setattr__(self, "width_log_prior", tuple(float(x) for x in self.width_log_prior or ()))
        weights = {str(k): tuple(float(x) for x in v) for k, v in dict(self.kn_weights or {}).items()}
        if any(len(w) != 4 or w[0] < 0 for w in weights.values()):
            raise ConfigError("kn_weights: four weights [backbone, fwd, rev, length] per bucket, backbone >= 0")
        object.__setattr__(self, "kn_weights", MappingProxyType(weights))
        check_domain(str(self.domain))
        per_domain = {str(d): {str(k): tuple(float(x) for x in v) for k, v in dict(table).items()}
                      for d, table in dict(self.kn_domain_weights or {}).items()}
        if set(per_domain) - set(DOMAINS) or any(len(w) != 4 or w[0] < 0 for t in per_domain.values()
                                                  for w in t.values()):
            raise ConfigError(f"kn_domain_weights: {{domain: {{bucket: [backbone, fwd, rev, length]}}}} with "
                              f"domains of {list(DOMAINS)} and backbone >= 0")
        object.__setattr__(self, "kn_domain_weights",
                           MappingProxyType({d: MappingProxyType(t) for d, t in per_domain.items()}))
        inf = {str(d): {str(k): tuple(float(x) for x in v) for k, v in dict(table).items()}
               for d, table in dict(self.infgram_weights or {}).items()}
        if set(inf) - set(DOMAINS) or any(len(w) != 2 or min(w) < 0 for t in inf.values() for w in t.values()):
            raise ConfigError(f"infgram_weights: {{domain: {{bucket: [a, b]}}}} with domains of {list(DOMAINS)} "
                              "and weights >= 0")
        object.__setattr__(self, "infgram_weights", MappingProxyType({d: MappingProxyType(t) for d, t in inf.items()}))
        sources = {str(d): str(v) for d, v in dict(self.domain_sources or {}).items()}
        dsw = {str(d): {str(k): tuple(float(x) for x in v) for k, v in dict(table).items()}
               for d, table in dict(self.domain_source_weights or {}).items()}
        if (set(sources) | set(dsw)) - set(DOMAINS) or any(len(w) != 6 for t in dsw.values() for w in t.values()):
            raise ConfigError(f"domain_sources: {{domain: folder}}, domain_source_weights: {{domain: {{bucket: "
                              f"[ifwd, irev, ictx, lidocs, oov, known]}}}} with domains of {list(DOMAINS)}")
        object.__setattr__(self, "domain_sources", MappingProxyType(sources))
        object.__setattr__(self, "domain_source_weights",
                           MappingProxyType({d: MappingProxyType(t) for d, t in dsw.items()}))
        object.__setattr__(self, "domain_calibration", MappingProxyType(
            {str(d): MappingProxyType(_calibration(str(d), t)) for d, t in dict(self.domain_calibration or {}).items()}))
        if int(self.kn_beam) < 1 or int(self.kn_far) < 0:
            raise ConfigError("kn_beam must be >= 1 and kn_far >= 0")
        for name in ("confidence_slopes", "confidence_biases"):
            object.__setattr__(self, name, MappingProxyType({str(k): float(v)
                                                             for k, v in dict(getattr(self, name) or {}).items()}))
        if self.mode not in ("any", "confident"):
            raise ConfigError(f"mode must be 'any' or 'confident', got {self.mode!r}")
        if int(self.beam_width) < 1 or int(self.n_candidates) < 1:
            raise ConfigError("beam_width and n_candidates must be >= 1")
        if int(self.unmask) < 1:
            raise ConfigError(f"unmask must be >= 1, got {self.unmask!r}")
        if int(self.context) < 1:
            raise ConfigError(f"context must be >= 1, got {self.context!r}")
        if not 0.0 <= float(self.abstain_below) <= 1.0:
            raise ConfigError("abstain_below must be in [0, 1]")
        if float(self.temperature) <= 0 or any(t <= 0 for t in (self.temperatures or {}).values()):
            raise ConfigError("temperature and temperatures must be > 0")
        if self.unknown not in ("enumerate", "elastic") or self.rank not in ("total", "mean"):
            raise ConfigError("unknown must be 'enumerate' or 'elastic', rank 'total' or 'mean'")
        if not 1 <= int(self.max_letters) <= int(self.max_width):
            raise ConfigError("need 1 <= max_letters <= max_width")
        if self.scoring not in SCORINGS:
            raise ConfigError(f"scoring must be one of {list(SCORINGS)}, got {self.scoring!r}")
        if self.dtype not in DTYPES:
            raise ConfigError(f"dtype must be one of {list(DTYPES)}, got {self.dtype!r}")
        if not 0.0 <= float(self.confident_above) <= 1.0:
            raise ConfigError("confident_above must be in [0, 1]")
        if set(self.confidence_slopes or {}) != set(self.confidence_biases or {}):
            raise ConfigError("confidence_slopes and confidence_biases must name the same width buckets")
        if float(self.lm_weight) < 0 or float(self.lm_rescore) < 0:
            raise ConfigError("lm_weight and lm_rescore must be >= 0")
        if self.notation not in ("leiden", "ddbdp"):
            raise ConfigError(f"notation must be 'leiden' or 'ddbdp', got {self.notation!r}")

    # ------------------------------------------------------------ construction
    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, strict: bool = True) -> RestorerSettings:
        """Settings from a mapping (a saved ``cfg``; older pipelines' ``window`` is ``context``;
        ``strict``: unknown names raise, else they are ignored)."""
        values = dict(values)
        if "window" in values and "context" not in values:
            values["context"] = values.pop("window")
        unknown = set(values) - set(cls.names())
        if unknown and strict:
            raise ConfigError(f"unknown stoicheia_restorer options: {sorted(unknown)}")
        return cls(**{k: v for k, v in values.items() if k in cls.names()})

    @classmethod
    def coerce(cls, value: RestorerSettings | Mapping[str, Any]) -> RestorerSettings:
        return value if isinstance(value, RestorerSettings) else cls.from_dict(value)

    def replace(self, **changes: Any) -> RestorerSettings:
        """A new validated object with ``changes`` (unknown names raise ``ConfigError``)."""
        unknown = set(changes) - set(self.names())
        if unknown:
            raise ConfigError(f"unknown stoicheia_restorer options: {sorted(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (what ``to_disk`` writes and the config block holds)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["temperatures"] = dict(self.temperatures or {})
        out["confidence_slopes"] = dict(self.confidence_slopes or {})
        out["confidence_biases"] = dict(self.confidence_biases or {})
        out["width_log_prior"] = list(self.width_log_prior)
        out["kn_weights"] = {k: list(v) for k, v in (self.kn_weights or {}).items()}
        out["kn_domain_weights"] = {d: {k: list(v) for k, v in t.items()}
                                    for d, t in (self.kn_domain_weights or {}).items()}
        out["infgram_weights"] = {d: {k: list(v) for k, v in t.items()} for d, t in (self.infgram_weights or {}).items()}
        out["domain_sources"] = dict(self.domain_sources or {})
        out["domain_calibration"] = {d: {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in t.items()}
                                     for d, t in (self.domain_calibration or {}).items()}
        out["domain_source_weights"] = {d: {k: list(v) for k, v in t.items()}
                                        for d, t in (self.domain_source_weights or {}).items()}
        return out

    # read-only mapping access (``settings["beam_width"]``) for code written against ``cfg``
    def __getitem__(self, name: str) -> Any:
        if name not in self.names():
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name) if name in self.names() else default

    def domain_weights(self, domain: str | None) -> Mapping[str, Sequence[float]]:
        """The combination weights per width bucket of ``domain``: its ``kn_domain_weights``,
        else ``kn_weights``."""
        return (self.kn_domain_weights or {}).get(str(domain), self.kn_weights or {})

    def temperatures_for(self, domain: str | None) -> dict[str, float]:
        """The temperature per width bucket (``default`` included) of ``domain``: its
        ``domain_calibration`` over the global ones."""
        temps = {"default": float(self.temperature), **dict(self.temperatures or {})}
        own = (self.domain_calibration or {}).get(str(domain), {}).get("temperatures", {})
        return {**temps, **dict(own)}

    def confident_above_for(self, domain: str | None) -> float:
        """``confident_above`` of ``domain`` (its own, else the global one)."""
        return float((self.domain_calibration or {}).get(str(domain), {}).get("confident_above", self.confident_above))

    def confidence_scaling(self, bucket: str, domain: str | None = None) -> tuple[float, float]:
        """The ``(slope, bias)`` of the top candidate's confidence for a width bucket
        (:func:`.beam.width_bucket`): ``domain``'s own pair for it, else the bucket's own pair,
        else the pooled one."""
        own = (self.domain_calibration or {}).get(str(domain), {})
        if bucket in own.get("confidence_slopes", {}):
            return float(own["confidence_slopes"][bucket]), float(own["confidence_biases"][bucket])
        slopes, biases = self.confidence_slopes or {}, self.confidence_biases or {}
        if bucket in slopes:
            return float(slopes[bucket]), float(biases[bucket])
        return float(self.confidence_slope), float(self.confidence_bias)


_CALIBRATION = ("temperatures", "confidence_slopes", "confidence_biases", "confident_above")


def _calibration(domain: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """One domain's ``domain_calibration`` entry, validated (plain floats)."""
    table = dict(table)
    if domain not in DOMAINS or set(table) - set(_CALIBRATION):
        raise ConfigError(f"domain_calibration: {{domain: {{{', '.join(_CALIBRATION)}}}}} with domains of "
                          f"{list(DOMAINS)}")
    out: dict[str, Any] = {k: {str(b): float(v) for b, v in dict(table.get(k) or {}).items()} for k in _CALIBRATION[:3]}
    if any(t <= 0 for t in out["temperatures"].values()) or set(out["confidence_slopes"]) != set(out["confidence_biases"]):
        raise ConfigError("domain_calibration: temperatures > 0, slopes and biases for the same buckets")
    if "confident_above" in table:
        out["confident_above"] = float(table["confident_above"])
        if not 0.0 <= out["confident_above"] <= 1.0:
            raise ConfigError("domain_calibration: confident_above must be in [0, 1]")
    return out


#: The ``[components.stoicheia_restorer.settings]`` block: the class itself, so that its
#: fields are the block's options (spaCy fills the defaults and checks the types).
restorer_settings = registry.misc.register("stoicheia.RestorerSettings.v1", func=RestorerSettings)


__all__ = ["DTYPES", "SCORINGS", "RestorerSettings", "restorer_settings"]
