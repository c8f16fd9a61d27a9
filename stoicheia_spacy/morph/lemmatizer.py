"""``stoicheia_lemmatizer``: lemmas as edit scripts classified from encoder word vectors.

The script vocabulary (:mod:`stoicheia_spacy.morph.lemma_scripts`: prefix/suffix
cuts and additions plus a case field) is built from the training pairs at
``initialize`` (scripts seen at least ``min_count`` times); a torch head scores every
script per token. Case: a script's ``cap`` field lower-cases the form before editing
and title-cases the lemma where the training lemma was (proper names), so ``Ἀχιλῆος``
gives ``Ἀχιλλεύς``-style capitalised lemmas and sentence-initial capitals are dropped.
Lexicon rescoring (``use_lexicon``): among the ``top_k`` best scripts that fit the
form and score at most ``max_drop`` below the best of them, the first whose lemma is
*attested* (in the lexicon: the training treebanks' lemmas, plus any given to
``initialize(lexicon=...)``) wins, unless the lower-cased form is itself an attested lemma
that a script within ``prefer_form`` nats of the best gives (``Ἐν`` is ``ἐν``, not ``εἰς``). With none attested the
lemmatizer backs off (:func:`backoff_lemma`): the form itself when, lower-cased, it is an
attested lemma, else the form as a citation form (a final grave written acute) with
``token._.lemma_backoff`` set to True, so an edit script never invents a lemma that no
treebank has (``πλάγχθη`` was ``πλάγχξ``); with ``backoff = "script"`` a flagged word takes
the best fitting script's lemma instead (an unattested guess, still flagged: right more often than
the form itself on out-of-vocabulary words, ``projects/parse/metrics/lemma_backoff_dev.json``).
A script that cuts more than the form has is never chosen, and a token with no letter
(punctuation, a line break between verses, digits) is its own lemma (:func:`has_letter`;
scripts had made ``ἕ`` of a line break and ``ά`` of ``|``). Without ``use_lexicon`` the best fitting script wins, as before.
With ``form_table`` (the lexicon data package's form -> (lemma, XPOS) table,
:mod:`stoicheia_spacy.morph.formtable`), a form the table attests takes one of the lemmas the
table gives it, scored by the head's scripts and, with weight ``table_prior``, by the lemma's
share of the form's analyses (:meth:`StoicheiaLemmatizer.lemmatize_flagged`); an unattested
form is decoded as above (the back-off), and with ``table_lexicon`` every lemma the table gives
any form, and every dictionary headword it ships (LSJ's), counts as attested there too (a lemma of
the open lexicons, never an invented one;
out-of-vocabulary lemma accuracy on the dev splits: ``lemma_oov`` of the ``shipped`` row against
the ``lemmas_w*`` rows in ``projects/parse/metrics/lookup_weight_fit.json``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
import torch
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc, Token
from spacy.training import Example, validate_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..component import HeadPipe
from ..heads import TokenHeads
from ..tokenizer import GAP_LEMMA, is_gap_token, word_texts
from .formtable import FormTable, load_form_table
from .lemma_scripts import EditScript, apply_script, build_script_vocab, derive_script
from .research_decode import encodable_tokens, paper_lemma, research_lemma, rule_fallback
from .settings import LemmatizerSettings
from .training import DEFAULT_TOKEN_HEADS_MODEL, grouped_softmax_loss

#: Forms ranked at once by :meth:`StoicheiaLemmatizer.lemmatize_flagged` (bounds its working memory).
BLOCK = 512
#: Most (form, script) lemmas :meth:`StoicheiaLemmatizer._applied_cache` holds before it starts afresh.
APPLIED_CACHE = 200_000
#: The lemmatizer's own decoder (``decode`` setting); see the module doc for the others.
LEMMA_DECODERS = LemmatizerSettings.OWN_DECODERS

DEFAULT_LEMMA_MODEL = DEFAULT_TOKEN_HEADS_MODEL

#: True on a token whose lemma is the back-off of :func:`backoff_lemma` (no attested candidate).
if not Token.has_extension("lemma_backoff"):
    Token.set_extension("lemma_backoff", default=False)

_GRAVE, _ACUTE = "\u0300", "\u0301"
#: A letter of any script (a word character that is not a digit or ``_``).
_LETTER = re.compile(r"[^\W\d_]")


def has_letter(form: str) -> bool:
    """Whether ``form`` has a letter; a token without one (punctuation, a line break, a
    numeral in digits) is its own lemma, whatever the scripts or the form table say."""
    return _LETTER.search(form) is not None


class ScriptLogits:
    """A Doc's script logits, computed from its token vectors by the lemmatizer's head on demand:
    :meth:`rows` a block of tokens at a time, ``np.asarray`` all of them."""

    def __init__(self, head: Model, vectors: Any) -> None:
        self.head = head
        self.vectors = vectors
        self.shape = (len(vectors), int(head.layers[0].shims[0]._model.out.out_features))

    def __len__(self) -> int:
        return self.shape[0]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """The logits of tokens ``start:stop``."""
        ops = self.head.ops
        return cast(np.ndarray, ops.to_numpy(self.head.predict(ops.asarray2f(self.vectors[start:stop]))))

    def rows_at(self, index: np.ndarray) -> np.ndarray:
        """The logits of the tokens at ``index``."""
        ops = self.head.ops
        return cast(np.ndarray, ops.to_numpy(self.head.predict(ops.asarray2f(self.vectors[index]))))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.rows(0, self.shape[0])
        return out if dtype is None else out.astype(dtype, copy=False)


class TableLogits(ScriptLogits):
    """A Doc's script logits computed only for the tokens the form table does not decide
    (``needed``; :meth:`StoicheiaLemmatizer.table_lemma`), in one head forward per batch;
    ``np.asarray`` computes the others too."""

    def __init__(self, head: Model, vectors: Any, decided: list[str | None], rows: np.ndarray) -> None:
        super().__init__(head, vectors)
        self.decided, self.computed = decided, rows  # the table's lemma per token, or None
        self.needed = np.array([lemma is None for lemma in decided], dtype=bool)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.empty(self.shape, dtype=np.float32)
        out[self.needed] = self.computed
        if not self.needed.all():
            out[~self.needed] = self.rows_at(np.flatnonzero(~self.needed))
        return out if dtype is None else out.astype(dtype, copy=False)


def backoff_lemma(form: str, lexicon: frozenset[str]) -> tuple[str, bool]:
    """The lemma of a form no attested script explains, and whether it is a flagged back-off:
    the lower-cased form when that is an attested lemma (``Ἐν`` -> ``ἐν``), else the form with a
    grave written acute (``πολλὰ`` -> ``πολλά``), flagged; a form without letters is its own lemma."""
    lower = form.lower()
    if not any(ch.isalpha() for ch in form):
        return form, False
    if lower in lexicon:
        return lower, False
    if form in lexicon:
        return form, False
    nfd = unicodedata.normalize("NFD", form)
    return (unicodedata.normalize("NFC", nfd.replace(_GRAVE, _ACUTE)) if _GRAVE in nfd else form), True


@registry.scorers("stoicheia.lemma_scorer.v1")
def make_lemma_scorer() -> Any:
    """Token accuracy of ``lemma``."""
    return score_lemma


def score_lemma(examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
    """spaCy score ``lemma_acc``."""
    return Scorer.score_token_attr(list(examples), "lemma", **kwargs)


@Language.factory(
    "stoicheia_lemmatizer",
    assigns=["token.lemma"],
    requires=["doc._.stoicheia", "token.tag"],
    default_config={"model": Config().from_str(DEFAULT_LEMMA_MODEL)["model"],
                    "settings": {"@misc": "stoicheia.LemmatizerSettings.v1"},
                    "scorer": {"@scorers": "stoicheia.lemma_scorer.v1"}},
    default_score_weights={"lemma_acc": 1.0},
)
def make_stoicheia_lemmatizer(nlp: Language, name: str, model: Model, settings: LemmatizerSettings,
                              scorer: Any) -> StoicheiaLemmatizer:
    """Create the edit-script lemmatizer (script vocabulary built at ``initialize``); ``settings``:
    the ``[components.stoicheia_lemmatizer.settings]`` block."""
    return StoicheiaLemmatizer(nlp.vocab, model, name, settings=settings, scorer=scorer).bind(nlp)


class StoicheiaLemmatizer(HeadPipe):
    """Edit-script classifier with optional lexicon rescoring (see the module doc)."""

    settings: LemmatizerSettings

    def __init__(self, vocab: Vocab, model: Model, name: str = "stoicheia_lemmatizer", *,
                 settings: LemmatizerSettings | None = None, scorer: Any = score_lemma, **options: Any) -> None:
        base = settings if settings is not None else LemmatizerSettings()
        super().__init__(vocab, model, name, settings=base.replace(**options) if options else base,
                         scripts=[], lexicon=[])
        self.scorer = scorer
        self._index: dict[EditScript, int] | None = None
        self._lexicon: frozenset[str] | None = None
        self._with_table: tuple[FormTable, frozenset[str], frozenset[str]] | None = None
        self._scripts: tuple[Any, list[EditScript]] | None = None
        self._applied: dict[tuple[str, int], str] = {}
        self._applied_for: list[EditScript] | None = None
        self._cuts = np.zeros(0, dtype=np.int64)

    @property
    def decode_mode(self) -> str:
        """The decoder (the ``decode`` setting)."""
        return self.settings.decode

    def set_data(self, data: dict[str, Any]) -> None:
        super().set_data(data)
        self._index, self._lexicon = None, None

    @property
    def scripts(self) -> list[EditScript]:
        """The script vocabulary (class ``i`` of the head is ``scripts[i]``), parsed once per
        ``data["scripts"]`` list (``init_labels`` and loading replace the list)."""
        raw = self.data["scripts"]
        if self._scripts is None or self._scripts[0] is not raw:
            self._scripts = (raw, [EditScript.from_list(s) for s in raw])
        return self._scripts[1]

    def _script_index(self) -> dict[EditScript, int]:
        if self._index is None or len(self._index) != len(self.data["scripts"]):
            self._index = {s: i for i, s in enumerate(self.scripts)}
        return self._index

    def make_module(self, n_in: int) -> torch.nn.Module:
        head = self._head_node()
        self._index, self._lexicon = None, None
        return TokenHeads(n_in, (max(len(self.data["scripts"]), 1),), hidden=head.attrs["hidden_width"],
                          dropout=head.attrs["dropout"])

    def init_labels(self, examples: list[Example], lexicon: Iterable[str] | None = None) -> None:
        pairs = [(tok.text, tok.lemma_) for eg in examples for tok in eg.reference if tok.lemma_]
        scripts = build_script_vocab(pairs, min_count=self.settings.min_count)
        self.data["scripts"] = [s.to_list() for s in scripts]
        self.data["lexicon"] = sorted({lemma for _, lemma in pairs} | set(lexicon or ()))

    def initialize(self, get_examples: Any, *, nlp: Language | None = None,
                   lexicon: Iterable[str] | None = None, weights: str | None = None, **kwargs: Any) -> None:
        """Build the script vocabulary (and lexicon, plus ``lexicon``) from the training data, then
        the head; with ``weights`` (a saved component folder) read them from it instead."""
        super().initialize(get_examples, nlp=nlp, weights=weights)
        if lexicon:
            self.data["lexicon"] = sorted(set(self.data["lexicon"]) | set(lexicon))
            self._lexicon = None

    # ------------------------------------------------------------ inference
    def predict(self, docs: Iterable[Doc]) -> list[Any]:
        """Per-Doc script logits ``(n_tokens, n_scripts)``: arrays, or for a Doc of more than
        :data:`BLOCK` tokens a :class:`ScriptLogits` (``np.asarray`` gives the array) whose rows
        the head computes block by block as they are decoded, so that a long Doc never holds
        its ``n_tokens × n_scripts`` floats (79 KB a token) at once."""
        docs = list(docs)
        if not any(len(d) for d in docs):
            return [np.zeros((len(d), max(len(self.data["scripts"]), 1)), dtype=np.float32) for d in docs]
        table = self.form_table() if self.decode_mode not in ("research", "paper") else None
        if table is not None and all(len(d) <= BLOCK for d in docs):
            return self._predict_undecided(docs, table)
        if all(len(d) <= BLOCK for d in docs):
            return [self.model.ops.to_numpy(x) for x in self.model.predict(docs)]
        vectors = self.model.get_ref("tok2vec").predict(docs)
        head = self.model.get_ref("head")
        return [ScriptLogits(head, v) if len(v) > BLOCK else self.model.ops.to_numpy(head.predict(v))
                for v in vectors]

    def _predict_undecided(self, docs: list[Doc], table: FormTable) -> list[Any]:
        """:class:`TableLogits` per Doc: the head's rows of the batch's tokens whose lemma the
        table does not decide, in one forward (the output layer is most of the head's cost)."""
        vectors = self.model.get_ref("tok2vec").predict(docs)
        head, ops = self.model.get_ref("head"), self.model.ops
        decided = [[self.table_lemma(f, table) for f in word_texts(d)] for d in docs]
        picked = [ops.to_numpy(v)[np.array([lemma is None for lemma in got], dtype=bool)]
                  for v, got in zip(vectors, decided, strict=True)]
        width = max(len(self.data["scripts"]), 1)
        flat = np.concatenate(picked) if picked else np.zeros((0, 0), np.float32)
        rows = (ops.to_numpy(head.predict(ops.asarray2f(cast(Any, flat)))) if len(flat)
                else np.zeros((0, width), np.float32))
        bounds = np.cumsum([0] + [len(p) for p in picked])
        return [TableLogits(head, v, got, rows[a:b])
                for v, got, a, b in zip(vectors, decided, bounds[:-1], bounds[1:], strict=True)]

    @staticmethod
    def table_lemma(form: str, table: FormTable) -> str | None:
        """The lemma of ``form`` when it is decided whatever the logits: the form itself when it
        has no letter (:func:`has_letter`), else the form's one attested lemma in the table
        (:meth:`lemmatize_flagged` takes a table lemma for an attested form, and with one
        candidate that is it), else None."""
        if not has_letter(form):
            return form
        lemmas = table.lemmas(form)
        return lemmas[0] if len(lemmas) == 1 else None

    def lemmatize(self, forms: Sequence[str], logits: np.ndarray) -> list[str]:
        """Lemmas of ``forms`` from their script logits (top-k, fit check, lexicon, back-off)."""
        return self.lemmatize_flagged(forms, logits)[0]

    def form_table(self) -> FormTable | None:
        """The form table the ``form_table`` setting names (None when off or not installed)."""
        return load_form_table() if self.settings.form_table else None

    def lemmatize_flagged(self, forms: Sequence[str], logits: np.ndarray, table: FormTable | None = None,
                          prior: float | None = None) -> tuple[list[str], list[bool]]:
        """Lemmas of ``forms`` and, per form, whether it is a flagged back-off (module doc).

        With a form ``table``, a form it attests takes the table lemma with the best score: the
        log-probability of the best of the ``top_k`` scripts that gives it (a lemma no such
        script gives: the lowest of theirs, minus one), plus ``prior`` (default: the
        ``table_prior`` setting; the pipe passes the weight of the Doc's text domain,
        :meth:`~.settings.LemmatizerSettings.table_weight`) times the log of its share of the
        form's analyses."""
        if table is None or not len(forms):
            return self._lemmatize(forms, logits, table)
        found = [(i, rows) for i, rows in enumerate(table.analyses(form) for form in forms)
                 if rows and has_letter(forms[i])]
        if not found:
            return self._lemmatize(forms, logits, table)
        # the scripts' own decode only for the forms the table does not attest (each row is
        # decoded on its own, so leaving the others out changes none of these)
        out, flags = list(forms), [False] * len(forms)
        attested = {i for i, _ in found}
        rest = [i for i in range(len(forms)) if i not in attested]
        if rest:
            got, flagged = self._lemmatize([forms[i] for i in rest], np.asarray(logits)[rest], table)
            for i, lemma, flag in zip(rest, got, flagged, strict=True):
                out[i], flags[i] = lemma, flag
        prior = self.settings.table_prior if prior is None else prior
        scripts, applied, cuts = self.scripts, self._applied_cache(), self._script_cuts()
        k = min(self.settings.top_k, len(scripts))
        # the attested forms' rows ranked at once (row by row the same values as one at a time);
        # their scores are logits, not log-probabilities: every score of a form differs from its
        # log-probability by the row's normaliser, which no comparison below depends on
        block = np.asarray(logits)[[i for i, _ in found]]
        tops = np.argpartition(-block, k - 1, axis=1)[:, :k] if k < block.shape[1] \
            else np.broadcast_to(np.arange(block.shape[1]), block.shape)
        top_scores = np.take_along_axis(block, tops, axis=1).astype(np.float64)
        for (i, rows), top, logp in zip(found, tops, top_scores, strict=True):
            form = forms[i]
            share: dict[str, int] = {}
            for lemma, _, n in rows:
                share[lemma] = share.get(lemma, 0) + n
            score = dict.fromkeys(share, float(logp.min()) - 1.0)
            fits = cuts[top] <= len(form)  # a script that cuts more than the form has is never chosen
            for c, lp in zip(top[fits].tolist(), logp[fits].tolist(), strict=True):
                key = (form, c)
                made = applied.get(key)
                if made is None:
                    made = applied[key] = apply_script(form, scripts[c])
                if made in score and lp > score[made]:
                    score[made] = lp
            total = sum(share.values())
            out[i] = max(score, key=lambda lem: score[lem] + prior * np.log(share[lem] / total))
            flags[i] = False
        return out, flags

    def _applied_cache(self) -> dict[tuple[str, int], str]:
        """``apply_script(form, scripts[c])`` by ``(form, c)`` for the current script vocabulary
        (a pipe lemmatizes the same frequent forms over and over); started afresh when the
        vocabulary changes or :data:`APPLIED_CACHE` lemmas are held."""
        scripts = self.scripts
        if self._applied_for is not scripts or len(self._applied) > APPLIED_CACHE:
            self._applied, self._applied_for = {}, scripts
            self._cuts = np.array([sc.prefix_cut + sc.suffix_cut for sc in scripts], dtype=np.int64)
        return self._applied

    def _script_cuts(self) -> np.ndarray:
        """Letters each script cuts (prefix + suffix), as one array for the current vocabulary."""
        self._applied_cache()
        return self._cuts

    def attested_lemmas(self, table: FormTable | None = None) -> frozenset[str]:
        """The lemmas a script's output must be to be taken (``use_lexicon``): the component's
        lexicon, with ``table_lexicon`` and a form ``table`` also every lemma and headword of the
        table (:meth:`~.formtable.FormTable.attested_lemmas`)."""
        if self._lexicon is None:
            self._lexicon = frozenset(self.data["lexicon"])
        if table is None or not self.settings.table_lexicon:
            return self._lexicon
        if self._with_table is None or self._with_table[0] is not table or self._with_table[1] is not self._lexicon:
            self._with_table = (table, self._lexicon, self._lexicon | table.attested_lemmas())
        return self._with_table[2]

    def _lemmatize(self, forms: Sequence[str], logits: np.ndarray,
                   table: FormTable | None = None) -> tuple[list[str], list[bool]]:
        """The scripts' lemmas in blocks of :data:`BLOCK` forms, so that the ranking's arrays
        stay small on a long Doc (``table``: its lemmas count as attested, ``table_lexicon``)."""
        out: list[str] = []
        flags: list[bool] = []
        lexicon = self.attested_lemmas(table) if self.settings.use_lexicon else frozenset()
        for first in range(0, len(forms), BLOCK):
            lemmas, flagged = self._lemmatize_block(forms[first:first + BLOCK], logits[first:first + BLOCK], lexicon)
            out.extend(lemmas)
            flags.extend(flagged)
        return out, flags

    def _lemmatize_block(self, forms: Sequence[str], logits: np.ndarray,
                         lexicon: frozenset[str]) -> tuple[list[str], list[bool]]:
        scripts = self.scripts
        if not scripts or not len(forms):
            return list(forms), [False] * len(forms)
        k = min(self.settings.top_k, len(scripts))
        top = np.argpartition(-logits, k - 1, axis=1)[:, :k] if k < logits.shape[1] else np.argsort(-logits, axis=1)
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(logits, top, axis=1), axis=1), axis=1)
        out, flags = [], []
        drop = self.settings.max_drop
        prefer = self.settings.prefer_form
        applied, cuts = self._applied_cache(), self._script_cuts()
        by_script = self.settings.backoff == "script"
        for form, cands, row in zip(forms, top, logits, strict=True):
            if not has_letter(form):
                out.append(form)
                flags.append(False)
                continue
            first, best, guess = None, None, None
            own = form.lower()
            for c in cands[cuts[cands] <= len(form)].tolist():  # a script must not cut more than the form has
                if best is None:
                    best = row[c]
                elif best - row[c] > drop:
                    break
                key = (form, c)
                lemma = applied.get(key)
                if lemma is None:
                    lemma = applied[key] = apply_script(form, scripts[c])
                if guess is None:
                    guess = lemma  # the best fitting script's lemma (``backoff = "script"``)
                if not lexicon:
                    first = lemma
                    break
                if first is None and lemma in lexicon:
                    first = lemma
                    if own not in lexicon or lemma == own:
                        break
                if first is not None and lemma == own and best - row[c] <= prefer:
                    first = lemma
                    break
            if first is None and lexicon:
                first, flag = backoff_lemma(form, lexicon)
                if flag and by_script and guess:
                    first = guess
            else:
                first, flag = (form if first is None else first), False
            out.append(first)
            flags.append(flag)
        return out, flags

    def set_annotations(self, docs: Iterable[Doc], scores: Sequence[np.ndarray]) -> None:
        """Write ``token.lemma_``."""
        for doc, logits in zip(docs, scores, strict=True):
            if self.decode_mode in ("research", "paper"):
                lemmas, flags = self.release_lemmas(doc, np.asarray(logits)), [False] * len(doc)
            else:  # block by block: a long Doc's rows are computed as they are decoded
                forms, table = word_texts(doc), self.form_table()
                prior = self.settings.table_weight(doc) if table is not None else None
                if isinstance(logits, TableLogits):
                    lemmas, flags = self._table_logits_lemmas(forms, logits, table, prior)
                else:
                    lemmas, flags = [], []
                    for first in range(0, len(forms), BLOCK):
                        rows = (logits.rows(first, first + BLOCK) if isinstance(logits, ScriptLogits)
                                else np.asarray(logits)[first:first + BLOCK])
                        got, flagged = self.lemmatize_flagged(forms[first:first + BLOCK], rows, table, prior)
                        lemmas += got
                        flags += flagged
            for tok, lemma, flag in zip(doc, lemmas, flags, strict=True):
                gap = is_gap_token(tok.text)
                tok.lemma_ = GAP_LEMMA if gap else lemma
                tok._.lemma_backoff = flag and not gap

    def _table_logits_lemmas(self, forms: list[str], logits: TableLogits, table: FormTable | None,
                             prior: float | None) -> tuple[list[str], list[bool]]:
        """The lemmas of :meth:`lemmatize_flagged` from :class:`TableLogits`: a form the table
        decides takes its lemma (as there), the others are decoded from their computed rows."""
        assert table is not None
        lemmas = [lemma or "" for lemma in logits.decided]
        flags = [False] * len(forms)
        index = np.flatnonzero(logits.needed)
        got, flagged = self.lemmatize_flagged([forms[i] for i in index], logits.computed, table, prior)
        for i, lemma, flag in zip(index.tolist(), got, flagged, strict=True):
            lemmas[i], flags[i] = lemma, flag
        return lemmas, flags

    def release_lemmas(self, doc: Doc, logits: np.ndarray) -> list[str]:
        """Lemmas with the ``research`` or ``paper`` decoder (module doc); the research one
        reads each token's ``tag_`` (set by the morphologizer before it)."""
        rel = self.data.get("release") or {}
        lex_ft, lex_f, nongreek = rel.get("lex_ft", {}), rel.get("lex_f", {}), rel.get("nongreek", {})
        scripts = self.data["scripts"]
        words = encodable_tokens(doc)
        forms = word_texts(doc)
        out = []
        for i, tok in enumerate(doc):
            if not words[i] or not scripts:
                out.append(rule_fallback(forms[i], nongreek, lex_f, "u", "u--------")[0])
            elif self.decode_mode == "paper":
                out.append(paper_lemma(forms[i], logits[i], scripts))
            else:
                out.append(research_lemma(forms[i], logits[i], scripts, tok.tag_ or None, lex_ft, lex_f,
                                          top_k=self.settings.top_k))
        return out

    # ------------------------------------------------------------- training
    def get_loss(self, examples: Iterable[Example], scores: Sequence[Any]) -> tuple[float, list[Any]]:
        """Cross-entropy over the script vocabulary (tokens whose script is unknown are skipped)."""
        examples = list(examples)
        validate_examples(examples, "StoicheiaLemmatizer.get_loss")
        index = self._script_index()
        golds = []
        for eg in examples:
            lemmas = eg.get_aligned("LEMMA", as_string=True)
            golds.append(np.array([index.get(derive_script(form, lem), -1) if lem else -1
                                   for form, lem in zip(word_texts(eg.predicted), lemmas, strict=True)],
                                  dtype=np.int64))
        flat = np.concatenate([self.model.ops.to_numpy(s) for s in scores])
        loss, d = grouped_softmax_loss(flat, np.concatenate(golds)[:, None], (flat.shape[1],))
        bounds = np.cumsum([0] + [len(s) for s in scores])
        return loss, [self.model.ops.asarray2f(cast(Any, d[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
