"""Harmonise AGDT 2.1, AGDT 1.6 Homer, Gorman and Pedalion annotation into one convention:
one well-formed tree per sentence, 2.x tags, clean relation labels and lemmas.

What :func:`harmonise` does, in order (every change is counted in :class:`HarmoniseStats`):

1. **Artificial and gap nodes are dropped.** Elliptic nodes (``artificial="elliptic"`` or
   ``insertion_id``) and Pedalion's gap placeholders (pos ``z`` or relation ``GAP``:
   ``G?``, ``G_L``, ``...`` standing for a lacuna) are not words of the text. Their
   dependents are re-attached to the dropped node's head (following chains of dropped
   nodes); the dependents keep their own relations.
2. **Bad heads.** A head that names no word of the sentence, or the word itself, makes the
   word a root-level word; a cycle is broken by making its first word root-level.
3. **Relation labels** are cleaned (:func:`clean_relation`): Pedalion's reviewer notes
   (``!!!congruentiefout ...!!!ADV``, ``%%%SBJ``) are stripped, Greek look-alike capitals
   (``AuxΖ`` with a Greek Zeta, ``AuxΚ``, ``AuxΓ``) become Latin, wrong case (``Auxy``)
   and typos (``AucZ``, ``PRED_C0``, ``AuxZAuxZ``, ``MWE2``) are fixed, repeated
   ``_CO`` collapses, old elliptic path labels (``SBJ_ExD0_ADV``) keep their first
   relation, ``PUNCT`` becomes ``AuxX`` (``AuxK`` at the end of the sentence), ``AUX``
   becomes ``AuxY``; empty/unknown labels become ``UNDEFINED``.
4. **Punctuation** (``punct="root"``, the default): AGDT 2.1 attaches commas (AuxX)
   inside the tree but the final mark (AuxK) to the root; Gorman and Pedalion attach
   nearly every mark to the artificial root 0. All punctuation words (pos ``u`` with
   relation AuxX/AuxK/AuxG) without dependents are attached to the sentence's main root,
   so the parser sees one convention. ``punct="keep"`` keeps in-tree attachments and only
   moves root-level marks to the main root.
5. **One root.** Sources often put several words under root 0 (a PRED and an ExD,
   two PREDs, punctuation). The main root is the first root-level word labelled
   ``PRED``, else the first labelled ``COORD``/``APOS``, else the first non-punctuation
   word, else the first word; every other root-level word is attached to it with its
   own relation. The result has exactly one word with head 0.
6. **Tags** go through :func:`.agdt_tags.normalise_tag`; **lemmas** through
   :func:`clean_lemma` (homograph digits ``ἄν1`` stripped; ``punc1``/``comma1``/empty
   lemmas of punctuation become the form; an empty lemma becomes the form).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from stoicheia_spacy.errors import TreebankError
from stoicheia_spacy.morph.agdt_tags import TagStats, normalise_tag

from .readers import RawSentence

#: The 24 base relations (suffixes ``_CO``, ``_AP``, ``_PA`` stripped); the released
#: parser's label head has 24 classes.
BASE_RELATIONS: tuple[str, ...] = (
    "PRED", "SBJ", "OBJ", "ATR", "ADV", "ATV", "AtvV", "PNOM", "OCOMP", "COORD", "APOS",
    "AuxP", "AuxC", "AuxR", "AuxV", "AuxX", "AuxG", "AuxK", "AuxY", "AuxZ", "ExD", "XSEG",
    "MWE", "UNDEFINED",
)  # fmt: skip
RELATION_SUFFIXES: tuple[str, ...] = ("CO", "AP", "PA")
PUNCT_RELATIONS = frozenset({"AuxX", "AuxK", "AuxG"})

_BASE_BY_LOWER = {r.lower(): r for r in BASE_RELATIONS}
_ALIASES = {
    "aucz": "AuxZ", "auxzauxz": "AuxZ", "fauxy": "AuxY", "mwe2": "MWE", "aux": "AuxY",
    "nil": "UNDEFINED", "conj": "COORD",
}  # fmt: skip
_GREEK_LOOKALIKE = str.maketrans("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧΓ", "ABEZHIKMNOPTYXG")
_NOTE_PREFIX = re.compile(r"^(?:!!!.*?!!!|%%%)+")
_EXD = re.compile(r"^exd\d*$", re.IGNORECASE)
_HOMOGRAPH_DIGITS = re.compile(r"(?<=\D)\d+$")
_PUNCT_LEMMAS = re.compile(r"^(?:punc|comma|period|colon|question|dash|quote|apostrophe)\d*$")


@dataclass
class Sentence:
    """A harmonised sentence: ``heads`` are 1-based word indices, exactly one ``0``."""

    source: str
    doc_id: str
    sent_id: str
    work_id: str
    forms: list[str]
    lemmas: list[str]
    tags: list[str]
    relations: list[str]
    heads: list[int]

    def __len__(self) -> int:
        return len(self.forms)


@dataclass
class HarmoniseStats:
    """What harmonisation changed: ``events[kind]`` counts and relation rewrites."""

    sentences: int = 0
    words_in: int = 0
    words_out: int = 0
    events: Counter[str] = field(default_factory=Counter)
    relation_fixes: Counter[tuple[str, str]] = field(default_factory=Counter)
    tags: TagStats = field(default_factory=TagStats)

    def merge(self, other: HarmoniseStats) -> None:
        """Add ``other``'s counts to this one."""
        self.sentences += other.sentences
        self.words_in += other.words_in
        self.words_out += other.words_out
        self.events.update(other.events)
        self.relation_fixes.update(other.relation_fixes)
        self.tags.merge(other.tags)


def base_relation(relation: str) -> str:
    """The relation without its ``_CO``/``_AP``/``_PA`` suffixes (``OBJ_AP_CO`` -> ``OBJ``)."""
    return relation.split("_", 1)[0]


def clean_relation(raw: str, *, is_punct: bool = False, is_last: bool = False) -> str:
    """A well-formed relation (``BASE`` plus optional ``_AP``/``_PA`` and ``_CO``) for a
    raw label; see the module docstring for the rules. Never raises."""
    label = _NOTE_PREFIX.sub("", raw.strip()).translate(_GREEK_LOOKALIKE)
    parts = [p for p in label.split("_") if p]
    base = ""
    suffixes: list[str] = []
    if parts:
        head = parts[0]
        key = head.lower()
        if key in _BASE_BY_LOWER:
            base = _BASE_BY_LOWER[key]
        elif key in _ALIASES:
            base = _ALIASES[key]
        elif key == "punct":
            base = "AuxK" if is_last else "AuxX"
        elif key.startswith("aux") and key[:4] in _BASE_BY_LOWER:
            base = _BASE_BY_LOWER[key[:4]]
        for part in parts[1:]:
            if _EXD.match(part):
                break
            up = part.upper().replace("0", "O")
            if up in RELATION_SUFFIXES and up not in suffixes:
                suffixes.append(up)
    if not base:
        if is_punct:
            return "AuxK" if is_last else "AuxX"
        return "UNDEFINED"
    ordered = [s for s in ("AP", "PA") if s in suffixes] + (["CO"] if "CO" in suffixes else [])
    return "_".join([base, *ordered])


def clean_lemma(lemma: str, form: str, tag: str) -> str:
    """NFC lemma without homograph digits; the form for punctuation or an empty lemma."""
    lemma = unicodedata.normalize("NFC", lemma.strip())
    if tag[:1] == "u" and (not lemma or _PUNCT_LEMMAS.match(lemma) or lemma == "_"):
        return form
    lemma = _HOMOGRAPH_DIGITS.sub("", lemma)
    if not lemma or lemma == "_":
        return form
    return lemma


def _is_gap(raw_tag: str, raw_relation: str) -> bool:
    return raw_tag[:1] == "z" or raw_relation.strip().upper() == "GAP"


def _choose_main_root(roots: list[int], relations: list[str], is_punct: list[bool]) -> int:
    for wanted in (("PRED",), ("COORD", "APOS")):
        for r in roots:
            if not is_punct[r] and base_relation(relations[r]) in wanted:
                return r
    for r in roots:
        if not is_punct[r]:
            return r
    return roots[0]


def harmonise(
    raw: RawSentence,
    *,
    punct: Literal["root", "keep"] = "root",
    stats: HarmoniseStats | None = None,
) -> Sentence | None:
    """One well-formed tree from a raw sentence (module docstring), or ``None`` when no
    word is left (a sentence made only of artificial or gap nodes)."""
    if punct not in ("root", "keep"):
        raise TreebankError(f"punct must be 'root' or 'keep', not {punct!r}")
    st = stats if stats is not None else HarmoniseStats()
    n_raw = len(raw.forms)
    st.sentences += 1
    st.words_in += n_raw
    drop = [
        raw.artificial[i] or _is_gap(raw.tags[i], raw.relations[i]) or not raw.forms[i].strip()
        for i in range(n_raw)
    ]
    for i in range(n_raw):
        if drop[i]:
            kind = "artificial" if raw.artificial[i] else ("gap" if raw.forms[i].strip() else "empty_form")
            st.events[f"dropped_{kind}"] += 1
    index_of: dict[int, int] = {}
    for i, wid in enumerate(raw.ids):
        if wid in index_of:
            st.events["duplicate_id"] += 1
        else:
            index_of[wid] = i

    # Resolve every kept word's head to a kept word index (or -1 = root-level).
    resolved: list[int] = []
    for i in range(n_raw):
        if drop[i]:
            resolved.append(-2)
            continue
        h = raw.heads[i]
        seen = {i}
        while True:
            if h == 0:
                target = -1
                break
            j = index_of.get(h)
            if j is None or j in seen:
                st.events["self_loop" if j == i else "bad_head"] += 1
                target = -1
                break
            if drop[j]:
                seen.add(j)
                h = raw.heads[j]
                st.events["reattached_from_dropped"] += 1
                continue
            target = j
            break
        resolved.append(target)

    keep = [i for i in range(n_raw) if not drop[i]]
    if not keep:
        st.events["empty_sentence"] += 1
        return None
    new_index = {old: new for new, old in enumerate(keep)}
    n = len(keep)
    heads = [new_index[resolved[i]] if resolved[i] >= 0 else -1 for i in keep]
    tags = [normalise_tag(raw.tags[i], st.tags) for i in keep]
    forms = [raw.forms[i] for i in keep]
    last_word = n - 1
    is_punct = [tags[k][0] == "u" for k in range(n)]
    relations = []
    for k, i in enumerate(keep):
        rel = clean_relation(raw.relations[i], is_punct=is_punct[k], is_last=k == last_word)
        if rel != raw.relations[i]:
            st.relation_fixes[(raw.relations[i], rel)] += 1
        relations.append(rel)
    lemmas = [clean_lemma(raw.lemmas[i], forms[k], tags[k]) for k, i in enumerate(keep)]

    # Break cycles: walk up from each word; a walk that returns to a word of the current
    # walk has found a cycle, whose first (lowest-index) word becomes root-level.
    state = [0] * n  # 0 unvisited, 1 on the current path, 2 done (reaches the root)
    for start in range(n):
        path: list[int] = []
        k = start
        while k >= 0 and state[k] == 0:
            state[k] = 1
            path.append(k)
            k = heads[k]
        if k >= 0 and state[k] == 1:
            cycle = path[path.index(k) :]
            breaker = min(cycle)
            heads[breaker] = -1
            st.events["cycle_broken"] += 1
        for p in path:
            state[p] = 2

    has_dependents = [False] * n
    for k in range(n):
        if heads[k] >= 0:
            has_dependents[heads[k]] = True
    movable_punct = [
        is_punct[k] and base_relation(relations[k]) in PUNCT_RELATIONS and not has_dependents[k]
        for k in range(n)
    ]
    roots = [k for k in range(n) if heads[k] < 0]
    candidates = [k for k in roots if not movable_punct[k]] or roots
    main = _choose_main_root(candidates, relations, is_punct)
    if len(roots) > 1:
        extra = sum(1 for k in roots if k != main and not movable_punct[k])
        if extra:
            st.events["extra_roots_attached"] += extra
    for k in roots:
        if k != main:
            heads[k] = main
    if punct == "root":
        for k in range(n):
            if movable_punct[k] and k != main and heads[k] != main:
                heads[k] = main
                st.events["punct_moved_to_root"] += 1
    heads[main] = -1
    st.words_out += n
    return Sentence(
        source=raw.source,
        doc_id=raw.doc_id,
        sent_id=raw.sent_id,
        work_id=raw.work_id,
        forms=forms,
        lemmas=lemmas,
        tags=tags,
        relations=relations,
        heads=[h + 1 for h in heads],
    )


def is_tree(heads: list[int]) -> bool:
    """Whether 1-based ``heads`` (0 = root) form one tree: exactly one root, no cycle."""
    n = len(heads)
    if n == 0 or sum(1 for h in heads if h == 0) != 1:
        return False
    if any(h < 0 or h > n for h in heads):
        return False
    for start in range(n):
        k, steps = start + 1, 0
        while k != 0:
            k = heads[k - 1]
            steps += 1
            if steps > n:
                return False
    return True
