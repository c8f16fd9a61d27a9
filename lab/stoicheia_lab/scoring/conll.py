"""CoNLL-2018-style scorer for tagging, lemmatisation and dependency parsing over
identically tokenised sentences.

Sentences are lists of words; a word is a mapping with ``form, upos, xpos, feats,
lemma, head, deprel`` (a ``conllu`` ``Token`` works; multiword-token ranges and
empty nodes, whose ``id`` is not an int, are skipped). Metrics are accuracies
over words, as in the CoNLL 2018 shared task once tokenisation is gold:

* ``UPOS``, ``XPOS``; ``UFeats`` (feature *sets* compared, order-insensitive,
  ``_`` = no features); ``AllTags`` (UPOS, XPOS and UFeats all right);
* ``Lemma`` (a gold lemma ``_`` counts as matched, as in the shared task);
* ``UAS`` (head), ``LAS`` (head and relation; relation subtypes after ``:`` are
  ignored by default, as in the shared task); ``CLAS`` (LAS over words whose gold
  relation is a UD content relation; meaningful for UD labels only).

Punctuation is scored like any word by default (CoNLL 2018). With
``exclude_punct=True`` words whose gold UPOS is ``PUNCT``, or whose form is made
only of Unicode punctuation, are left out of every metric.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stoicheia_spacy.errors import ScoringError

METRICS = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemma", "UAS", "LAS", "CLAS")

#: Universal Dependencies relations counted by CLAS (the shared task's content relations).
CONTENT_DEPRELS = frozenset(
    "nsubj obj iobj csubj ccomp xcomp obl vocative expl dislocated advcl advmod discourse "
    "nmod appos nummod acl amod conj fixed flat compound list parataxis orphan goeswith "
    "reparandum root dep".split()
)

Word = Mapping[str, Any]


@dataclass(frozen=True)
class Score:
    """Correct and total counts of one metric."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        """correct / total (NaN when nothing was scored)."""
        return self.correct / self.total if self.total else float("nan")


def _feats(value: Any) -> frozenset[str]:
    if value is None or value == "_" or value == "":
        return frozenset()
    if isinstance(value, Mapping):
        return frozenset(f"{k}={v}" for k, v in value.items())
    if isinstance(value, str):
        return frozenset(value.split("|"))
    raise ScoringError(f"cannot read features {value!r}")


def _head(value: Any, where: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError) as err:
        raise ScoringError(f"{where}: head {value!r} is not an integer") from err


def _is_punct(word: Word) -> bool:
    form = str(word.get("form", ""))
    return word.get("upos") == "PUNCT" or (
        bool(form) and all(unicodedata.category(ch).startswith("P") for ch in form)
    )


def _words(sentence: Iterable[Word]) -> list[Word]:
    return [w for w in sentence if isinstance(w.get("id", 0), int)]


def score_conll(
    gold: Sequence[Sequence[Word]],
    pred: Sequence[Sequence[Word]],
    *,
    exclude_punct: bool = False,
    strip_subtypes: bool = True,
) -> dict[str, Score]:
    """Score predicted sentences against gold ones with the same tokenisation.

    Returns a dict metric name -> :class:`Score` for every name in :data:`METRICS`.
    Raises :class:`~stoicheia_spacy.errors.ScoringError` when sentence or word
    counts or forms differ.
    """
    if len(gold) != len(pred):
        raise ScoringError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    correct = dict.fromkeys(METRICS, 0)
    total = dict.fromkeys(METRICS, 0)

    def rel(value: Any) -> str:
        text = str(value)
        return text.split(":", 1)[0] if strip_subtypes else text

    for s, (gold_sent, pred_sent) in enumerate(zip(gold, pred, strict=True)):
        g_words, p_words = _words(gold_sent), _words(pred_sent)
        if len(g_words) != len(p_words):
            raise ScoringError(f"sentence {s}: {len(g_words)} gold words, {len(p_words)} predicted")
        for i, (g, p) in enumerate(zip(g_words, p_words, strict=True)):
            where = f"sentence {s}, word {i + 1}"
            if g.get("form") != p.get("form"):
                raise ScoringError(
                    f"{where}: forms differ ({g.get('form')!r} vs {p.get('form')!r})"
                )
            if exclude_punct and _is_punct(g):
                continue
            upos = g.get("upos") == p.get("upos")
            xpos = g.get("xpos") == p.get("xpos")
            feats = _feats(g.get("feats")) == _feats(p.get("feats"))
            lemma = g.get("lemma") in ("_", p.get("lemma"))
            uas = _head(g.get("head"), where) == _head(p.get("head"), where)
            las = uas and rel(g.get("deprel")) == rel(p.get("deprel"))
            for name, ok in (
                ("UPOS", upos),
                ("XPOS", xpos),
                ("UFeats", feats),
                ("AllTags", upos and xpos and feats),
                ("Lemma", lemma),
                ("UAS", uas),
                ("LAS", las),
            ):
                correct[name] += bool(ok)
                total[name] += 1
            if rel(g.get("deprel")) in CONTENT_DEPRELS:
                correct["CLAS"] += bool(las)
                total["CLAS"] += 1
    return {name: Score(correct[name], total[name]) for name in METRICS}


def read_conllu(path: str | Path) -> list[list[dict[str, Any]]]:
    """Read a CoNLL-U file (plain or ``.xz``) into lists of word dicts (syntactic words only)."""
    import lzma

    import conllu

    opener: Any = lzma.open if str(path).endswith(".xz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return [[dict(token) for token in _words(sent)] for sent in conllu.parse_incr(handle)]
    except (OSError, UnicodeDecodeError, lzma.LZMAError, conllu.exceptions.ParseException) as err:
        raise ScoringError(f"cannot read CoNLL-U file {path}: {err}") from err


def format_scores(scores: Mapping[str, Score]) -> str:
    """A small fixed-width table (percent), one metric per line."""
    lines = [f"{'Metric':<8} {'Correct':>8} {'Total':>8} {'Acc':>7}"]
    for name, score in scores.items():
        lines.append(f"{name:<8} {score.correct:>8} {score.total:>8} {100 * score.accuracy:>7.2f}")
    return "\n".join(lines)
