"""Deterministic, document-level 5-fold split over AGDT + Gorman + Pedalion with one shared
held-out test part.

1. **Units.** Documents (files) are grouped into units by work: a file's unit is the
   TLG work most of its sentences name (``tlg0540.tlg001``: AGDT's and Gorman's Lysias 1
   fall into one unit), else the file itself. Units are never split.
2. **Test.** Units are shuffled with ``random.Random(seed)`` and taken in that order
   into the shared test part until it holds ``test_fraction`` of the words (a unit that
   would overshoot the target by more than 10 % is skipped).
3. **Folds.** The remaining units, largest first (ties in shuffled order), each go to
   the part with the fewest words so far: ``n_folds`` balanced parts. Fold ``k`` trains
   on every part but ``k`` and uses part ``k`` as dev.
4. **No shared sentences.** A sentence whose :func:`sentence_key` (letters only, no
   diacritics, lower case, one sigma) already occurs in the test part, or in an earlier
   part, is dropped from the later part, so no sentence text is both in training and in
   test or dev, whatever the fold.
5. **UD exclusion.** Sentences whose key is in ``exclude_keys`` (the UD Perseus dev/test
   sentences: UD Perseus is converted from AGDT 2.1) are dropped from the fold parts,
   so they never reach training; the test part keeps them.
"""

from __future__ import annotations

import random
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from stoicheia_spacy.errors import TreebankError

from .harmonise import Sentence

_SIGMAS = str.maketrans({"ς": "σ", "ϲ": "σ", "Ϲ": "σ"})


def sentence_key(forms: Sequence[str]) -> str:
    """Normalised text of a sentence for duplicate matching: NFD without combining marks,
    lower case, final/lunate sigma folded to σ, letters only, words joined by a space."""
    words = []
    for form in forms:
        stripped = "".join(
            ch
            for ch in unicodedata.normalize("NFD", form).lower().translate(_SIGMAS)
            if ch.isalpha() and not unicodedata.combining(ch)
        )
        if stripped:
            words.append(stripped)
    return " ".join(words)


@dataclass
class SplitResult:
    """``test`` sentences, ``parts[k]`` (dev of fold k), and bookkeeping counts."""

    test: list[Sentence]
    parts: list[list[Sentence]]
    unit_of_doc: dict[tuple[str, str], str]
    part_of_unit: dict[str, int]  # -1 = test
    dropped: Counter[str] = field(default_factory=Counter)

    def train(self, fold: int) -> list[Sentence]:
        """Training sentences of ``fold`` (every part except ``fold``)."""
        if not 0 <= fold < len(self.parts):
            raise TreebankError(f"fold {fold} out of range 0..{len(self.parts) - 1}")
        return [s for k, part in enumerate(self.parts) if k != fold for s in part]

    def dev(self, fold: int) -> list[Sentence]:
        """Dev sentences of ``fold``."""
        if not 0 <= fold < len(self.parts):
            raise TreebankError(f"fold {fold} out of range 0..{len(self.parts) - 1}")
        return list(self.parts[fold])


def document_units(sentences: Iterable[Sentence]) -> dict[tuple[str, str], str]:
    """Unit (majority TLG work id, else ``source:doc_id``) of every (source, doc_id)."""
    votes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for s in sentences:
        work = s.work_id if s.work_id.startswith("tlg") else ""
        votes[(s.source, s.doc_id)][work] += len(s)
    units = {}
    for doc, counter in votes.items():
        work, _ = max(counter.items(), key=lambda kv: (kv[1], kv[0]))
        units[doc] = work or f"{doc[0]}:{doc[1]}"
    return units


def make_splits(
    sentences: Sequence[Sentence],
    *,
    n_folds: int = 5,
    test_fraction: float = 0.1,
    seed: int = 0,
    exclude_keys: Iterable[str] = (),
) -> SplitResult:
    """Split harmonised sentences into a shared test part and ``n_folds`` parts (module
    docstring). Deterministic for a given input order, ``seed`` and settings."""
    if n_folds < 2:
        raise TreebankError(f"n_folds must be at least 2, got {n_folds}")
    if not 0.0 < test_fraction < 1.0:
        raise TreebankError(f"test_fraction must be in (0, 1), got {test_fraction}")
    unit_of_doc = document_units(sentences)
    unit_words: Counter[str] = Counter()
    for s in sentences:
        unit_words[unit_of_doc[(s.source, s.doc_id)]] += len(s)
    if len(unit_words) < n_folds + 1:
        raise TreebankError(
            f"{len(unit_words)} document units cannot fill {n_folds} folds and a test part"
        )
    order = sorted(unit_words)
    random.Random(seed).shuffle(order)
    total = sum(unit_words.values())
    target = test_fraction * total
    part_of_unit: dict[str, int] = {}
    test_words = 0
    for unit in order:
        if test_words >= target:
            break
        if test_words + unit_words[unit] <= 1.1 * target:
            part_of_unit[unit] = -1
            test_words += unit_words[unit]
    rank = {u: i for i, u in enumerate(order)}
    rest = sorted(
        (u for u in order if u not in part_of_unit), key=lambda u: (-unit_words[u], rank[u])
    )
    fill = [0] * n_folds
    for unit in rest:
        k = min(range(n_folds), key=lambda i: (fill[i], i))
        part_of_unit[unit] = k
        fill[k] += unit_words[unit]

    excluded = set(exclude_keys)
    test: list[Sentence] = []
    parts: list[list[Sentence]] = [[] for _ in range(n_folds)]
    by_part: dict[int, list[Sentence]] = defaultdict(list)
    for s in sentences:
        by_part[part_of_unit[unit_of_doc[(s.source, s.doc_id)]]].append(s)
    seen: set[str] = set()
    dropped: Counter[str] = Counter()
    for part in [-1, *range(n_folds)]:
        part_keys: set[str] = set()
        for s in by_part.get(part, []):
            key = sentence_key(s.forms)
            if part >= 0 and key in seen:
                dropped["duplicate_of_earlier_part"] += 1
                continue
            if part >= 0 and key in excluded:
                dropped[f"ud_excluded_{s.source}"] += 1
                continue
            part_keys.add(key)
            (test if part < 0 else parts[part]).append(s)
        seen |= part_keys
    return SplitResult(test, parts, unit_of_doc, part_of_unit, dropped)
