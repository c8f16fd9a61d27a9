"""Lemma edit scripts ``[prefix_cut, prefix_add, suffix_cut, suffix_add, cap]`` (the
layout of ``scripts`` in the released tagger-parser's ``vocab.json``).

A script is derived from the longest common substring of the (case-folded) form and
lemma: ``form = P + common + S`` and ``lemma = P' + common + S'`` give
``prefix_cut = len(P)``, ``prefix_add = P'``, ``suffix_cut = len(S)``, ``suffix_add = S'``.
With no common substring the whole form is replaced (``suffix_cut = len(form)``).

Case handling (``cap``):

- ``0``: the lemma is lower case; the edit applies to ``form.lower()``;
- ``1``: the lemma is the lower-case result with its first letter in title case
  (``str.title`` on that letter, so ᾳ becomes ᾼ, not ΑΙ);
- ``2``: anything else (e.g. an all-capitals lemma): the edit applies to the form as
  written, no case folding.

``apply_script(form, derive_script(form, lemma)) == lemma`` holds for every NFC pair.
A script that cuts more than the form has (a predicted script on a short form) returns
the form unchanged unless ``strict=True`` (then :class:`InvalidInputError`).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from typing import NamedTuple

from ..errors import InvalidInputError

CAP_LOWER, CAP_TITLE, CAP_ASIS = 0, 1, 2


class EditScript(NamedTuple):
    """One lemma edit script (see the module docstring)."""

    prefix_cut: int
    prefix_add: str
    suffix_cut: int
    suffix_add: str
    cap: int

    def to_list(self) -> list[int | str]:
        """The JSON form ``[prefix_cut, prefix_add, suffix_cut, suffix_add, cap]``."""
        return [self.prefix_cut, self.prefix_add, self.suffix_cut, self.suffix_add, self.cap]

    @classmethod
    def from_list(cls, value: Sequence[int | str]) -> EditScript:
        """Parse the JSON form; raises :class:`InvalidInputError` when malformed."""
        if len(value) != 5:
            raise InvalidInputError(f"an edit script has 5 fields, got {value!r}")
        pc, pa, sc, sa, cap = value
        if not (isinstance(pc, int) and isinstance(sc, int) and isinstance(cap, int)):
            raise InvalidInputError(f"edit script cut/cap fields must be ints: {value!r}")
        if not (isinstance(pa, str) and isinstance(sa, str)):
            raise InvalidInputError(f"edit script add fields must be strings: {value!r}")
        if pc < 0 or sc < 0 or cap not in (CAP_LOWER, CAP_TITLE, CAP_ASIS):
            raise InvalidInputError(f"edit script out of range: {value!r}")
        return cls(pc, pa, sc, sa, cap)


def _title_first(text: str) -> str:
    return text[:1].title() + text[1:]


def _edit(a: str, b: str, cap: int) -> EditScript:
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    if match.size == 0:
        return EditScript(0, "", len(a), b, cap)
    return EditScript(
        match.a,
        b[: match.b],
        len(a) - match.a - match.size,
        b[match.b + match.size :],
        cap,
    )


def derive_script(form: str, lemma: str) -> EditScript:
    """The edit script turning ``form`` into ``lemma`` (both NFC-normalised first)."""
    if not isinstance(form, str) or not isinstance(lemma, str):
        raise InvalidInputError("form and lemma must be strings")
    form = unicodedata.normalize("NFC", form)
    lemma = unicodedata.normalize("NFC", lemma)
    low_form, low_lemma = form.lower(), lemma.lower()
    if lemma == low_lemma:
        return _edit(low_form, low_lemma, CAP_LOWER)
    if lemma == _title_first(low_lemma):
        return _edit(low_form, low_lemma, CAP_TITLE)
    return _edit(form, lemma, CAP_ASIS)


def apply_script(form: str, script: EditScript | Sequence[int | str], *, strict: bool = False) -> str:
    """The lemma that ``script`` makes of ``form`` (fallback: ``form`` when the cuts do
    not fit, or :class:`InvalidInputError` with ``strict=True``)."""
    if not isinstance(script, EditScript):
        script = EditScript.from_list(script)
    form = unicodedata.normalize("NFC", form)
    base = form if script.cap == CAP_ASIS else form.lower()
    if script.prefix_cut + script.suffix_cut > len(base):
        if strict:
            raise InvalidInputError(f"script {script.to_list()!r} cuts more than {form!r} has")
        return form
    core = base[script.prefix_cut : len(base) - script.suffix_cut]
    lemma = script.prefix_add + core + script.suffix_add
    return _title_first(lemma) if script.cap == CAP_TITLE else lemma


def build_script_vocab(pairs: Iterable[tuple[str, str]], *, min_count: int = 1) -> list[EditScript]:
    """Scripts of (form, lemma) pairs seen at least ``min_count`` times, most frequent first
    (ties broken by the script's JSON text, so the order is deterministic)."""
    cache: dict[tuple[str, str], EditScript] = {}
    counts: Counter[EditScript] = Counter()
    for pair in pairs:
        script = cache.get(pair)
        if script is None:
            script = cache[pair] = derive_script(*pair)
        counts[script] += 1
    kept = [s for s, c in counts.items() if c >= min_count]
    return sorted(kept, key=lambda s: (-counts[s], repr(s.to_list())))
