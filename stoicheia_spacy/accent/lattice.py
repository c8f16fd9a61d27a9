"""Joint decoding of word division and diacritics over a lattice of words.

:func:`decode_lattice` is a pure function of a letter sequence, the backbone's per-letter
log-probabilities (boundary, diacritics, capitals, punctuation heads; any may be absent)
and an optional :class:`~.formlex.FormLexicon`.  Every span of at most ``max_word``
letters is a candidate word (an *arc*):

* **lexicon arcs**: spans whose bare form is in the lexicon; each stored form is scored by
  the backbone's log-probability of its whole diacritic (and capital) string, plus the
  log-probability of that form given its bare form and of the bare form under a smoothed
  unigram model; an oxytone's final accent is acute or grave as the backbone prefers;
* **enclitic hosts**: a proparoxytone or properispomenon form followed by an enclitic
  (``ἄνθρωπός τις``, ``σῶμά τι``) takes an extra acute on its ultima; such an arc must be
  followed by an enclitic arc (a two-state lattice);
* **out-of-lexicon arcs**: any span, decoded per letter under the orthography rules of
  :mod:`.predict` (one breathing on the word-initial vowel or diphthong, at most one
  accent), with a per-word and per-letter penalty calibrated on dev data.

After the best path is found, **case government** overrides one choice the unigram scores cannot
make: the word after a preposition that governs the dative alone (``ἐν``, ``σύν``, ``ξύν``; and the
word after a dative singular article, postpositive particles such as ``δέ`` between them) is a
dative, so when the lexicon has forms of its
letters with an iota subscript on the last letter (the dative singular of the first and second
declensions) the best of those is written (``ἐν ἀρχῇ``, not ``ἐν ἀρχὴ``).

Each arc also gets the backbone's word-division score (internal letters not ending a word,
the last letter ending one).  Viterbi over word ends finds the best path; punctuation and
sentence ends are then read off the backbone at the chosen word ends.  Scoring is
vectorised over all arcs (numpy); the dynamic programme does O(``max_word``) work per
letter, so time is linear in the text length.  Without a lexicon only out-of-lexicon
arcs exist; without log-probabilities (lexicon alone) the lexicon's counts decide and an
oxytone is written grave except before an enclitic or at the end of the text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache

import numpy as np

from ..alphabet import (
    ALPHABET,
    BND_INTERNAL,
    BND_SENT_END,
    BND_WORD_END,
    BREATHING_NONE,
    BREATHING_ROUGH,
    CAP_LOWER,
    CAP_UPPER,
    N_BOUNDARY_OUT,
    N_CHAR_IDS,
    N_DIA_STATES,
    N_PUNCT_OUT,
    PUNCT_NONE,
    dia_features,
)
from ..codec import CharPlanes, encode_planes, word_spans
from .formlex import ADD_ACUTE, TO_GRAVE, FormLexicon, hash_rows
from .validity import dia_accent, dia_breathing, dia_valid_table, pair_valid

#: bare forms of the enclitics (after which a proparoxytone / properispomenon host takes
#: a second accent)
ENCLITICS: tuple[str, ...] = (
    "τις", "τι", "τινος", "τινι", "τινα", "τινες", "τινων", "τισι", "τισιν", "τινας", "του", "τω",
    "μου", "μοι", "με", "σου", "σοι", "σε", "ου", "οι", "ε", "σφισι", "σφισιν", "σφιν", "μιν", "νιν",
    "που", "ποτε", "πως", "πη", "ποθεν", "ποι", "πω", "ποθι",
    "γε", "τε", "τοι", "περ", "νυ", "νυν", "ρα", "θην", "κε", "κεν",
    "ειμι", "εστι", "εστιν", "εσμεν", "εστε", "εισι", "εισιν", "ἐστον",
    "φημι", "φησι", "φησιν", "φαμεν", "φατε", "φασι", "φασιν",
)

#: bare forms of the prepositions that govern the dative alone
DATIVE_PREPOSITIONS: tuple[str, ...] = ("εν", "συν", "ξυν")
#: bare forms of the dative singular articles: written with an iota subscript, the next word agrees
DATIVE_ARTICLES: tuple[str, ...] = ("τω", "τη")
#: postpositive particles, which stand between a preposition or article and its noun
POSTPOSITIVES: tuple[str, ...] = ("δε", "γαρ", "μεν", "τε", "ουν", "γε")

_VOWEL = np.zeros(N_CHAR_IDS, bool)
_VOWEL[[ALPHABET.index(c) for c in "αεηιουω"]] = True
_RHO = ALPHABET.index("ρ")
_IOTA, _UPSILON = ALPHABET.index("ι"), ALPHABET.index("υ")
_BEFORE_IOTA = np.zeros(N_CHAR_IDS, bool)
_BEFORE_IOTA[[ALPHABET.index(c) for c in "αεου"]] = True
_BEFORE_UPSILON = np.zeros(N_CHAR_IDS, bool)
_BEFORE_UPSILON[[ALPHABET.index(c) for c in "αεηοω"]] = True
NEG = -1e9

ARC_OOV, ARC_LEX, ARC_HOST = 0, 1, 2


@dataclass(frozen=True)
class LatticeParams:
    """Weights of the lattice score.  The defaults are the joint decoder's weights tuned on
    UD Perseus dev with the embedded backbone (``projects/accent``, ``metrics/lattice_params.json``)."""

    w_bnd: float = 0.0     # backbone word-division log-probabilities
    w_dia: float = 0.1     # backbone diacritic log-probabilities
    w_cap: float = 0.0     # backbone capitals log-probabilities
    w_lm: float = 0.5      # unigram log-probability of the bare form
    w_form: float = 1.0    # log-probability of the form given its bare form
    oov_word: float = -12.0   # per out-of-lexicon word
    oov_letter: float = -2.0  # per letter of an out-of-lexicon word
    host: float = 0.0      # per enclitic host (second accent)
    alpha_form: float = 0.5  # pseudo-count of a form (word-list forms have count 0)
    alpha_key: float = 0.5   # pseudo-count of a bare form
    max_word: int = 24
    grave_rule: bool = True  # oxytones: grave unless last or before an enclitic (else: backbone decides)
    seg_dia: bool = False    # backbone diacritic scores also weigh word division (else: only choose forms)
    govern_dative: bool = True  # the word after a dative-only preposition / dative article is a dative

    def to_dict(self) -> dict[str, float]:
        """JSON-friendly form."""
        return asdict(self)


@dataclass
class LatticeResult:
    """Decoded planes (offsets ``0..n-1``) and the word arcs chosen:
    ``words`` rows ``(start, length, kind)`` with kind ARC_OOV / ARC_LEX / ARC_HOST."""

    planes: CharPlanes
    words: np.ndarray
    score: float


@cache
def _enclitic_hashes() -> np.ndarray:
    return _hashes(ENCLITICS)


@cache
def _hashes(words: tuple[str, ...]) -> np.ndarray:
    """Sorted unique hashes of bare ``words`` (as :func:`~.formlex.hash_rows` hashes spans)."""
    planes = encode_planes(" ".join(words))
    spans = word_spans(planes)
    return np.unique(hash_rows(planes.letters, spans[:, 0], spans[:, 1] - spans[:, 0]))


@cache
def _iota_subscript() -> np.ndarray:
    """(48,) bool: the diacritic state carries an iota subscript."""
    return np.array([dia_features(state)[2] != 0 for state in range(N_DIA_STATES)])


def _govern_dative(letters: np.ndarray, words: list[tuple[int, int, int, int, bool]], dia: np.ndarray,
                   lexicon: FormLexicon, params: LatticeParams) -> list[tuple[int, int, int, int, bool]]:
    """The path with the word after a dative-only preposition or a dative singular article
    (postpositives between them kept out) written as the best lexicon form of its letters with a
    final iota subscript, where the lexicon has one (see the module doc)."""
    if len(words) < 2:
        return words
    spans = np.array([(s, L) for s, L, _, _, _ in words], np.int64)
    hashes = hash_rows(letters, spans[:, 0], spans[:, 1])
    prep = np.isin(hashes, _hashes(DATIVE_PREPOSITIONS))
    article = np.isin(hashes, _hashes(DATIVE_ARTICLES))
    particle = np.isin(hashes, _hashes(POSTPOSITIVES))
    if not (prep[:-1] | article[:-1]).any():
        return words
    iota = _iota_subscript()
    out = list(words)
    governed = False
    for w in range(1, len(words)):  # words, not letters; only the few after a preposition do work
        _, L0, kind0, f0, _ = out[w - 1]
        lex0 = kind0 != ARC_OOV and f0 >= 0
        is_prep = bool(prep[w - 1]) and lex0 and \
            dia_breathing()[lexicon.dia[lexicon.start[f0]]] != BREATHING_ROUGH  # ἐν, not ἕν "one"
        is_article = bool(article[w - 1]) and lex0 and bool(iota[lexicon.dia[lexicon.start[f0] + L0 - 1]])
        governed = is_prep or is_article or (governed and bool(particle[w - 1]))
        s, L, kind, f, grave = out[w]
        if not governed or kind == ARC_OOV or f < 0 or iota[lexicon.dia[lexicon.start[f] + L - 1]]:
            continue
        ki = int(np.searchsorted(lexicon.keys, hashes[w]))
        if ki >= len(lexicon.keys) or lexicon.keys[ki] != hashes[w]:
            continue
        forms = np.arange(lexicon.key_first[ki], lexicon.key_first[ki] + lexicon.key_n[ki])
        forms = forms[(lexicon.length[forms] == L)]
        forms = forms[iota[lexicon.dia[lexicon.start[forms] + L - 1]]]
        if not len(forms):
            continue
        idx = lexicon.start[forms][:, None] + np.arange(L)[None, :]
        same = (lexicon.letters[idx] == letters[s:s + L][None, :]).all(axis=1)  # hash collision guard
        forms, idx = forms[same], idx[same]
        if not len(forms):
            continue
        score = (params.w_dia * dia[s + np.arange(L)[None, :], lexicon.dia[idx].astype(np.int64)].sum(axis=1)
                 + params.w_form * np.log(lexicon.count[forms] + params.alpha_form))
        out[w] = (s, L, ARC_LEX, int(forms[int(score.argmax())]), grave)
    return out


@cache
def _context_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per letter id, bool (27, 48) masks of states allowed as: non-site unaccented,
    non-site accented, site unaccented, site accented (site = carries the breathing)."""
    valid = dia_valid_table()
    br, acc = dia_breathing(), dia_accent() != 0
    site_ok = br != BREATHING_NONE
    rho = np.zeros((N_CHAR_IDS, 1), bool)
    rho[_RHO] = True
    site_valid = valid & np.where(rho, (br == BREATHING_ROUGH)[None, :], site_ok[None, :])
    non = valid & (br == BREATHING_NONE)[None, :]
    return non & ~acc, non & acc, site_valid & ~acc, site_valid & acc


def _best(logp: np.ndarray, letters: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.where(table[letters], logp, NEG)
    arg = scores.argmax(1)
    return scores[np.arange(len(letters)), arg], arg


def _oov_arcs(letters: np.ndarray, dia: np.ndarray, max_word: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(n, max_word) best per-letter diacritic score of every span under the orthography
    rules, and the per-letter argmax states needed to write the chosen spans out."""
    n = len(letters)
    lt = letters.astype(np.int64)
    t_bn, t_an, t_bs, t_as = _context_tables()
    bn, abn = _best(dia, lt, t_bn)
    an, aan = _best(dia, lt, t_an)
    bs, abs_ = _best(dia, lt, t_bs)
    as_, aas = _best(dia, lt, t_as)
    has_site = _VOWEL[lt] | (lt == _RHO)
    nxt = np.full(n, -1, np.int64)
    nxt[:-1] = lt[1:]
    diph = np.zeros(n, bool)
    ok = nxt >= 0
    diph[ok] = _VOWEL[lt[ok]] & (((nxt[ok] == _IOTA) & _BEFORE_IOTA[lt[ok]])
                                 | ((nxt[ok] == _UPSILON) & _BEFORE_UPSILON[lt[ok]]))
    out = np.full((n, max_word), NEG)
    total = np.zeros(n)
    gmax = np.zeros(n)  # best accent gain so far (0 = no accent)
    for k in range(max_word):
        m = n - k
        if m <= 0:
            break
        idx = np.arange(m) + k
        # site of a word starting at i: i (vowel/rho), i+1 for an initial diphthong (length >= 2)
        if k == 0:
            site_here = has_site[:m]
        elif k == 1:
            site_here = diph[:m]
            # a diphthong's first vowel loses the site it had at length 1
            undo = diph[:m]
            total[:m] = np.where(undo, total[:m] - bs[:m] + bn[:m], total[:m])
            gmax[:m] = np.where(undo, np.maximum(0.0, an[:m] - bn[:m]), gmax[:m])
        else:
            site_here = np.zeros(m, bool)
        b = np.where(site_here, bs[idx], bn[idx])
        g = np.where(site_here, as_[idx] - bs[idx], an[idx] - bn[idx])
        total = total[:m] + b
        gmax = np.maximum(gmax[:m], g)
        out[:m, k] = total + gmax
    return out, {"bn": abn, "an": aan, "bs": abs_, "as": aas, "gn": an - bn, "gs": as_ - bs,
                 "diph": diph, "has_site": has_site}


def _write_oov(dia_out: np.ndarray, s: int, e: int, tabs: dict[str, np.ndarray]) -> None:
    """Per-letter states of an out-of-lexicon word ``[s, e)`` (its best accent or none)."""
    site = s + 1 if (e - s >= 2 and tabs["diph"][s]) else (s if tabs["has_site"][s] else -1)
    idx = np.arange(s, e)
    is_site = idx == site
    dia_out[s:e] = np.where(is_site, tabs["bs"][s:e], tabs["bn"][s:e])
    gain = np.where(is_site, tabs["gs"][s:e], tabs["gn"][s:e])
    k = int(gain.argmax())
    if gain[k] > 0:
        dia_out[s + k] = tabs["as"][s + k] if is_site[k] else tabs["an"][s + k]


@dataclass
class _ArcTable:
    """Best arc per span ``[i, i + L)`` of one kind: score, arc kind, form row, grave."""

    score: np.ndarray
    kind: np.ndarray
    form: np.ndarray
    grave: np.ndarray

    @classmethod
    def empty(cls, n: int, width: int) -> _ArcTable:
        return cls(np.full((n, width), NEG), np.full((n, width), ARC_OOV, np.int8),
                   np.full((n, width), -1, np.int64), np.zeros((n, width), bool))

    def offer(self, i: np.ndarray, length: np.ndarray, score: np.ndarray, kind: int, form: np.ndarray,
              grave: np.ndarray) -> None:
        """Keep the offered arcs that beat the current ones (one offer per span)."""
        better = score > self.score[i, length - 1]
        bi, bl = i[better], length[better] - 1
        self.score[bi, bl] = score[better]
        self.kind[bi, bl] = kind
        self.form[bi, bl] = form[better]
        self.grave[bi, bl] = grave[better]


def _group_best(group: np.ndarray, values: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the best value and the index of its first maximiser (-1 when the group
    has no finite value)."""
    best = np.full(n_groups, NEG)
    np.maximum.at(best, group, values)
    hit = (values >= best[group]) & (values > NEG / 2)
    arg = np.full(n_groups, -1, np.int64)
    idx = np.flatnonzero(hit)
    arg[group[idx][::-1]] = idx[::-1]
    return best, arg


def _lexicon_arcs(letters: np.ndarray, dia: np.ndarray, cap: np.ndarray, lexicon: FormLexicon,
                  params: LatticeParams, backbone: bool, allowed: np.ndarray, span_bnd: np.ndarray, W: int,
                  tab: dict[str, _ArcTable]) -> None:
    """Score every stored form of every lexicon span and offer the best per span and kind."""
    mi, ml, mk = lexicon.match(letters, W, allowed)  # only the spans the word ends allow
    if not len(mi):
        return
    nf = lexicon.key_n[mk]
    rep = np.repeat(np.arange(len(mi)), nf)
    f = lexicon.key_first[mk][rep] + (np.arange(int(nf.sum())) - np.repeat(np.cumsum(nf) - nf, nf))
    ok = lexicon.length[f] == ml[rep]
    rep, f = rep[ok], f[ok]
    flen = lexicon.length[f]
    let_rep = np.repeat(np.arange(len(f)), flen)
    starts_c = np.cumsum(flen) - flen
    within = np.arange(int(flen.sum())) - np.repeat(starts_c, flen)
    pos = mi[rep][let_rep] + within
    src = lexicon.start[f][let_rep] + within
    state = lexicon.dia[src].astype(np.int64)
    bad = np.zeros(len(f), bool)
    np.logical_or.at(bad, let_rep, lexicon.letters[src] != letters[pos])  # hash collision guard
    d_sum = np.add.reduceat(dia[pos, state], starts_c)
    c_sum = np.add.reduceat(cap[pos, lexicon.caps[src].astype(np.int64)], starts_c)
    # an oxytone's final accent: acute or grave, as the backbone prefers
    oxy = lexicon.oxy[f]
    has_oxy = oxy >= 0
    grave = np.zeros(len(f), bool)
    if backbone and not params.grave_rule and has_oxy.any():
        p_oxy = mi[rep][has_oxy] + oxy[has_oxy]
        s_oxy = lexicon.dia[lexicon.start[f][has_oxy] + oxy[has_oxy]].astype(np.int64)
        delta = dia[p_oxy, TO_GRAVE[s_oxy]] - dia[p_oxy, s_oxy]
        d_sum[has_oxy] += np.maximum(delta, 0.0)
        grave[has_oxy] = delta > 0
    key_n = lexicon.key_n[mk][rep]
    log_form = (np.log(lexicon.count[f] + params.alpha_form)
                - np.log(lexicon.key_count[mk][rep] + params.alpha_form * key_n))
    form_score = params.w_dia * d_sum + params.w_cap * c_sum + params.w_form * log_form
    form_score[bad] = NEG
    span_best = np.zeros(len(mi))
    if not params.seg_dia:
        # the backbone ranks the forms of a span; spans compete by the lexicon's scores alone
        # (bare-form LM + the best form prior), so its diacritic guesses at unknown word
        # boundaries (e.g. breathings) cannot pull the division
        span_best[:] = NEG
        np.maximum.at(span_best, rep, form_score)
        prior_best = np.full(len(mi), NEG)
        np.maximum.at(prior_best, rep, np.where(bad, NEG, params.w_form * log_form))
        span_best -= prior_best
    # enclitic host variant: an extra acute on the ultima
    is_encl = np.isin(lexicon.keys[mk], _enclitic_hashes())
    hpos = lexicon.host[f]
    eligible = (hpos >= 0) & ~is_encl[rep]
    host_score = np.full(len(f), NEG)
    if eligible.any():
        p_h = mi[rep][eligible] + hpos[eligible]
        s_h = lexicon.dia[lexicon.start[f][eligible] + hpos[eligible]].astype(np.int64)
        host_score[eligible] = (form_score[eligible] + params.host
                                + params.w_dia * (dia[p_h, ADD_ACUTE[s_h]] - dia[p_h, s_h]))
        host_score[bad] = NEG
    if not params.seg_dia:
        form_score = form_score - span_best[rep]
        host_score = host_score - span_best[rep]
    key_c = lexicon.key_count[mk].astype(np.float64)
    total = lexicon.total_count
    log_key = np.log(key_c + params.alpha_key) - np.log(total + params.alpha_key * float(len(lexicon.keys)))
    word = params.w_lm * log_key + params.w_bnd * span_bnd[mi, ml - 1]
    n_m = len(mi)
    for name, values in (("free", np.where(eligible, NEG, form_score)), ("eligible", np.where(eligible, form_score, NEG)),
                         ("host", host_score)):
        best, arg = _group_best(rep, values, n_m)
        live = arg >= 0
        if name == "free":
            target = np.where(is_encl, 1, 0)[live]
            for t_name, t in (("free", 0), ("encl", 1)):
                sel = target == t
                tab[t_name].offer(mi[live][sel], ml[live][sel], (word + best)[live][sel], ARC_LEX,
                                  f[arg[live]][sel], grave[arg[live]][sel])
        else:
            tab[name].offer(mi[live], ml[live], (word + best)[live], ARC_HOST if name == "host" else ARC_LEX,
                            f[arg[live]], grave[arg[live]])


def _viterbi(tab: dict[str, _ArcTable], n: int, W: int) -> tuple[list[tuple[int, int, int, int, bool]], float]:
    """Best path over word ends.  States: 0 free, 1 after an enclitic host (an enclitic
    must follow), 2 after a form that could host but did not (no enclitic may follow).
    Arcs: ``free`` (out-of-lexicon or lexicon, not enclitic) -> 0 from 0/2; ``encl`` -> 0
    from 0/1; ``eligible`` -> 2 from 0/2; ``host`` -> 1 from 0/2."""
    def by_end(a: np.ndarray) -> np.ndarray:
        out = np.full((n + 1, W), NEG)
        for k in range(min(W, n)):
            out[k + 1:, k] = a[: n - k, k]
        return out

    # the four arc kinds by word end, in the order they are scored below: free and enclitic
    # arcs into state 0, host arcs into 1, eligible arcs into 2
    ends = np.stack([by_end(tab[k].score) for k in ("free", "encl", "host", "eligible")], axis=1)  # (n+1, 4, W)
    # a letter where no arc ends (inside a word whose division is given) leaves every state
    # unreachable there: skipping it changes no reachable score, so no path (the full loop
    # runs when no path reaches the end, to give what it gives then)
    live = np.flatnonzero((ends[1:] > NEG / 2).any(axis=(1, 2))) + 1
    s, back = _recursion(ends, live, n, W)
    if max(s[0, n], s[2, n]) <= NEG / 2 and len(live) < n:
        s, back = _recursion(ends, np.arange(1, n + 1), n, W)
    names = ("free", "encl", "eligible", "host")
    state = 2 if s[2, n] > s[0, n] else 0
    total = float(s[state, n])
    words: list[tuple[int, int, int, int, bool]] = []
    j = n
    while j > 0:
        L, prev, t = (int(x) for x in back[state, j])
        i = j - L
        arcs = tab[names[t]]
        words.append((i, L, int(arcs.kind[i, L - 1]), int(arcs.form[i, L - 1]), bool(arcs.grave[i, L - 1])))
        state, j = prev, i
    words.reverse()
    return words, total


def _recursion(ends: np.ndarray, positions: np.ndarray, n: int, W: int) -> tuple[np.ndarray, np.ndarray]:
    """State scores ``(3, n + 1)`` and back pointers of :func:`_viterbi`'s recursion at the word
    ends ``positions`` (ascending; every other end stays unreachable)."""
    s = np.full((3, n + 1), NEG)
    s[0, 0] = 0.0
    back = np.zeros((3, n + 1, 3), np.int64)  # (length, from state, arc table index)
    rows = np.arange(4)
    for j in positions.tolist():
        m = min(W, j)
        p0, p1, p2 = s[:, j - 1::-1][:, :m]
        best = np.empty((4, m))  # the previous state's best score per arc kind, then + the arc
        best[0] = np.maximum(p0, p2)
        best[1] = np.maximum(p0, p1)
        best[2] = best[0]
        best[3] = best[0]
        best += ends[j, :, :m]
        k = best.argmax(axis=1)  # per kind, the first of equal maxima (as one argmax each)
        (a, b, c, g), (ka, kb, kc, kg) = best[rows, k].tolist(), k.tolist()
        if b > a:
            s[0, j], back[0, j] = b, (kb + 1, 1 if p1[kb] > p0[kb] else 0, 1)
        else:
            s[0, j], back[0, j] = a, (ka + 1, 2 if p2[ka] > p0[ka] else 0, 0)
        s[1, j], back[1, j] = c, (kc + 1, 2 if p2[kc] > p0[kc] else 0, 3)
        s[2, j], back[2, j] = g, (kg + 1, 2 if p2[kg] > p0[kg] else 0, 2)
    return s, back


def decode_lattice(
    letters: np.ndarray,
    logp: dict[str, np.ndarray] | None,
    lexicon: FormLexicon | None,
    params: LatticeParams | None = None,
    *,
    must_end: np.ndarray | None = None,
    no_end: np.ndarray | None = None,
) -> LatticeResult:
    """Best word division, diacritics, capitals, punctuation and elision of ``letters``.

    ``logp``: per-letter log-probabilities ``{"boundary": (n, 3), "dia": (n, 48),
    "cap": (n, 2), "punct": (n, 6)}`` (missing heads count as uniform; ``None`` = the
    lexicon alone).  ``must_end`` / ``no_end``: letters after which a word must / must not
    end (e.g. the spaces of divided input)."""
    params = params or LatticeParams()
    letters = np.asarray(letters, dtype=np.uint8)
    n = len(letters)
    logp = logp or {}
    backbone = "dia" in logp
    dia = np.asarray(logp.get("dia", np.zeros((n, N_DIA_STATES))), np.float64)
    bnd = np.asarray(logp.get("boundary", np.zeros((n, N_BOUNDARY_OUT))), np.float64)
    cap = np.asarray(logp.get("cap", np.zeros((n, 2))), np.float64)
    pun = np.asarray(logp.get("punct", np.zeros((n, N_PUNCT_OUT))), np.float64)
    W = max(1, min(params.max_word, lexicon.max_len if lexicon is not None else params.max_word))
    if n == 0:
        return LatticeResult(CharPlanes(letters, *(np.zeros(0, np.uint8),) * 4, np.zeros(0, np.int64)),
                             np.zeros((0, 3), np.int64), 0.0)

    # ---- word-division score of every span: internal letters stay inside, the last ends it
    cum_int = np.concatenate([[0.0], np.cumsum(bnd[:, BND_INTERNAL])])
    end_lp = np.logaddexp(bnd[:, BND_WORD_END], bnd[:, BND_SENT_END])
    ii = np.arange(n)[:, None]
    LL = np.arange(1, W + 1)[None, :]
    last = ii + LL - 1
    inside = last < n
    last_c = np.minimum(last, n - 1)
    span_bnd = np.where(inside, cum_int[last_c] - cum_int[ii] + end_lp[last_c], NEG)
    allowed = inside.copy()
    if must_end is not None:
        cm = np.concatenate([[0], np.cumsum(np.asarray(must_end, bool))])
        allowed &= (cm[last_c] - cm[ii]) == 0  # no forced end strictly inside the span
    if no_end is not None:
        allowed &= ~np.asarray(no_end, bool)[last_c]

    # ---- capitals of an out-of-lexicon word: optional capital on its first letter
    cum_low = np.concatenate([[0.0], np.cumsum(cap[:, CAP_LOWER])])
    first_cap = np.maximum(cap[:, CAP_LOWER], cap[:, CAP_UPPER])
    oov_cap = np.where(inside, cum_low[last_c + 1] - cum_low[ii] - cap[:, CAP_LOWER][:, None] + first_cap[:, None],
                       NEG)

    # ---- out-of-lexicon arcs
    oov_dia, tabs = _oov_arcs(letters, dia, W)
    oov = params.w_bnd * span_bnd + params.oov_word + params.oov_letter * LL
    if params.seg_dia:
        oov = oov + params.w_dia * oov_dia + params.w_cap * oov_cap
    oov = np.where(allowed, oov, NEG)
    # arc tables (n, W): score, kind, form, grave, per target state (see _viterbi)
    tab = {name: _ArcTable.empty(n, W) for name in ("free", "encl", "eligible", "host")}
    tab["free"].score[:] = oov

    # ---- lexicon arcs
    if lexicon is not None and len(lexicon):
        _lexicon_arcs(letters, dia, cap, lexicon, params, backbone, allowed, span_bnd, W, tab)

    words, total = _viterbi(tab, n, W)
    if lexicon is not None and len(lexicon) and params.govern_dative:
        words = _govern_dative(letters, words, dia, lexicon, params)
    planes = _write(letters, words, lexicon, tabs, bnd, pun, cap, backbone, params)
    arr = np.array([(s, L, k) for s, L, k, _, _ in words], np.int64).reshape(-1, 3)
    return LatticeResult(planes, arr, total)


def _write(letters: np.ndarray, words: list[tuple[int, int, int, int, bool]], lexicon: FormLexicon | None,
           tabs: dict[str, np.ndarray], bnd: np.ndarray, pun: np.ndarray, cap: np.ndarray, backbone: bool,
           params: LatticeParams) -> CharPlanes:
    n = len(letters)
    dia_out = np.zeros(n, np.uint8)
    cap_out = np.full(n, CAP_LOWER, np.uint8)
    elided = np.zeros(n, bool)
    ends = np.zeros(n, bool)
    spans = np.array([(s, L) for s, L, _, _, _ in words], np.int64).reshape(-1, 2)
    is_encl = np.isin(hash_rows(letters, spans[:, 0], spans[:, 1]), _enclitic_hashes())
    enclitic_next = np.zeros(len(words), bool)
    enclitic_next[:-1] = is_encl[1:]
    for w, (s, L, kind, f, grave) in enumerate(words):
        e = s + L
        ends[e - 1] = True
        if kind == ARC_OOV or lexicon is None or f < 0:
            _write_oov(dia_out, s, e, tabs)
            if params.w_cap > 0 and cap[s, CAP_UPPER] > cap[s, CAP_LOWER]:
                cap_out[s] = CAP_UPPER
            continue
        st = int(lexicon.start[f])
        dia_out[s:e] = lexicon.dia[st:st + L]
        cap_out[s:e] = lexicon.caps[st:st + L]
        elided[e - 1] = bool(lexicon.elided[f])
        ox = int(lexicon.oxy[f])
        if ox >= 0:
            if not backbone or params.grave_rule:
                grave = not (enclitic_next[w] or w == len(words) - 1)
            if grave and not enclitic_next[w]:
                dia_out[s + ox] = TO_GRAVE[dia_out[s + ox]]
        if kind == ARC_HOST:
            hp = int(lexicon.host[f])
            dia_out[s + hp] = ADD_ACUTE[dia_out[s + hp]]
    # boundary and punctuation at the chosen word ends (jointly, as the backbone prefers)
    boundary = np.full(n, BND_INTERNAL, np.uint8)
    punct = np.full(n, PUNCT_NONE, np.uint8)
    pair = pair_valid()
    e_idx = np.flatnonzero(ends)
    joint = bnd[e_idx][:, :, None] + pun[e_idx][:, None, :]
    allow = np.broadcast_to(pair, joint.shape).copy()
    allow[:, BND_INTERNAL, :] = False
    allow[-1, BND_WORD_END, :] = False
    allow[-1, BND_SENT_END, PUNCT_NONE] = True
    if not backbone:
        allow[:, :, 1:] = False
        allow[:-1, BND_SENT_END, :] = False
    best = np.where(allow, joint, -np.inf).reshape(len(e_idx), -1).argmax(1)
    boundary[e_idx] = best // N_PUNCT_OUT
    punct[e_idx] = best % N_PUNCT_OUT
    return CharPlanes(letters.copy(), boundary, dia_out, cap_out, punct, np.arange(n, dtype=np.int64),
                      elided=elided)


__all__ = ["DATIVE_ARTICLES", "DATIVE_PREPOSITIONS", "ENCLITICS", "POSTPOSITIVES", "LatticeParams", "LatticeResult", "decode_lattice"]
