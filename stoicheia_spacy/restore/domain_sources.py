"""A text domain's own candidate sources: its own 8-gram pair, parallels index and word list.

The default's 8-gram pair and parallels index are papyri and literary text (27 M letters); the
open inscriptions' training part is 86 k letters of another domain. For a domain listed in
``domain_sources`` (``projects/restore/RESULTS.md``, Run 14: inscriptions), every known-width gap
(and a hidden-width one where the weights name the ``unknown`` bucket, Run 16: the beam of every
width, the index's candidates of every width) also gets the candidates of the domain's **own**
:class:`~.kneser_ney.KneserNeyLM` (its two-sided beam) and of its own :class:`~stoicheia_spacy.parallels.index.ParallelIndex` (as
:func:`~.infgram.gap_evidence` reads the default's), and every candidate of the union is scored
with

    ``ifwd · f + irev · r + ictx · context + lidocs · log(1 + docs) + oov · unattested + known · attested``

added to its combined score: ``f`` / ``r`` the domain 8-gram's two directions
(:func:`~.kn_beam.score_texts`), ``context`` / ``docs`` the domain index's evidence
(:func:`~.infgram.infgram_features`), ``unattested`` / ``attested`` the words the candidate
completes at the gap's edges missing from / found in the :class:`~.lexicon.Vocabulary` of both
indexes (:func:`query_words`). The six weights per width bucket are fitted on the domain's dev
gaps (``domain_source_weights``). A domain's sources live in one folder (:data:`FILES`), which
``make lexicon`` ships in the data package under ``domains/<domain>/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ParallelsIndexError
from ..parallels.index import ParallelIndex
from .infgram import InfFeatures, final_sigma, fold, infgram_features, occurrences, query_sides
from .kn_beam import CONTEXT, KnCandidate, gap_symbols, kn_restore, score_texts, text_to_symbols
from .kneser_ney import SPACE, UNK, KneserNeyLM, load_kn
from .lexicon import Vocabulary

__all__ = ["FILES", "WEIGHTS", "DomainSources", "domain_rescore", "domain_terms", "known_width",
           "load_domain_sources", "query_words", "serves", "source_widths", "with_domain_sources"]

#: the files of a domain's folder: its 8-gram pair, its parallels index, the word list of both indexes
FILES = ("kn.npz", "parallels", "vocabulary.npy")
#: the order of a bucket's six weights
WEIGHTS = ("ifwd", "irev", "ictx", "lidocs", "oov", "known")


@dataclass(frozen=True)
class DomainSources:
    """One domain's sources (module doc), its ``weights`` per width bucket (:data:`WEIGHTS`), the
    domain index's documents to ``exclude`` for the Doc at hand, how many index candidates to add
    (``extra``) and the domain 8-gram's ``beam``."""

    lm: KneserNeyLM
    index: ParallelIndex
    vocab: Vocabulary
    weights: Mapping[str, Sequence[float]]
    exclude: frozenset[int] = frozenset()
    extra: int = 30
    beam: int = 20

    def weights_for(self, bucket: str) -> tuple[float, ...]:
        w = self.weights.get(bucket, self.weights.get("default", (0.0,) * len(WEIGHTS)))
        return tuple(float(x) for x in w)


def load_domain_sources(folder: str | Path, weights: Mapping[str, Sequence[float]]) -> DomainSources:
    """The sources in ``folder`` (:data:`FILES`) with their fitted ``weights``; raises
    :class:`~stoicheia_spacy.errors.ParallelsIndexError` naming what is missing."""
    folder = Path(folder)
    missing = [f for f in FILES if not (folder / f).exists()]
    if missing:
        raise ParallelsIndexError(f"the domain sources {folder} lack {', '.join(missing)}")
    return DomainSources(load_kn(folder / "kn.npz"), ParallelIndex(folder / "parallels"),
                         Vocabulary.load(folder / "vocabulary.npy"), weights)


def query_words(vocab: Vocabulary, query: object, text: str,
                sides: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[int, int]:
    """``(unattested, attested)``: the words ``text`` makes in ``query``'s gap with the letters at
    its edges (the query's own symbols, word breaks as the n-gram reads them; :func:`~.lexicon.edge_words`
    on the records' text), a word with an unknown letter or running past the context read left out.
    ``sides``: the query's :func:`~.kn_beam.gap_symbols`, when already read (one gap, many texts)."""
    left, right = sides if sides is not None else gap_symbols(query)
    gap = text_to_symbols(text)
    at, n = int(query.insert_at), len(query.context)  # type: ignore[attr-defined]
    # bytes, not arrays: a gap's hundreds of candidates each split a row of a few dozen symbols
    row = np.concatenate([left, gap, right]).astype(np.uint8).tobytes()
    space, unk = bytes([SPACE]), UNK
    lo = row.rfind(space, 0, len(left)) + 1
    hi = row.find(space, len(left) + len(gap))
    head_cut = lo == 0 and at > CONTEXT  # the first word may start before the letters read
    tail_cut = hi < 0 and n - at > CONTEXT
    words = [w for w in row[lo : hi if hi >= 0 else len(row)].split(space) if w]
    unattested = attested = 0
    for i, w in enumerate(words):
        if unk in w or (i == 0 and head_cut) or (i == len(words) - 1 and tail_cut):
            continue
        if w in vocab:
            attested += 1
        else:
            unattested += 1
    return unattested, attested


def known_width(query: object) -> bool:
    """Whether ``query`` is a gap of one known width in characters."""
    widths = getattr(query, "widths", None)
    return getattr(query, "letters", None) is None and widths is not None and len(widths) == 1


def source_widths(src: DomainSources, query: object, max_letters: int = 10) -> tuple[int, ...]:
    """The widths the sources serve ``query`` with: its known width; every width ``1..max_letters``
    of a hidden gap (``range``: its widths) only where ``src.weights`` names the ``unknown``
    (``range``) bucket, fitted for it (Run 16); none for a gap counted in letters."""
    widths = getattr(query, "widths", None)
    if getattr(query, "letters", None) is not None:
        return ()
    if widths is not None and len(widths) == 1:
        return (int(widths[0]),)
    if ("unknown" if widths is None else "range") not in (src.weights or {}):
        return ()
    return tuple(range(1, int(max_letters) + 1)) if widths is None else tuple(int(w) for w in widths)


def serves(src: DomainSources | None, query: object, max_letters: int = 10) -> bool:
    """Whether ``src`` serves ``query`` (:func:`source_widths` not empty)."""
    return src is not None and bool(source_widths(src, query, max_letters))


def with_domain_sources(lm: KneserNeyLM, query: object, cands: Sequence[KnCandidate], src: DomainSources,
                        far: int, max_letters: int = 10) -> tuple[list[KnCandidate], dict[str, InfFeatures]]:
    """``cands`` with the domain 8-gram's beam and the domain index's best ``src.extra``
    candidates not already there (scored by the default ``lm``'s two directions), and the domain
    index's evidence by folded text, over the widths of :func:`source_widths` (a hidden gap: the
    beam of every width, one search of the index for them all); ``cands`` unchanged where it
    serves none."""
    widths = source_widths(src, query, max_letters)
    if not widths:
        return list(cands), {}
    left, right = query_sides(query)
    before, after = bool(query.left_open), bool(query.right_open)  # type: ignore[attr-defined]
    texts, lm_, rm, docs = occurrences(src.index, left, right, widths[0] if len(widths) == 1 else widths,
                                       space_before=before, space_after=after, exclude=src.exclude)
    feats = {fold(final_sigma(t, not after)): f for t, f in infgram_features(texts, lm_, rm, docs).items()}
    have = {fold(c.text) for c in cands}
    new: dict[str, str] = {}
    for c in kn_restore(src.lm, [query], beam=int(src.beam), far=far, max_letters=int(max_letters))[0]:
        if fold(c.text) not in have:
            new.setdefault(fold(c.text), c.text)
    ranked = sorted(feats, key=lambda k: (-feats[k].context, -feats[k].docs, -feats[k].occurrences, k))
    for k in [k for k in ranked if k not in have and k not in new][: int(src.extra)]:
        new[k] = final_sigma(k, not after)
    out = list(cands)
    if new:
        lsym, rsym = gap_symbols(query)
        texts_new = list(new.values())
        fwd, rev = score_texts(lm, lsym, rsym, [text_to_symbols(t) for t in texts_new], far)
        out += [KnCandidate(t, len(t), float(f), float(r)) for t, f, r in zip(texts_new, fwd, rev, strict=True)]
    return out, feats


def domain_rescore(lm_scores: Mapping[str, tuple[float, float]], feats: Mapping[str, InfFeatures],
                   words: Mapping[str, tuple[int, int]], text: str, weights: Sequence[float]) -> float:
    """The domain terms of one candidate's score (module doc): ``lm_scores`` / ``feats`` /
    ``words`` by folded text (the domain 8-gram's ``(f, r)``, the domain index's evidence, the
    word check's ``(unattested, attested)``)."""
    wf, wr, wc, wd, wo, wk = (float(x) for x in weights)
    k = fold(text)
    f, r = lm_scores.get(k, (0.0, 0.0))
    e = feats.get(k)
    oov, known = words.get(k, (0, 0))
    return (wf * f + wr * r + (wc * e.context + wd * float(np.log1p(e.docs)) if e is not None else 0.0)
            + wo * oov + wk * known)


def domain_terms(src: DomainSources, query: object, texts: Sequence[str], feats: Mapping[str, InfFeatures],
                 bucket: str, far: int) -> list[float]:
    """The domain terms of each of ``texts`` for one gap (:func:`domain_rescore`)."""
    if not texts:
        return []
    lsym, rsym = gap_symbols(query)
    f, r = score_texts(src.lm, lsym, rsym, [text_to_symbols(t) for t in texts], far)
    scores = {fold(t): (float(a), float(b)) for t, a, b in zip(texts, f, r, strict=True)}
    words = {fold(t): query_words(src.vocab, query, t, (lsym, rsym)) for t in texts}
    w = src.weights_for(bucket)
    return [domain_rescore(scores, feats, words, t, w) for t in texts]

