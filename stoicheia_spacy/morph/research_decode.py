"""The authors' evaluation decoders for the released tagger-parser, restated.

Two settings of the morphologizer, lemmatizer and parser (``decode``):

- ``"research"``: what the research evaluation writes (``tagger/evaluate.py`` with
  ``tagger/decode.py``, heads from ``parser/mst.py``):

  - XPOS: the attested tag (``vocab.json`` ``tags``, in that order) maximising the sum of
    the nine position log-softmaxes plus the flat full-tag head's log-softmax
    (:func:`constrained_xpos`);
  - UPOS: the argmax of its own head (it need not agree with the tag);
  - lemma: :func:`research_lemma` (form folded by :func:`form_key`, so a grave becomes an
    acute before the edit script; the lexicon candidates of the form and tag, else of the
    form, ranked by script log-probability + 1e-3·log1p(count), else the most frequent;
    with no candidate the best script that fits, capitalised as the form or the script says);
  - heads: a maximum spanning tree that lets several words hang on the root
    (:func:`~stoicheia_spacy.morph.mst.chu_liu_edmonds` with ``single_root=False``), each
    word's relation the argmax at its head;
  - tokens without a Greek letter get no neural prediction: :func:`rule_fallback`.

- ``"paper"``: what the paper's tables scored (``parser/joint_train.py``): the per-position
  XPOS argmax, the argmax script applied to the folded form (empty when it does not fit),
  UPOS argmax, and greedy heads (each word's argmax head, no tree constraint).

One deliberate difference (the fixtures flag it ``research_quirk``): the research
``apply_script`` slices ``form[p_cut:len(form) - s_cut or None]``, so a script that cuts
the whole form keeps it (``δεῖ`` + ``(0, '', 3, 'ό')`` → ``δεῖό``); :func:`apply_script`
keeps the empty middle the script defines (``ό``), as the paper describes.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..encoder.token_planes import word_planes
from ..errors import ConfigError

#: The two decoders of released checkpoints (besides each component's own default).
RELEASE_DECODERS = ("research", "paper")

_GRAVE, _ACUTE = "\u0300", "\u0301"
_DROP = {"\u0304", "\u0306", "\u0323"}  # macron, breve, dot below


def form_key(form: str) -> str:
    """A form folded as the research scripts and lexicon key it: lower case, grave → acute,
    macron/breve/dot below dropped, NFC."""
    nfd = unicodedata.normalize("NFD", form.lower()).replace(_GRAVE, _ACUTE)
    return unicodedata.normalize("NFC", "".join(ch for ch in nfd if ch not in _DROP))


def apply_script(key: str, script: Sequence[Any]) -> str | None:
    """``prefix_add + key[p_cut:len(key) - s_cut] + suffix_add``, or None when the cuts do not
    fit (the empty middle stays empty; see the module doc)."""
    p_cut, p_add, s_cut, s_add = int(script[0]), str(script[1]), int(script[2]), str(script[3])
    if p_cut + s_cut > len(key):
        return None
    return p_add + key[p_cut:len(key) - s_cut] + s_add


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Log-softmax over the last axis (float64)."""
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def constrained_xpos(position_logits: Sequence[np.ndarray], tag_ids: np.ndarray,
                     flat_logits: np.ndarray | None) -> np.ndarray:
    """Index (into the tag list) of the best attested tag per word.

    ``position_logits``: nine ``(n, |A_p|)`` arrays; ``tag_ids``: ``(n_tags, 9)`` class
    index of each tag's letter at each position; ``flat_logits``: ``(n, n_tags)`` or None.
    Ties go to the first tag of the list."""
    score = np.zeros((len(position_logits[0]), len(tag_ids)))
    for p, lg in enumerate(position_logits):
        score += log_softmax(lg)[:, tag_ids[:, p]]
    if flat_logits is not None:
        score += log_softmax(flat_logits)
    return score.argmax(axis=1)


def research_lemma(form: str, script_logits: np.ndarray, scripts: Sequence[Sequence[Any]], xpos: str | None,
                   lex_ft: Mapping[str, Mapping[str, int]], lex_f: Mapping[str, Mapping[str, int]],
                   top_k: int = 64) -> str:
    """The research lemma of ``form`` (see the module doc)."""
    key = form_key(form)
    logp = log_softmax(script_logits)
    fits = np.array([int(s[0]) + int(s[2]) <= len(key) for s in scripts])
    masked = np.where(fits, logp, -1e30)
    order = np.argsort(-masked, kind="stable")[: min(top_k, len(scripts))]
    cands: Mapping[str, int] = {}
    if xpos is not None:
        cands = lex_ft.get(key + "\t" + xpos) or {}
    if not cands:
        cands = lex_f.get(key) or {}
    if cands:
        lower: dict[str, str] = {}
        for lemma in cands:
            lower.setdefault(lemma.lower(), lemma)
        best: str | None = None
        best_score = -1e30
        for i in order:
            if masked[i] <= -1e29:
                break
            out = apply_script(key, scripts[i])
            found = lower.get(out) if out is not None else None
            if found is not None:
                score = float(masked[i]) + 1e-3 * math.log1p(cands[found])
                if score > best_score:
                    best, best_score = found, score
        return best if best is not None else max(cands, key=lambda k: cands[k])
    if not len(order):
        return form
    script = scripts[int(order[0])]
    applied = apply_script(key, script)
    if applied is None:
        return form
    if int(script[4]) or form[:1] != form[:1].lower():
        return applied[:1].upper() + applied[1:]
    return applied


def paper_lemma(form: str, script_logits: np.ndarray, scripts: Sequence[Sequence[Any]]) -> str:
    """The argmax script applied to the folded form; ``""`` when it does not fit."""
    out = apply_script(form_key(form), scripts[int(np.argmax(script_logits))])
    return "" if out is None else out


def rule_fallback(form: str, nongreek: Mapping[str, Sequence[str]], lex_f: Mapping[str, Mapping[str, int]],
                  fallback_upos: str, fallback_xpos: str) -> tuple[str, str, str]:
    """(lemma, POS letter, tag) of a token without a Greek letter: the research rule table,
    else the most frequent lexicon lemma of the form, else the form."""
    rule = nongreek.get(form)
    if rule:
        return str(rule[0]), str(rule[1]), str(rule[2])
    cands = lex_f.get(form_key(form))
    lemma = max(cands, key=lambda k: cands[k]) if cands else form
    return lemma, fallback_upos, fallback_xpos


def greedy_heads(arc_scores: np.ndarray) -> np.ndarray:
    """Each word's argmax head (``arc_scores[d, h]``, ``(n, n + 1)``, column 0 = root,
    word ``d`` is column ``d + 1``; a word never heads itself)."""
    arr = np.array(arc_scores, dtype=np.float64)
    n = arr.shape[0]
    arr[np.arange(n), np.arange(n) + 1] = -np.inf
    return arr.argmax(axis=1)


def check_decode(value: str, own: tuple[str, ...]) -> str:
    """``value`` if it names one of ``own`` or :data:`RELEASE_DECODERS`, else ConfigError."""
    allowed = (*own, *RELEASE_DECODERS)
    if value not in allowed:
        raise ConfigError(f"decode must be one of {', '.join(allowed)}; got {value!r}")
    return value


__all__ = ["RELEASE_DECODERS", "apply_script", "check_decode", "constrained_xpos", "encodable_tokens", "form_key",
           "greedy_heads",
           "log_softmax", "paper_lemma", "research_lemma", "rule_fallback"]


def encodable_tokens(doc: Any) -> np.ndarray:
    """Bool per token of ``doc``: whether it holds a Greek letter (a research *word*), read
    from the encoder's alignment when the Doc has been encoded."""
    data = doc._.stoicheia if doc.has_extension("stoicheia") else None
    lengths = getattr(data, "token_lengths", None)
    if lengths is not None and len(lengths) == len(doc):
        return np.asarray(lengths) > 0

    return np.array([word_planes(t.text) is not None for t in doc], dtype=bool)
