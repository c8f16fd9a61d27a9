"""The morphosyntax components' settings: one validated, frozen object each, registered as a config block.

``[components.stoicheia_morphologizer.settings]`` (``@misc = "stoicheia.MorphologizerSettings.v1"``),
``[components.stoicheia_lemmatizer.settings]`` (``stoicheia.LemmatizerSettings.v1``) and
``[components.stoicheia_parser.settings]`` (``stoicheia.ParserSettings.v1``) hold every
non-model option of those components; spaCy fills the defaults and checks the types,
``__post_init__`` the values. The pipe reads the fields of this one object; a changed
setting is a new object (``replace``, or the pipe's ``configure``). Saved pipelines keep
their settings in ``config.cfg`` only; the components' data (attested tags, edit scripts,
lexicon, relations, a release's tables) are files of their folders.
Adding an option touches this class and the code that uses it, nothing else.

Options (defaults in brackets):

* every component: ``decode``, its own decoder [morphologizer ``joint``, lemmatizer
  ``topk_lexicon``, parser ``mst_single_root``] or, for a released tagger-parser
  checkpoint, ``research`` | ``paper`` (:mod:`stoicheia_spacy.morph.research_decode`);
* morphologizer: ``form_table`` [false] (a form the lexicon data package's form table attests
  takes one of the table's tags for it, chosen by the heads' scores plus a weight times the log of
  the tag's share of the form's analyses: ``table_prior`` [12], or for a papyrus
  ``table_prior_papyrus`` [12]; ``domain`` [auto | papyrus | inscription | literary]: whose weight,
  with ``auto`` that of ``doc._.domain``, which ``restore_epidoc`` sets from a TEI header; a Doc
  without one takes ``table_prior``. Each weight is the one of 0 … 64 furthest from losing to the
  lookup baseline (mean of UPOS and XPOS accuracy; UPOS alone on UD PROIEL, whose XPOS are
  PROIEL's) on its domain's dev splits: AGDT fold-0 dev and UD PROIEL dev jointly for
  ``table_prior``, PapyGreek dev for the papyri, ``projects/parse/metrics/lookup_weight_fit.json``.
  Weight 0 was best on AGDT dev alone (UPOS / XPOS 93.79 / 83.50; 92.29 / 78.55 at 12) but lost
  to the lookup on UD PROIEL dev (UPOS 85.92 against 87.77; 87.94 at 12), whose conventions (καί
  mostly CCONJ, numerals NUM, demonstratives PRON) are the table's, not AGDT's;
  :mod:`stoicheia_spacy.morph.formtable`);
* lemmatizer: ``min_count`` [1] (scripts seen fewer times at ``initialize`` are dropped),
  ``use_lexicon`` [true] (the first of the ``top_k`` best scripts whose lemma is attested,
  else a flagged back-off), ``top_k`` [50] (50 rather than 5: on UD Perseus test fewer lemmas
  back off and more are right, ``projects/parse/lemma_attestation.json``), ``max_drop`` [6]
  (nats: a script scoring more than this below the best fitting one is not taken for its
  attested lemma; on UD Perseus dev 6 costs 0.07 points of lemma accuracy against no limit and
  flags 43 more tokens instead of guessing a distant lemma), ``prefer_form`` [1] (nats: the
  lower-cased form, when it is an attested lemma, wins over a better-scored attested lemma
  this close to the best script: +0.10 points on UD Perseus dev; ``Ἐν`` is ``ἐν``, not ``εἰς``),
  ``form_table`` [false] (a form the lexicon data package's form table attests takes a lemma
  the table gives it, scored by the scripts plus a weight times the log of its share:
  ``table_prior`` [2], for a papyrus ``table_prior_papyrus`` [1], ``domain`` as the
  morphologizer's; the best of 0 … 16 on the same dev splits, fold-0 dev 91.40 -> 91.44 against 4,
  PapyGreek dev 91.44 -> 91.63; :mod:`stoicheia_spacy.morph.formtable`), ``table_lexicon`` [true]
  (with ``form_table``, a form the table does not attest may also take any lemma the table gives
  some other form, or an LSJ headword the table ships, rather than back off to the flagged form:
  ``projects/parse/metrics/headwords_dev.json``; out-of-vocabulary lemma accuracy on
  the dev splits in ``projects/parse/metrics/lookup_weight_fit.json``, ``shipped`` row against
  ``lemmas_w*``);
* parser: ``tree_prior`` / ``tree_prior_labels`` [0 / 0] and for a papyrus ``tree_prior_papyrus`` /
  ``tree_prior_labels_papyrus`` [0 / 0], ``domain`` as the morphologizer's: the weights of the
  parser's tree prior (:mod:`stoicheia_spacy.morph.tree_prior`, ``tree_prior.npz`` in its folder)
  on the arc and relation scores, from the tags and lemmas the morphologizer and lemmatizer wrote; 0 or no prior file: the
  parser's scores alone; ``max_words`` [160], the longest sentence parsed as one tree: a longer one (a page
  without punctuation, a papyrus line run on) is cut into near-equal pieces of at most that
  many tokens, each its own tree, so that arc scoring and the maximum spanning tree (cubic in
  the sentence's length) stay linear in the document's length (the longest sentence of UD
  Perseus and PROIEL dev/test has 120 words); ``scheme`` [``agdt``]: the relations and tree
  written, ``agdt`` (the heads' own AGDT 2.1 relations, function words as heads) or ``ud``
  (the same parse rewritten to Universal Dependencies by
  :mod:`stoicheia_spacy.morph.agdt_ud_tree`: content words head, ``case``/``mark``/``cop``/
  ``cc``/``conj``, UD relations learnt on UD Perseus dev; own decoder only). UPOS and FEATS are
  UD in both schemes (:mod:`stoicheia_spacy.morph.agdt_to_ud`), XPOS the AGDT tag (as in UD Perseus).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from spacy.tokens import Doc
from spacy.util import registry

from ..errors import ConfigError
from ..restore.domain import AUTO, check_domain

#: Form-table weights of a papyrus (a documentary text), fitted on PapyGreek dev
#: (``projects/parse/metrics/lookup_weight_fit.json``); other texts take ``table_prior``.
TAG_PRIOR_PAPYRUS = 12.0
#: The morphologizer's form-table weight of any other text, fitted on AGDT fold-0 dev and UD PROIEL
#: dev jointly (the same file): the weight whose worst margin over the lookup baseline is largest.
TAG_PRIOR = 0.0
LEMMA_PRIOR_PAPYRUS = 1.0
#: The decoders of a released tagger-parser checkpoint (every component takes them).
RELEASE_DECODERS = ("research", "paper")
#: The parser's annotation schemes (``scheme`` setting): the heads' own AGDT trees, or UD.
SCHEMES = ("agdt", "ud")

_S = TypeVar("_S", bound="_MorphSettings")


@dataclasses.dataclass(frozen=True)
class _MorphSettings:
    """What the three settings classes share: the ``decode`` check and the mapping helpers."""

    COMPONENT: ClassVar[str] = ""
    OWN_DECODERS: ClassVar[tuple[str, ...]] = ()

    decode: str = ""

    def __post_init__(self) -> None:
        allowed = (*self.OWN_DECODERS, *RELEASE_DECODERS)
        if self.decode not in allowed:
            raise ConfigError(f"{self.COMPONENT} decode must be one of {list(allowed)}, got {self.decode!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls: type[_S], values: Mapping[str, Any], *, strict: bool = True) -> _S:
        """Settings from a mapping (``strict``: unknown names raise, else they are ignored)."""
        unknown = set(values) - set(cls.names())
        if unknown and strict:
            raise ConfigError(f"unknown {cls.COMPONENT} options: {sorted(unknown)}; choose from {list(cls.names())}")
        return cls(**{k: v for k, v in values.items() if k in cls.names()})

    def replace(self: _S, **changes: Any) -> _S:
        """A new validated object with ``changes`` (unknown names raise ``ConfigError``)."""
        unknown = set(changes) - set(self.names())
        if unknown:
            raise ConfigError(f"unknown {self.COMPONENT} options: {sorted(unknown)}; choose from {list(self.names())}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (what the config block holds)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _check_table_options(settings: Any, names: tuple[str, ...] = ("table_prior", "table_prior_papyrus")) -> None:
    """The weights ``names`` numbers >= 0, ``domain`` auto or a domain."""
    for name in names:
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ConfigError(f"{settings.COMPONENT} {name} must be a number >= 0, got {value!r}")
    try:
        check_domain(str(settings.domain))
    except ConfigError as err:
        raise ConfigError(f"{settings.COMPONENT} {err}") from err


class _TableWeights:
    """The form-table weight of a Doc's text domain: ``table_prior_papyrus`` for a papyrus,
    ``table_prior`` for any other text or an unknown one."""

    table_prior: float
    table_prior_papyrus: float
    domain: str

    def table_weight(self, doc: Doc | None = None) -> float:
        """The weight of the ``domain`` setting's domain, or with ``auto`` of ``doc._.domain``
        (set by ``restore_epidoc`` from a TEI header, or by the caller; the text itself is not
        read: :func:`~stoicheia_spacy.restore.domain.text_domain` reads most literary sentences
        of the treebanks as papyri)."""
        domain = self.domain if self.domain != AUTO else (doc._.domain if doc is not None else None)
        return float(self.table_prior_papyrus if domain == "papyrus" else self.table_prior)


@dataclasses.dataclass(frozen=True)
class MorphologizerSettings(_TableWeights, _MorphSettings):
    """Every option of ``stoicheia_morphologizer`` (see the module doc), validated once."""

    COMPONENT: ClassVar[str] = "stoicheia_morphologizer"
    OWN_DECODERS: ClassVar[tuple[str, ...]] = ("joint",)

    decode: str = "joint"
    form_table: bool = False
    table_prior: float = TAG_PRIOR
    table_prior_papyrus: float = TAG_PRIOR_PAPYRUS
    domain: str = AUTO

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.form_table, bool):
            raise ConfigError(f"{self.COMPONENT} form_table must be true or false, got {self.form_table!r}")
        _check_table_options(self)


#: The lemma of a word no attested script explains (``backoff``): the word itself (``"form"``) or
#: what the best script that fits it makes of it (``"script"``); flagged either way.
BACKOFFS = ("form", "script")


@dataclasses.dataclass(frozen=True)
class LemmatizerSettings(_TableWeights, _MorphSettings):
    """Every option of ``stoicheia_lemmatizer`` (see the module doc), validated once."""

    COMPONENT: ClassVar[str] = "stoicheia_lemmatizer"
    OWN_DECODERS: ClassVar[tuple[str, ...]] = ("topk_lexicon",)

    decode: str = "topk_lexicon"
    min_count: int = 1
    use_lexicon: bool = True
    top_k: int = 50
    max_drop: float = 6.0
    prefer_form: float = 1.0
    backoff: str = "form"
    form_table: bool = False
    table_lexicon: bool = True
    table_prior: float = 2.0
    table_prior_papyrus: float = LEMMA_PRIOR_PAPYRUS
    domain: str = AUTO

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("use_lexicon", "form_table", "table_lexicon"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{self.COMPONENT} {name} must be true or false, got {getattr(self, name)!r}")
        _check_table_options(self)
        for name in ("max_drop", "prefer_form"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ConfigError(f"{self.COMPONENT} {name} must be a number >= 0, got {value!r}")
        for name in ("min_count", "top_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{self.COMPONENT} {name} must be an integer >= 1, got {value!r}")
        if self.backoff not in BACKOFFS:
            raise ConfigError(f"{self.COMPONENT} backoff must be one of {list(BACKOFFS)}, got {self.backoff!r}")


@dataclasses.dataclass(frozen=True)
class ParserSettings(_MorphSettings):
    """Every option of ``stoicheia_parser`` (see the module doc), validated once."""

    COMPONENT: ClassVar[str] = "stoicheia_parser"
    OWN_DECODERS: ClassVar[tuple[str, ...]] = ("mst_single_root",)

    decode: str = "mst_single_root"
    max_words: int = 160
    scheme: str = "agdt"
    tree_prior: float = 0.0
    tree_prior_labels: float = 0.0
    tree_prior_papyrus: float = 0.0
    tree_prior_labels_papyrus: float = 0.0
    domain: str = AUTO

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_table_options(self, ("tree_prior", "tree_prior_labels", "tree_prior_papyrus", "tree_prior_labels_papyrus"))
        if self.scheme not in SCHEMES:
            raise ConfigError(f"{self.COMPONENT} scheme must be one of {list(SCHEMES)}, got {self.scheme!r}")
        if self.scheme == "ud" and self.decode in RELEASE_DECODERS:
            raise ConfigError(f"{self.COMPONENT} scheme 'ud' needs the own decoder {self.OWN_DECODERS[0]!r}, "
                              f"not {self.decode!r}")
        if isinstance(self.max_words, bool) or not isinstance(self.max_words, int) or self.max_words < 2:
            raise ConfigError(f"{self.COMPONENT} max_words must be an integer >= 2, got {self.max_words!r}")

    def tree_prior_weights(self, doc: Doc | None = None) -> tuple[float, float]:
        """The tree prior's (arc, relation) weights for ``doc``: the papyrus pair for a Doc of the
        ``domain`` setting's domain, or with ``auto`` of ``doc._.domain``, ``papyrus``; else the other."""
        domain = self.domain if self.domain != AUTO else (doc._.domain if doc is not None else None)
        if domain == "papyrus":
            return float(self.tree_prior_papyrus), float(self.tree_prior_labels_papyrus)
        return float(self.tree_prior), float(self.tree_prior_labels)


#: The config blocks ``[components.NAME.settings]`` of the three components.
morphologizer_settings = registry.misc.register("stoicheia.MorphologizerSettings.v1", func=MorphologizerSettings)
lemmatizer_settings = registry.misc.register("stoicheia.LemmatizerSettings.v1", func=LemmatizerSettings)
parser_settings = registry.misc.register("stoicheia.ParserSettings.v1", func=ParserSettings)

__all__ = ["BACKOFFS", "RELEASE_DECODERS", "SCHEMES", "LemmatizerSettings", "MorphologizerSettings", "ParserSettings",
           "lemmatizer_settings", "morphologizer_settings", "parser_settings"]
