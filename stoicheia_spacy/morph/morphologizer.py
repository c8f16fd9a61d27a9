"""``stoicheia_morphologizer``: UPOS and the 9-position AGDT tag from encoder word vectors.

One torch head (:class:`~stoicheia_spacy.heads.TokenHeads`) gives a UPOS softmax
and nine factored XPOS softmaxes (14, 4, 4, 8, 8, 5, 5, 6, 3 classes). The tag is the
attested training tag maximising the sum of position log-probabilities plus the UPOS
head's log-probability of the UPOS the tag maps to (joint decoding,
:func:`~stoicheia_spacy.morph.constrained.constrained_decode`); ``token.tag_`` is that
AGDT tag, ``token.pos_`` its UPOS (VERB/AUX and CCONJ/SCONJ chosen by the UPOS head) and
``token.morph`` the UD FEATS derived from the tag (:mod:`stoicheia_spacy.morph.agdt_to_ud`),
so the three always agree. Gold tags outside the AGDT
inventory and tokens without gold are left out of the loss.

``decode`` names the decoder: ``"joint"`` (the above, the default), or, for a released
tagger-parser checkpoint, ``"research"`` (the authors' evaluation: constrained XPOS over
the release's attested tags with its flat full-tag head, UPOS from its own head, the rule
fallback for tokens without a Greek letter) and ``"paper"`` (per-position XPOS argmax and
UPOS argmax, as the paper's tables scored), see
:mod:`stoicheia_spacy.morph.research_decode`. Those two read the release's ``vocab.json``
entries kept in ``data["release"]``. ``decode`` is a field of the settings block
``[components.stoicheia_morphologizer.settings]`` (:mod:`stoicheia_spacy.morph.settings`);
the attested tags and the release's tables are data (``data.json``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple, cast

import numpy as np
import torch
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..component import HeadPipe
from ..heads import TokenHeads
from ..tokenizer import is_gap_token, mark_gap, word_text, word_texts
from .agdt_tags import is_valid_tag, tags_to_ids
from .agdt_to_ud import agdt_to_feats, agdt_to_upos
from .constrained import constrained_decode, log_softmax, position_logprobs
from .formtable import FormTable, load_form_table
from .released import POS_TO_UPOS
from .research_decode import constrained_xpos, encodable_tokens, rule_fallback
from .settings import MorphologizerSettings
from .training import DEFAULT_TOKEN_HEADS_MODEL, grouped_softmax_loss
from .ud import MORPH_GROUPS, UPOS_TAGS, XPOS_ALPHABETS, XPOS_GROUPS

#: The morphologizer's own decoder (``decode`` setting); see the module doc for the others.
MORPH_DECODERS = MorphologizerSettings.OWN_DECODERS

DEFAULT_MORPH_MODEL = DEFAULT_TOKEN_HEADS_MODEL
#: ``tag_`` of a whitespace token (``pos_`` SPACE), as spaCy's own taggers write it.
SPACE_TAG = "_SP"
#: ``tag_`` of a numeral written in digits (``pos_`` NUM): AGDT's numeral
DIGITS_TAG = "m--------"

_UPOS_ID = {u: i for i, u in enumerate(UPOS_TAGS)}
#: Forms whose table candidates the morphologizer remembers before it starts afresh.
CANDIDATE_CACHE = 100_000


@registry.scorers("stoicheia.morph_scorer.v1")
def make_morph_scorer() -> Any:
    """Token accuracy of ``tag`` (AGDT), ``pos`` (UPOS) and ``morph`` (UFeats, + per feature)."""
    return score_morph


def _morph_key(token: Any, attr: str) -> Any:
    return getattr(token, attr).key


def score_morph(examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
    """spaCy scores ``tag_acc``, ``pos_acc``, ``morph_acc``, ``morph_per_feat``."""
    examples = list(examples)
    scores: dict[str, Any] = {}
    scores.update(Scorer.score_token_attr(examples, "tag", **kwargs))
    scores.update(Scorer.score_token_attr(examples, "pos", **kwargs))
    scores.update(Scorer.score_token_attr(examples, "morph", getter=_morph_key, **kwargs))
    scores.update(Scorer.score_token_attr_per_feat(examples, "morph", getter=_morph_key, **kwargs))
    return scores


@Language.factory(
    "stoicheia_morphologizer",
    assigns=["token.tag", "token.pos", "token.morph"],
    requires=["doc._.stoicheia"],
    default_config={"model": Config().from_str(DEFAULT_MORPH_MODEL)["model"], "settings": {"@misc": "stoicheia.MorphologizerSettings.v1"},
                    "scorer": {"@scorers": "stoicheia.morph_scorer.v1"}},
    default_score_weights={"tag_acc": 0.5, "pos_acc": 0.25, "morph_acc": 0.25, "morph_per_feat": None},
)
def make_stoicheia_morphologizer(nlp: Language, name: str, model: Model, settings: MorphologizerSettings,
                                 scorer: Any) -> StoicheiaMorphologizer:
    """Create the morphologizer (sizes and attested tags are set at ``initialize``); ``settings``:
    the ``[components.stoicheia_morphologizer.settings]`` block."""
    return StoicheiaMorphologizer(nlp.vocab, model, name, settings=settings, scorer=scorer).bind(nlp)



class TableCandidates(NamedTuple):
    """A form's analyses in the form table, scored (:meth:`StoicheiaMorphologizer.table_scores`)."""

    tags: list[str]  #: valid AGDT tags, the most frequent analysis first
    upos: list[str]  #: each tag's UPOS
    heads: np.ndarray  #: the heads' log-probability of each tag (XPOS positions + UPOS head)
    log_shares: np.ndarray  #: log of each tag's share of the form's analyses

class StoicheiaMorphologizer(HeadPipe):
    """UPOS + factored AGDT XPOS with constrained decoding (see the module doc)."""

    settings: MorphologizerSettings

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_morphologizer", *,
                 settings: MorphologizerSettings | None = None, scorer: Any = score_morph, **options: Any) -> None:
        base = settings if settings is not None else MorphologizerSettings()
        super().__init__(vocab, model, name, settings=base.replace(**options) if options else base, attested=[])
        self.scorer = scorer
        self._candidates: dict[str, Any] = {}  # form -> _table_candidates(), for _candidates_of
        self._candidates_of: FormTable | None = None

    @property
    def decode_mode(self) -> str:
        """The decoder (the ``decode`` setting)."""
        return self.settings.decode

    @property
    def labels(self) -> tuple[str, ...]:
        """The attested AGDT tags (the only tags this component predicts)."""
        return tuple(self.data["attested"])

    def make_module(self, n_in: int) -> torch.nn.Module:
        head = self._head_node()
        rel = self.data.get("release") or {}
        flat = len(rel.get("tags", [])) if rel.get("flat") else 0
        return TokenHeads(n_in, MORPH_GROUPS + ((flat,) if flat else ()), hidden=head.attrs["hidden_width"],
                          dropout=head.attrs["dropout"])

    def init_labels(self, examples: list[Example]) -> None:
        tags: set[str] = set()
        for eg in examples:
            tags.update(tok.tag_ for tok in eg.reference)
        self.data["attested"] = sorted(t for t in tags if is_valid_tag(t))

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> list[np.ndarray]:
        """Per-Doc logits ``(n_tokens, 17 + 57)``."""
        docs = list(docs)
        if not any(len(d) for d in docs):
            return [np.zeros((len(d), sum(MORPH_GROUPS)), dtype=np.float32) for d in docs]
        return [self.model.ops.to_numpy(x) for x in self.model.predict(docs)]

    def decode(self, logits: np.ndarray) -> tuple[list[str], list[str]]:
        """(UPOS, AGDT tag) per token of one Doc's logits, decoded jointly: the attested tag
        maximising its position log-probabilities plus the UPOS head's log-probability of
        the best UPOS the tag maps to (``agdt_to_upos``: one UPOS per part of speech, or
        VERB/AUX and CCONJ/SCONJ, which the mapping tells apart by lemma); that UPOS is
        ``pos_``. So ``pos_`` always agrees with ``tag_``."""
        n_upos = len(UPOS_TAGS)
        attested = self.data["attested"]
        if not len(logits):
            return [], []
        upos_lp = log_softmax(logits[:, :n_upos].astype(np.float64))
        lps = position_logprobs(logits[:, n_upos:], XPOS_GROUPS)
        if not attested:  # untrained: independent argmax per position and head
            from .agdt_tags import ids_to_tags

            tags = ids_to_tags(np.stack([lp.argmax(axis=1) for lp in lps], axis=1))
            return [UPOS_TAGS[i] for i in upos_lp.argmax(axis=1)], tags
        sets, which, tag_ids = _upos_sets(tuple(attested))
        # a tag's bonus: the best UPOS of its set; the tags share a few distinct sets
        per_set = np.stack([np.where(s, upos_lp, -np.inf).max(axis=1) for s in sets], axis=1)  # (N, R)
        best, _ = constrained_decode(lps, tag_ids, bonus=per_set[:, which])
        upos_ids = np.where(sets[which[best]], upos_lp, -np.inf).argmax(axis=1)
        return [UPOS_TAGS[i] for i in upos_ids], [attested[i] for i in best]

    def table_decode(self, logits: np.ndarray, forms: Sequence[str], table: FormTable | None,
                     prior: float | None = None) -> tuple[list[str], list[str]]:
        """:meth:`decode`, except that a form the ``table`` attests takes the table's tag
        (with its UPOS) that maximises its :meth:`table_scores` ``heads`` plus ``prior`` (default:
        the ``table_prior`` setting; the pipe passes the weight of the Doc's text domain,
        :meth:`~.settings.MorphologizerSettings.table_weight`) times its ``log_shares``."""
        if table is None or not len(logits):
            return self.decode(logits)
        scored = self.table_scores(logits, forms, table)
        # the joint decode only for the forms the table does not attest (each row is decoded on
        # its own, so leaving the others out changes none of these)
        rest = [i for i, got in enumerate(scored) if got is None]
        upos, tags = [""] * len(logits), [""] * len(logits)
        if rest:
            got_upos, got_tags = self.decode(np.asarray(logits)[rest])
            for i, u, t in zip(rest, got_upos, got_tags, strict=True):
                upos[i], tags[i] = u, t
        prior = self.settings.table_prior if prior is None else prior
        for i, got in enumerate(scored):
            if got is not None:
                k = int(np.argmax(got.heads + prior * got.log_shares))  # the first best
                upos[i], tags[i] = got.upos[k], got.tags[k]
        return upos, tags

    def table_scores(self, logits: np.ndarray, forms: Sequence[str], table: FormTable) -> list[TableCandidates | None]:
        """Per word, the ``table``'s valid tags of its form (None where it has none) with the heads'
        log-probability of each (the XPOS positions' plus the UPOS head's) and the log of each
        tag's share of the form's analyses: what :meth:`table_decode` chooses from."""
        out: list[TableCandidates | None] = [None] * len(forms)
        found = [(i, got) for i, got in enumerate(self._table_candidates(table, form) for form in forms)
                 if got is not None]
        if not found:
            return out
        n_upos = len(UPOS_TAGS)
        upos_lp = log_softmax(logits[:, :n_upos].astype(np.float64))
        lps = position_logprobs(logits[:, n_upos:], XPOS_GROUPS)
        # every attested form's candidates scored at once (the same sums, in the same order, as
        # one form at a time)
        sizes = np.array([len(got[0]) for _, got in found])
        row = np.repeat(np.array([i for i, _ in found]), sizes)
        ids = np.concatenate([got[1] for _, got in found])
        score = np.zeros(len(row))
        for p, lp in enumerate(lps):
            score = score + lp[row, ids[:, p]]
        score = score + upos_lp[row, np.concatenate([got[3] for _, got in found]).astype(np.int64)]
        for (i, (cands, _, cand_upos, _, shares)), heads in zip(found, np.split(score, np.cumsum(sizes)[:-1]),
                                                                   strict=True):
            out[i] = TableCandidates(cands, cand_upos, heads, shares)
        return out

    def _table_candidates(self, table: FormTable, form: str) -> tuple[list[str], np.ndarray, list[str], list[int],
                                                                      np.ndarray] | None:
        """What :meth:`table_decode` reads of the table for ``form``: its valid tags (most frequent
        analysis first), their class ids, UPOS and UPOS ids, and the log of each tag's share of the
        form's analyses; None when the table has no valid tag for it. Remembered per form and table."""
        if self._candidates_of is not table or len(self._candidates) > CANDIDATE_CACHE:
            self._candidates, self._candidates_of = {}, table
        if form in self._candidates:
            return self._candidates[form]
        counts: dict[str, tuple[int, str]] = {}
        for lemma, tag, n in table.analyses(form):
            if is_valid_tag(tag):  # most frequent analysis first: its lemma names the tag's UPOS
                counts[tag] = (counts[tag][0] + n, counts[tag][1]) if tag in counts else (n, lemma)
        found = None
        if counts:
            cands = list(counts)
            total = sum(n for n, _ in counts.values())
            cand_upos = [agdt_to_upos(t, counts[t][1]) for t in cands]
            found = (cands, tags_to_ids(cands), cand_upos, [_UPOS_ID.get(u, _UPOS_ID["X"]) for u in cand_upos],
                     np.log([counts[t][0] / total for t in cands]))
        self._candidates[form] = found
        return found

    def release_decode(self, doc: Doc, logits: np.ndarray) -> tuple[list[str], list[str]]:
        """(UPOS, tag) per token with the ``research`` or ``paper`` decoder (module doc)."""
        rel = self.data["release"]
        n_upos, n_morph = len(UPOS_TAGS), sum(MORPH_GROUPS)
        width = n_morph + (len(rel["tags"]) if rel.get("flat") else 0)
        if not len(doc):
            return [], []
        if logits.shape[1] < width:  # no letter in the batch: every token takes the rules below
            logits = np.pad(logits, ((0, 0), (0, width - logits.shape[1])))
        upos = [UPOS_TAGS[i] for i in logits[:, :n_upos].argmax(axis=1)] if len(logits) else []
        # the release's own class order per position (ties go to its first class)
        cols, start = [], n_upos
        for alpha, ours in zip(rel["xpos_alpha"], XPOS_ALPHABETS, strict=True):
            cols.append([start + ours.index(ch) for ch in alpha])
            start += len(ours)
        positions = [logits[:, c] for c in cols]
        if self.decode_mode == "paper":
            tags = ["".join(alpha[int(lg[i].argmax())] for alpha, lg in zip(rel["xpos_alpha"], positions, strict=True))
                    for i in range(len(logits))]
        else:
            attested = rel["tags"]
            tag_ids = np.array([[alpha.index(ch) for alpha, ch in zip(rel["xpos_alpha"], t, strict=True)]
                                for t in attested])
            flat = logits[:, n_morph:n_morph + len(attested)] if rel.get("flat") else None
            best = constrained_xpos(positions, tag_ids, flat)
            tags = [attested[int(i)] for i in best]
        words = encodable_tokens(doc)
        for i, tok in enumerate(doc):
            if not words[i]:
                _, pos, tag = rule_fallback(word_text(tok), rel.get("nongreek", {}), {},
                                            rel.get("fallback_upos", "u"), rel.get("fallback_xpos", "u--------"))
                upos[i], tags[i] = POS_TO_UPOS.get(pos, pos if pos in UPOS_TAGS else "X"), tag
        return upos, tags

    def set_annotations(self, docs: Iterable[Doc], scores: Sequence[np.ndarray]) -> None:
        """Write ``tag_``, ``pos_`` and ``morph`` (UD FEATS of the tag); a whitespace token
        gets spaCy's ``_SP`` and ``SPACE`` (:data:`SPACE_TAG`) and no morphology, a numeral in
        digits AGDT's numeral tag and NUM (:data:`DIGITS_TAG`)."""
        for doc, logits in zip(docs, scores, strict=True):
            if self.decode_mode in ("research", "paper"):
                upos, tags = self.release_decode(doc, np.asarray(logits))
            else:
                table = load_form_table() if self.settings.form_table else None
                upos, tags = self.table_decode(np.asarray(logits)[:, :sum(MORPH_GROUPS)], word_texts(doc), table,
                                               prior=self.settings.table_weight(doc) if table is not None else None)
            for tok, u, t in zip(doc, upos, tags, strict=True):
                if tok.is_space:  # a line break between verses: spaCy's whitespace tag, no analysis
                    tok.tag_, tok.pos_ = SPACE_TAG, "SPACE"
                    cast(Any, tok).set_morph(None)
                    continue
                if tok.is_digit:  # a numeral in digits (a year, a line number): no treebank has one
                    u, t = "NUM", DIGITS_TAG
                tok.tag_ = t
                tok.pos_ = u
                feats = agdt_to_feats(t) if len(t) == 9 else "_"
                cast(Any, tok).set_morph("" if feats == "_" else feats)
                if is_gap_token(tok.text):
                    mark_gap(tok)

    # ------------------------------------------------------------- training
    def get_loss(self, examples: Iterable[Example], scores: Sequence[Any]) -> tuple[float, list[Any]]:
        """Cross-entropy of the UPOS group and the nine XPOS groups (mean per token)."""
        examples = list(examples)
        validate_examples(examples, "StoicheiaMorphologizer.get_loss")
        golds = []
        for eg in examples:
            tags = eg.get_aligned("TAG", as_string=True)
            pos = eg.get_aligned("POS", as_string=True)
            gold = np.full((len(tags), len(MORPH_GROUPS)), -1, dtype=np.int64)
            valid = [i for i, t in enumerate(tags) if t and is_valid_tag(t)]
            if valid:
                gold[valid, 1:] = tags_to_ids([tags[i] for i in valid])
            gold[:, 0] = [_UPOS_ID.get(p or "", -1) for p in pos]
            golds.append(gold)
        flat = np.concatenate([self.model.ops.to_numpy(s) for s in scores]) if scores else np.zeros((0, 74))
        n_morph = sum(MORPH_GROUPS)  # a release's flat-tag rows (after these) are not trained here
        loss, d_morph = grouped_softmax_loss(flat[:, :n_morph], np.concatenate(golds), MORPH_GROUPS)
        d = np.zeros(flat.shape, dtype=np.asarray(d_morph).dtype)
        d[:, :n_morph] = d_morph
        bounds = np.cumsum([0] + [len(s) for s in scores])
        return loss, [self.model.ops.asarray2f(cast(Any, d[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@lru_cache(maxsize=4)
def _upos_compatibility(tags: tuple[str, ...]) -> np.ndarray:
    """``(M, U)``: the UPOS values each AGDT tag can map to (see ``decode``)."""
    alternatives = {"VERB": ("AUX",), "CCONJ": ("SCONJ",)}
    out = np.zeros((len(tags), len(UPOS_TAGS)), dtype=bool)
    index = {u: i for i, u in enumerate(UPOS_TAGS)}
    for m, tag in enumerate(tags):
        base = agdt_to_upos(tag)
        for u in (base, *alternatives.get(base, ())):
            out[m, index[u]] = True
    return out



@lru_cache(maxsize=4)
def _upos_sets(tags: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(R, U)`` distinct rows of :func:`_upos_compatibility`, ``(M,)`` each tag's row and
    ``(M, 9)`` the tags' class ids (built once per tag set, not per Doc)."""
    sets, which = np.unique(_upos_compatibility(tags), axis=0, return_inverse=True)
    return sets, which.reshape(-1), tags_to_ids(list(tags))
