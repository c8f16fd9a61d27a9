"""AGDT -> UD dependency trees: what the parser writes under ``scheme = "ud"``.

The heads are trained on AGDT trees (function words head their phrase: a preposition its
noun, a subordinator its verb, a conjunction its conjuncts, εἰμί its predicate noun). UD
makes content words heads. One sentence is rewritten in four passes, each on the tree the
previous one left, with the conventions of UD_Ancient_Greek-Perseus (itself converted from
AGDT):

1. **prepositions and subordinators** (``AuxP``, ``AuxC``), deepest first: the function
   word's content child (its first dependent that is not punctuation or a particle) takes
   the function word's head, and keeps its own AGDT relation (``ADV``, ``ATR``...); the
   function word hangs on it as ``case`` / ``mark``, its other dependents move with it;
2. **copulas**: a form of εἰμί with a ``PNOM`` dependent (or a coordination of them) hands
   its head and relation to that predicate, hangs on it as ``cop``, and its dependents
   (subject, adverbials, particles) move to the predicate;
3. **coordination and apposition** (``COORD``, ``APOS``), deepest first: the first member
   (a dependent whose relation ends in ``_CO`` / ``_AP``, or a nested coordination) takes
   the coordinator's head and the members' relation; the other members hang on it as
   ``conj`` / ``appos``; the coordinator as ``cc`` (UD Perseus attaches it to the first
   conjunct); shared modifiers move to the first member; punctuation stays where it was;
4. **labels**: every word still carrying an AGDT relation gets the UD relation of
   :data:`~stoicheia_spacy.morph.agdt_ud_labels.LABELS`, learnt on UD Perseus *dev* (gold
   AGDT 2.1 trees after passes 1-3, aligned with the UD gold): the most frequent UD relation
   of the most specific context seen at least :data:`MIN_COUNT` times, backing off from
   (relation, UPOS, verb form, case, whether a ``case``/``mark`` word hangs on it, the
   head's UPOS) to (relation, UPOS) and the relation alone; punctuation is ``punct``, the
   root ``root`` (a second word on the root hangs on the first: punctuation as ``punct``,
   others as ``parataxis``).

Measured (``projects/parse/metrics/ud_eval.json``, step ``ud-eval``): the gold AGDT trees of
UD Perseus test converted this way against its UD gold, and the pipeline's own parses.
Known limits: UD Perseus's conversion was made from an earlier AGDT release, so words
re-annotated since differ; ellipsis (``ExD``) is labelled, not restructured (no ``orphan``);
auxiliaries other than the copula are rare in AGDT Greek and keep their head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .agdt_ud_labels import LABELS

#: A context needs this many dev occurrences to decide a label (else the next, coarser one).
MIN_COUNT = 3
#: AGDT relations of punctuation.
PUNCT_RELS = frozenset({"AuxX", "AuxK", "AuxG"})
#: Dependents of a function word that are not its content (punctuation, particles).
_NOT_CONTENT = PUNCT_RELS | {"AuxY", "AuxZ"}
COPULA_LEMMAS = frozenset({"εἰμί"})
#: UD relations the structural passes write (pass 4 leaves them alone).
UD_FIXED = frozenset({"case", "mark", "cop", "cc", "conj", "appos", "punct", "root", "parataxis"})


def base_relation(rel: str) -> str:
    """The AGDT relation without its ``_CO`` / ``_AP`` member suffixes (``OBJ_AP_CO`` -> ``OBJ``)."""
    parts = rel.split("_")
    while len(parts) > 1 and parts[-1] in ("CO", "AP"):
        parts.pop()
    return "_".join(parts)


class _Tree:
    """A mutable sentence: 1-based heads (0 = root) and relations."""

    def __init__(self, heads: Sequence[int], rels: Sequence[str]) -> None:
        self.heads = [0, *[int(h) for h in heads]]
        self.rels = ["", *rels]
        self.n = len(heads)

    def children(self, i: int) -> list[int]:
        return [j for j in range(1, self.n + 1) if self.heads[j] == i]

    def depth(self, i: int) -> int:
        d, seen = 0, set()
        while self.heads[i] and i not in seen:
            seen.add(i)
            i = self.heads[i]
            d += 1
        return d

    def promote(self, function: int, content: int, rel: str, keep: Sequence[int] = ()) -> None:
        """``content`` takes ``function``'s head and relation; ``function`` hangs on it as
        ``rel``; ``function``'s other dependents (but ``keep``) move to ``content``."""
        for j in self.children(function):
            if j != content and j not in keep:
                self.heads[j] = content
        self.heads[content] = self.heads[function]
        self.rels[content] = self.rels[function] if rel == "cop" else self.rels[content]
        self.heads[function] = content
        self.rels[function] = rel


def _content_child(tree: _Tree, i: int) -> int | None:
    kids = [j for j in tree.children(i) if tree.rels[j] not in _NOT_CONTENT]
    after = [j for j in kids if j > i]
    pick = after or kids
    return pick[0] if pick else None


def _function_words(tree: _Tree, rel: str, rels: Sequence[str] | None = None) -> list[int]:
    """The words labelled ``rel`` (in ``rels``, 1-based with a dummy first, else the tree's), deepest first."""
    rels = tree.rels if rels is None else rels
    nodes = [i for i in range(1, tree.n + 1) if base_relation(rels[i]) == rel]
    return sorted(nodes, key=tree.depth, reverse=True)


def _member_suffix(rel: str) -> str:
    """The member suffixes of a relation (``OBJ_AP_CO`` -> ``_AP_CO``)."""
    return rel[len(base_relation(rel)):]


def restructure(heads: Sequence[int], rels: Sequence[str], lemmas: Sequence[str]) -> tuple[list[int], list[str]]:
    """Passes 1-3 of the module doc on one sentence (1-based heads, 0 = root): UD heads, and
    relations that are UD where a pass decided them, AGDT (member suffixes dropped) elsewhere."""
    tree = _Tree(heads, rels)
    original = list(tree.rels)
    # 1. prepositions and subordinators
    for rel, ud in (("AuxP", "case"), ("AuxC", "mark")):
        for f in _function_words(tree, rel):
            c = _content_child(tree, f)
            if c is None:
                continue
            suffix = _member_suffix(tree.rels[f])
            tree.promote(f, c, ud)
            if suffix and not _member_suffix(tree.rels[c]):
                tree.rels[c] += suffix
    # 2. copulas
    for v in range(1, tree.n + 1):
        if lemmas[v - 1] not in COPULA_LEMMAS:
            continue
        preds = [j for j in tree.children(v) if base_relation(tree.rels[j]) == "PNOM"
                 or (tree.rels[j] == "COORD" and any(base_relation(tree.rels[k]) == "PNOM"
                                                      for k in tree.children(j)))]
        if preds:
            tree.promote(v, preds[0], "cop")
    # 3. coordination and apposition
    for kind, ud_member, ud_marker in (("COORD", "conj", "cc"), ("APOS", "appos", "punct")):
        suffix = "_CO" if kind == "COORD" else "_AP"
        for c in _function_words(tree, kind, original):
            kids = tree.children(c)
            members = [j for j in kids if suffix in _member_suffix(tree.rels[j])
                       or original[j] in ("COORD", "APOS") and tree.rels[j] in ("COORD", "APOS")]
            if not members:
                continue
            first = members[0]
            outer = tree.heads[c]
            in_outer = outer and tree.rels[outer] in ("COORD", "APOS") and tree.rels[c] in ("COORD", "APOS")
            tree.heads[first] = tree.heads[c]
            own = tree.rels[first]
            if tree.rels[c] not in ("COORD", "APOS"):  # a coordinator already given a function
                tree.rels[first] = tree.rels[c]
            elif not in_outer:
                tree.rels[first] = base_relation(own) if own not in ("COORD", "APOS") else own
            for j in members[1:]:
                tree.heads[j] = first
                tree.rels[j] = ud_member
            for j in kids:
                if j not in members and tree.rels[j] not in PUNCT_RELS:
                    tree.heads[j] = first
            tree.heads[c] = first
            tree.rels[c] = ud_marker
    out = [r if r in UD_FIXED else base_relation(r) for r in tree.rels[1:]]
    return tree.heads[1:], out


def _verbform(feats: str) -> str:
    for f in feats.split("|"):
        if f.startswith("VerbForm="):
            return f[9:]
    return "-"


def _case(feats: str) -> str:
    for f in feats.split("|"):
        if f.startswith("Case="):
            return f[5:]
    return "-"


def contexts(i: int, heads: Sequence[int], rels: Sequence[str], upos: Sequence[str],
             feats: Sequence[str]) -> tuple[str, ...]:
    """The label contexts of word ``i`` (0-based), most specific first (module doc, pass 4)."""
    rel, pos, f = rels[i], upos[i], feats[i] or "_"
    marks = {rels[j] for j in range(len(heads)) if heads[j] == i + 1 and rels[j] in ("case", "mark")}
    marked = "+".join(sorted(marks)) or "-"
    head_pos = upos[heads[i] - 1] if heads[i] else "ROOT"
    vf, case = _verbform(f), _case(f)
    return (f"{rel}|{pos}|{vf}|{case}|{marked}|{head_pos}", f"{rel}|{pos}|{vf}|{case}|{marked}",
            f"{rel}|{pos}|{marked}", f"{rel}|{pos}", rel)


def relabel(heads: Sequence[int], rels: Sequence[str], upos: Sequence[str], feats: Sequence[str],
            table: Mapping[str, Mapping[str, int]] = LABELS) -> tuple[list[int], list[str]]:
    """Pass 4 of the module doc: UD relations for the words still labelled in AGDT, one root."""
    heads, out = list(heads), list(rels)
    roots = [j for j in range(len(heads)) if heads[j] == 0]
    if roots:
        keep = next((j for j in roots if upos[j] != "PUNCT" and rels[j] not in PUNCT_RELS), roots[0])
        for j in roots:
            if j != keep:
                heads[j] = keep + 1
                out[j] = "punct" if upos[j] == "PUNCT" or rels[j] in PUNCT_RELS else "parataxis"
        out[keep] = "root"
    for j, rel in enumerate(out):
        if heads[j] == 0:
            continue
        if rel in PUNCT_RELS or upos[j] == "PUNCT":
            out[j] = "punct"
            continue
        if rel in UD_FIXED:
            continue
        out[j] = _lookup(contexts(j, heads, out, upos, feats), table)
    punct = [j for j in range(len(heads)) if out[j] == "punct" and heads[j]]
    for j in punct:  # punctuation heads nothing in UD: its dependents go to its first non-punct ancestor
        up, steps = heads[j], 0
        while up and out[up - 1] == "punct" and steps <= len(heads):
            up, steps = heads[up - 1], steps + 1
        for k in range(len(heads)):
            if heads[k] == j + 1 and out[k] != "punct":
                heads[k] = up
                if up == 0:
                    out[k] = "root" if not any(h == 0 for h in heads[:k] + heads[k + 1:]) else "parataxis"
    for j in punct:
        heads[j] = _punct_head(j, heads, out, upos, final=rels[j] == "AuxK")
    return heads, out


def _descends(k: int, anc: int, heads: Sequence[int]) -> bool:
    """Word ``k`` (0-based) lies under word ``anc`` (0-based)."""
    seen = 0
    while heads[k] and seen <= len(heads):
        k = heads[k] - 1
        if k == anc:
            return True
        seen += 1
    return False


def _punct_head(j: int, heads: list[int], rels: Sequence[str], upos: Sequence[str], *, final: bool) -> int:
    """The 1-based head of punctuation ``j`` as UD attaches it: the higher of the phrases on either
    side that it can reach without a crossing arc (the left neighbour's and the right neighbour's
    ancestors that stay on their side), the lower of the two; sentence-final punctuation
    (``AuxK``) to the root."""
    n = len(heads)
    if final:
        return next((k + 1 for k in range(n) if heads[k] == 0), heads[j])
    is_p = [rels[k] == "punct" for k in range(n)]

    def path(start: int, step: int) -> list[int]:
        k = start
        while 0 <= k < n and is_p[k]:
            k += step
        if not 0 <= k < n:
            return []
        out = [k]
        while heads[k] and ((heads[k] - 1 < j) if step < 0 else (heads[k] - 1 > j)) and len(out) <= n:
            k = heads[k] - 1
            out.append(k)
        return [c for c in out if not _gap(j, c, heads, is_p)]

    left, right = path(j - 1, -1), path(j + 1, 1)
    lc, rc = (left[-1] if left else None), (right[-1] if right else None)
    if lc is None and rc is None:
        return heads[j]
    if lc is None:
        cand = rc
    elif rc is None or not _descends(rc, lc, heads):
        cand = lc  # the lower of the two (the left one when neither is under the other)
    else:
        cand = rc
    assert cand is not None
    return cand + 1


def _gap(j: int, cand: int, heads: Sequence[int], is_p: Sequence[bool]) -> bool:
    """Attaching ``j`` to ``cand`` would make a non-projective arc (a word between them not under ``cand``)."""
    lo, hi = sorted((j, cand))
    return any(not is_p[k] and not _descends(k, cand, heads) for k in range(lo + 1, hi))


def _lookup(keys: Sequence[str], table: Mapping[str, Mapping[str, int]]) -> str:
    for key in keys:
        counts = table.get(key)
        if counts and sum(counts.values()) >= MIN_COUNT:
            return max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return "dep"


def convert_tree(heads: Sequence[int], rels: Sequence[str], lemmas: Sequence[str], upos: Sequence[str],
                 feats: Sequence[str], table: Mapping[str, Mapping[str, int]] = LABELS) -> tuple[list[int], list[str]]:
    """UD heads (1-based, 0 = root) and UD relations of one AGDT-annotated sentence."""
    lemmas = [_lemma_key(lem) for lem in lemmas]
    h, r = restructure(heads, rels, lemmas)
    return relabel(h, r, upos, feats, table)


def _lemma_key(lemma: str) -> str:
    return lemma.rstrip("0123456789")


def convert_words(words: Sequence[Mapping[str, Any]],
                  table: Mapping[str, Mapping[str, int]] = LABELS) -> list[dict[str, Any]]:
    """A CoNLL-U sentence (word dicts with ``lemma, upos, feats, head, deprel``) with its
    AGDT tree rewritten to UD (:func:`convert_tree`); other fields unchanged."""
    feats = [_feats_text(w.get("feats")) for w in words]
    heads, rels = convert_tree([int(w["head"]) for w in words], [str(w["deprel"]) for w in words],
                               [str(w.get("lemma") or w.get("form") or "") for w in words],
                               [str(w.get("upos") or "X") for w in words], feats, table)
    return [{**w, "head": h, "deprel": r} for w, h, r in zip(words, heads, rels, strict=True)]


def _feats_text(value: Any) -> str:
    if not value or value == "_":
        return ""
    if isinstance(value, Mapping):
        return "|".join(f"{k}={v}" for k, v in sorted(value.items()))
    return str(value)
