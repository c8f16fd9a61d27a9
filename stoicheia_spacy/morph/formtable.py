"""A form -> {(lemma, XPOS): count} table from open sources (issue 42, item 1), compact on disk.

Built at ``make lexicon`` time (``projects/parse/scripts/build_form_table.py``) from the
treebanks' training folds and the auto-lemmatized DDbDP tokens (documents that PapyGreek
annotates left out), it ships in the lexicon data package as :data:`FORM_TABLE_FILE`. One
``.npz`` holds the NFC forms as one sorted UTF-8 blob with offsets (found by binary search, no
Python dict of every form), and per form a run of analyses (lemma id, XPOS id, count), most
frequent first, and a dictionary's headwords beside them (citation forms without analyses, which
the lemmatizer may write: :meth:`FormTable.attested_lemmas`). Lookups try the form, then its lower-case (sentence-initial capitals), then
with a final grave written acute (``τὴν`` as ``τήν``); an elided form the table does not have as
written is looked up in the other spellings of its elision (:func:`elision_spellings`: ``ἄλγε’``,
``ἄλγε᾽``, the treebanks' ``ἄλγἐ``), the best attested one taken; then without the accent an
enclitic put on its last syllable (``σκάπτοντί``), then with its movable ν taken off or put on,
then with a final iota adscript written subscript (``δήμωι``, ``δήμῳ``) or the other way.

The lemmatizer reads it (``form_table`` setting): a form the table attests takes the best of
its top scripts whose lemma the table gives for it; an unattested form keeps the head's own
decoding (:mod:`stoicheia_spacy.morph.lemmatizer`), with every lemma of the table counted as
attested there (``table_lexicon``). :meth:`FormTable.best` is the lookup
baseline (most frequent lemma and XPOS of a form).
"""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import numpy as np

from ..accent.lexasset import FORM_TABLE_FILE, find_lexicon
from ..codec.tables import ELISION_VARIANTS
from ..errors import ConfigError

_GRAVE, _ACUTE = "\u0300", "\u0301"
#: The smooth breathing (and its koronis-like twin) that treebanks write over a word's last letter
#: for its elision (``δ̓``, ``ἄλγἐ``, ``παῤ``)
_ELISION_BREATHINGS = "\u0313\u0343"
_VOWELS = "αεηιουω"
_ACCENTS = "\u0300\u0301\u0342"


def elision_spellings(form: str) -> tuple[str, ...]:
    """The spellings of an elided ``form`` with each mark sources use for the elision: an
    apostrophe (``’ ' ʼ ᾿ ᾽``) after the last letter, or a smooth breathing over it (``δ̓``,
    ``ἄλγἐ``; read so on a consonant, or on a vowel after two letters or more, where no breathing
    can stand); empty when ``form`` is not elided."""
    nfd = unicodedata.normalize("NFD", form)
    if nfd[-1:] and nfd[-1] in ELISION_VARIANTS:
        nfd = nfd[:-1]
    elif not any(c in _ELISION_BREATHINGS for c in nfd[_last_letter(nfd) + 1:]):
        return ()
    last = _last_letter(nfd)
    if last < 0:
        return ()
    marks = "".join(c for c in nfd[last + 1:] if c not in _ELISION_BREATHINGS)
    letter, before = nfd[last], sum(c.isalpha() for c in nfd[:last])
    if len(marks) != len(nfd) - last - 1 and letter.lower() in _VOWELS and before < 2:
        return ()  # a breathing on the second vowel of οὐ, εἰ: not an elision
    base = nfd[:last + 1] + marks
    spellings = [base + mark for mark in ELISION_VARIANTS]
    spellings += [nfd[:last + 1] + "\u0313" + marks, base + "\u0313"]
    return tuple(dict.fromkeys(unicodedata.normalize("NFC", x) for x in spellings))


def enclitic_accent_dropped(form: str) -> tuple[str, ...]:
    """``form`` without the acute an enclitic after it puts on its last syllable
    (``σκάπτοντί``, ``εἰσήνεγκάν`` as ``σκάπτοντι``, ``εἰσήνεγκαν``): a word with two accents,
    the last an acute, without that one; else empty."""
    nfd = unicodedata.normalize("NFD", form)
    accents = [i for i, c in enumerate(nfd) if c in _ACCENTS]
    if len(accents) < 2 or nfd[accents[-1]] != _ACUTE:
        return ()
    return (unicodedata.normalize("NFC", nfd[:accents[-1]] + nfd[accents[-1] + 1:]),)


def movable_nu(form: str) -> tuple[str, ...]:
    """``form`` with its movable ν taken off or put on (``ἐκεραύνωσεν``/``ἐκεραύνωσε``,
    ``πᾶσιν``/``πᾶσι``): after a final ε or ι that follows a consonant (not ``λέγει``/``λέγειν``);
    else empty."""
    nfd = unicodedata.normalize("NFD", form)
    last = _last_letter(nfd)
    if last < 2 or not all(unicodedata.combining(c) for c in nfd[last + 1:]):
        return ()
    if nfd[last] == "ν":
        vowel = _last_letter(nfd[:last])
        if vowel >= 1 and last == vowel + 1 + sum(unicodedata.combining(c) > 0 for c in nfd[vowel + 1:last]) \
                and nfd[vowel] in "ει" and _consonant(nfd[_last_letter(nfd[:vowel])]):
            return (unicodedata.normalize("NFC", nfd[:last] + nfd[last + 1:]),)
        return ()
    if nfd[last] in "ει" and _consonant(nfd[_last_letter(nfd[:last])]):
        return (unicodedata.normalize("NFC", nfd + "ν"),)
    return ()


def iota_spellings(form: str) -> tuple[str, ...]:
    """``form`` with a final long vowel's iota written the other way: adscript (the papyri's
    ``τῆι``, ``δήμωι``) as subscript (``τῇ``, ``δήμῳ``), and subscript as adscript; else empty."""
    nfd = unicodedata.normalize("NFD", form)
    last = _last_letter(nfd)
    if last < 1:
        return ()
    if "\u0345" in nfd[last + 1:] and nfd[last] in "ηωα":
        return (unicodedata.normalize("NFC", nfd[:last + 1] + nfd[last + 1:].replace("\u0345", "") + "ι"),)
    vowel = _last_letter(nfd[:last])
    if nfd[last] == "ι" and last == len(nfd) - 1 and vowel >= 0 and nfd[vowel] in "ηω":
        return (unicodedata.normalize("NFC", nfd[:last] + "\u0345"),)
    return ()


def _consonant(letter: str) -> bool:
    return letter.isalpha() and letter.lower() not in _VOWELS


def _last_letter(nfd: str) -> int:
    """Index of the last letter of a decomposed string (-1: none)."""
    return next((i for i in range(len(nfd) - 1, -1, -1) if nfd[i].isalpha()), -1)


#: Forms whose analyses a :class:`FormTable` remembers before it starts afresh.
SEEN_FORMS = 100_000


def _blob(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    data = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in data])
    return np.frombuffer(b"".join(data), dtype=np.uint8), offsets


class _Strings:
    """A read-only sequence of the strings of a blob (``bisect`` searches it)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.raw, self.offsets = blob.tobytes(), offsets.tolist()

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> bytes:
        return self.raw[self.offsets[i]:self.offsets[i + 1]]

    def text(self, i: int) -> str:
        return self[i].decode("utf-8")


class FormTable:
    """Analyses of attested forms (module doc)."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        self.forms = _Strings(arrays["forms"], arrays["form_offsets"])
        self.lemma_strings = _Strings(arrays["lemmas"], arrays["lemma_offsets"])
        self.tags = [str(t) for t in arrays["tags"]]
        self.runs = arrays["runs"].tolist()
        self.lemma_ids, self.tag_ids, self.counts = arrays["lemma_ids"], arrays["tag_ids"], arrays["counts"]
        self.sources = [str(s) for s in arrays["sources"]] if "sources" in arrays else []
        # citation forms of a dictionary (no analyses): lemmas the lemmatizer may write (``table_lexicon``)
        self.headwords = (_Strings(arrays["headwords"], arrays["headword_offsets"]) if "headwords" in arrays
                          else _Strings(np.zeros(0, np.uint8), np.zeros(1, np.int64)))
        self._seen: dict[str, tuple[tuple[str, str, int], ...]] = {}  # analyses by form, see analyses()
        self._lemma_set: frozenset[str] | None = None
        self._attested: frozenset[str] | None = None

    @classmethod
    def build(cls, analyses: Iterable[tuple[str, str, str, int]], sources: Iterable[str] = (),
              headwords: Iterable[str] = ()) -> FormTable:
        """The table of ``(form, lemma, xpos, count)`` rows (forms NFC-normalised, counts summed),
        with a dictionary's ``headwords`` (citation forms, NFC) beside them."""
        merged: dict[tuple[str, str, str], int] = {}
        for form, lemma, tag, n in analyses:
            key = (unicodedata.normalize("NFC", form), unicodedata.normalize("NFC", lemma), tag)
            merged[key] = merged.get(key, 0) + int(n)
        by_form: dict[bytes, list[tuple[int, str, str]]] = {}
        for (form, lemma, tag), n in merged.items():
            by_form.setdefault(form.encode("utf-8"), []).append((-n, lemma, tag))
        forms = sorted(by_form)
        lemmas = sorted({lemma for _, lemma, _ in merged})
        tags = sorted({tag for _, _, tag in merged})
        lemma_id, tag_id = {s: i for i, s in enumerate(lemmas)}, {s: i for i, s in enumerate(tags)}
        runs, lids, tids, counts = [0], [], [], []
        for form_key in forms:
            for neg, lemma, tag in sorted(by_form[form_key]):
                lids.append(lemma_id[lemma])
                tids.append(tag_id[tag])
                counts.append(-neg)
            runs.append(len(lids))
        fblob, foff = _blob([f.decode("utf-8") for f in forms])
        lblob, loff = _blob(lemmas)
        hblob, hoff = _blob(sorted({unicodedata.normalize("NFC", h) for h in headwords}))
        return cls({"forms": fblob, "form_offsets": foff, "lemmas": lblob, "lemma_offsets": loff,
                    "headwords": hblob, "headword_offsets": hoff,
                    "tags": np.array(tags), "runs": np.array(runs, dtype=np.int64),
                    "lemma_ids": np.array(lids, dtype=np.int32), "tag_ids": np.array(tids, dtype=np.int16),
                    "counts": np.array(counts, dtype=np.int32), "sources": np.array(list(sources))})

    def to_disk(self, path: str | Path) -> None:
        """Write the table as one compressed ``.npz``."""
        np.savez_compressed(
            path, forms=np.frombuffer(self.forms.raw, dtype=np.uint8), form_offsets=np.array(self.forms.offsets),
            lemmas=np.frombuffer(self.lemma_strings.raw, dtype=np.uint8),
            lemma_offsets=np.array(self.lemma_strings.offsets), tags=np.array(self.tags),
            runs=np.array(self.runs, dtype=np.int64), lemma_ids=self.lemma_ids, tag_ids=self.tag_ids,
            counts=self.counts, sources=np.array(self.sources),
            headwords=np.frombuffer(self.headwords.raw, dtype=np.uint8), headword_offsets=np.array(self.headwords.offsets))

    @classmethod
    def from_disk(cls, path: str | Path) -> FormTable:
        """Read a table written by :meth:`to_disk`."""
        try:
            with np.load(path, allow_pickle=False) as z:
                return cls({k: z[k] for k in z.files})
        except (OSError, KeyError, ValueError) as err:
            raise ConfigError(f"form table {path} is not readable: {err}") from err

    def __len__(self) -> int:
        return len(self.forms)

    def _index(self, form: str) -> int | None:
        key = form.encode("utf-8")
        i = bisect.bisect_left(self.forms, key)
        return i if i < len(self.forms) and self.forms[i] == key else None

    def find(self, form: str) -> int | None:
        """Index of ``form`` (or of its lower-case, or with a final grave as acute), else None."""
        form = unicodedata.normalize("NFC", form)
        lower = form.lower()
        nfd = unicodedata.normalize("NFD", lower)
        acute = unicodedata.normalize("NFC", nfd.replace(_GRAVE, _ACUTE)) if _GRAVE in nfd else lower
        for cand in dict.fromkeys((form, lower, acute)):
            i = self._index(cand)
            if i is not None:
                return i
        for spellings in (elision_spellings(lower), enclitic_accent_dropped(lower), movable_nu(lower),
                          iota_spellings(lower)):
            found = [i for spelling in spellings if (i := self._index(spelling)) is not None]
            if found:
                return max(found, key=self._total)
        return None

    def _total(self, i: int) -> int:
        """How often the form at index ``i`` is attested (its analyses' counts summed)."""
        return int(self.counts[self.runs[i]:self.runs[i + 1]].sum())

    def analyses(self, form: str) -> list[tuple[str, str, int]]:
        """``(lemma, xpos, count)`` of ``form``, most frequent first (empty when unattested).
        Remembered per form (up to :data:`SEEN_FORMS` forms): the morphologizer and the
        lemmatizer both look up every token."""
        seen = self._seen.get(form)
        if seen is None:
            if len(self._seen) >= SEEN_FORMS:
                self._seen.clear()
            seen = self._seen[form] = tuple(self._analyses(form))
        return list(seen)

    def _analyses(self, form: str) -> list[tuple[str, str, int]]:
        i = self.find(form)
        if i is None:
            return []
        a, b = self.runs[i], self.runs[i + 1]
        return [(self.lemma_strings.text(int(lid)), self.tags[int(tid)], int(n))
                for lid, tid, n in zip(self.lemma_ids[a:b], self.tag_ids[a:b], self.counts[a:b], strict=True)]

    def lemmas(self, form: str) -> tuple[str, ...]:
        """The lemmas the table gives ``form``, most frequent (summed over tags) first."""
        totals: dict[str, int] = {}
        for lemma, _, n in self.analyses(form):
            totals[lemma] = totals.get(lemma, 0) + n
        return tuple(sorted(totals, key=lambda s: -totals[s]))

    def lemma_set(self) -> frozenset[str]:
        """Every lemma the table gives any form (built once)."""
        if self._lemma_set is None:
            self._lemma_set = frozenset(self.lemma_strings.text(i) for i in range(len(self.lemma_strings)))
        return self._lemma_set

    def attested_lemmas(self) -> frozenset[str]:
        """:meth:`lemma_set` and the headwords: every lemma the table knows (built once)."""
        if self._attested is None:
            self._attested = self.lemma_set() | frozenset(self.headwords.text(i) for i in range(len(self.headwords)))
        return self._attested

    def best(self, form: str) -> tuple[str, str] | None:
        """The lookup baseline: the most frequent lemma and the most frequent XPOS of ``form``."""
        rows = self.analyses(form)
        if not rows:
            return None
        tags: dict[str, int] = {}
        for _, tag, n in rows:
            tags[tag] = tags.get(tag, 0) + n
        return self.lemmas(form)[0], max(tags, key=lambda t: tags[t])


@cache
def _read_form_table(path: Path) -> FormTable:
    return FormTable.from_disk(path)


def load_form_table(path: str | None = None) -> FormTable | None:
    """The table at ``path``, else the installed lexicon data package's, else None: looked up at
    each call (as :func:`~stoicheia_spacy.accent.lexasset.load_lexicon` does, so a package
    installed later is found), each file read once."""
    found = find_lexicon(path, file=FORM_TABLE_FILE)
    return _read_form_table(found) if found is not None else None


__all__ = ["FORM_TABLE_FILE", "FormTable", "elision_spellings", "enclitic_accent_dropped", "iota_spellings", "load_form_table",
           "movable_nu"]
