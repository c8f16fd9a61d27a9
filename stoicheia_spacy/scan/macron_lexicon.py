"""Macron lexicon: word form -> candidate vowel-length patterns (an optional data asset).

The code ships no lexicon: the form lists it is built from carry GPL-3.0 / CC BY-SA
terms (see :data:`LICENCE`). :func:`build_macron_lexicon` (``spacy project run
macron-lexicon`` in ``projects/meter``) writes a compact ``macron_lexicon.json.gz``
that :class:`MacronLexicon` reads and ``stoicheia_scanner`` loads when it is present.

Keys are :func:`form_key` forms (NFC, lowercase, grave as acute, final sigma as σ,
letters and their diacritics only); a pattern has one character per letter of the key
(``1`` long, ``0`` short, ``.`` not given), so pattern positions are codec letter
positions of the word. Each entry lists its distinct patterns with the sources that
attest them (bit 1 Hypotactic, 2 LSJ, 4 Wiktionary paradigm cells) and a count.

Two generalisations serve words the lexicon lacks: ``suffixes`` (long/short counts of a
dichronon by the unaccented letters from up to three before it to the word's end,
:meth:`MacronLexicon.suffix_vote`) and ``eta_forms`` (attested forms with η, from the
lexicon and the Hunspell form list: an α whose η-variant is attested is the Doric/Aeolic
long ᾱ, :meth:`MacronLexicon.eta_variant_attested`).

An optional ``corpus`` table (:mod:`.corpus_lengths`; absent from older assets, which still
load) counts how often each dichronon of a form scanned long or short in Hypotactic's verse
(:meth:`MacronLexicon.corpus_counts`).
"""

from __future__ import annotations

import gzip
import json
import lzma
import os
import shutil
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from ..accent.lexasset import find_lexicon
from ..assets import cache_folder, file_sha256
from ..errors import CorpusError
from .mapped_table import read_keys, read_table, write_table

FORMAT = "stoicheia-macron-lexicon/1"
_T = TypeVar("_T")
#: Lookups a :class:`MacronLexicon` remembers before it starts afresh (:meth:`MacronLexicon._memo`).
MEMO_WORDS = 200_000
SOURCES = {"hypotactic": 1, "lsj": 2, "wiktionary": 4}
LICENCE = ("Derived from grc-macronizer 1.3.0 (GPL-3.0): Hypotactic word markup (hypotactic.com, "
           "CC BY 4.0), LSJ markup (Perseus, CC BY-SA), Wiktionary paradigm forms (CC BY-SA 4.0); "
           "η-forms from the Ancient Greek Hunspell form list (GPL-3.0). "
           "Distribute under GPL-3.0 / CC BY-SA, apart from the MIT code.")
CORPUS_LICENCE = (" The corpus table (long/short counts per dichronon) is derived from Hypotactic's scanned "
                  "verse (hypotactic.com, CC BY 4.0).")
_LONG_MARKS, _SHORT_MARKS = {"\u0304"}, {"\u0306"}
_PRECOMPOSED = {"ᾱ": ("α", "1"), "ᾰ": ("α", "0"), "ῑ": ("ι", "1"), "ῐ": ("ι", "0"), "ῡ": ("υ", "1"), "ῠ": ("υ", "0"),
                "Ᾱ": ("Α", "1"), "Ᾰ": ("Α", "0"), "Ῑ": ("Ι", "1"), "Ῐ": ("Ι", "0"), "Ῡ": ("Υ", "1"), "Ῠ": ("Υ", "0")}


def _is_greek_letter(ch: str) -> bool:
    return ch.isalpha() and ("\u0370" <= ch <= "\u03ff" or "\u1f00" <= ch <= "\u1fff")


@lru_cache(maxsize=1 << 16)
def form_key(word: str) -> str:
    """Lookup form: NFC, lowercase, grave -> acute, ς -> σ, Greek letters (with diacritics) only."""
    decomposed = unicodedata.normalize("NFD", word.lower()).replace("\u0300", "\u0301")
    out = unicodedata.normalize("NFC", decomposed).replace("ς", "σ")
    return "".join(ch for ch in out if _is_greek_letter(ch))


def _split(form: str) -> tuple[str, str] | None:
    """(key, pattern) of a form marked with combining macron/breve or precomposed ᾱ ᾰ …"""
    letters: list[str] = []
    pattern: list[str] = []
    for ch in unicodedata.normalize("NFD", form):
        if ch in _LONG_MARKS or ch in _SHORT_MARKS:
            if not pattern:
                return None
            pattern[-1] = "1" if ch in _LONG_MARKS else "0"
        elif unicodedata.combining(ch):
            if not letters:
                return None
            letters[-1] += ch
        elif _is_greek_letter(unicodedata.normalize("NFC", ch)) or ch in _PRECOMPOSED:
            base, mark = _PRECOMPOSED.get(ch, (ch, "."))
            letters.append(base)
            pattern.append(mark)
        elif ch.isalpha():
            return None  # Latin transliteration or the like: not a Greek form
    if not letters:
        return None
    key = form_key("".join(letters))
    return (key, "".join(pattern)) if len(key) == len(pattern) else None


def from_markup(markup: str) -> tuple[str, str] | None:
    """(key, pattern) of a ``^`` (short) / ``_`` (long) markup such as ``ἄ^κροισι^``."""
    return _split(markup.replace("_", "\u0304").replace("^", "\u0306"))


def from_unicode(form: str) -> tuple[str, str] | None:
    """(key, pattern) of a form with Unicode macrons/breves such as ``ᾰ̓́κρος``."""
    return _split(form)


@dataclass
class MacronLexicon:
    """Candidate patterns per :func:`form_key` (see module doc)."""

    #: dicts while building; memory-mapped tables (:mod:`.mapped_table`) once read from disk
    entries: Mapping[str, list[Sequence]] = field(default_factory=dict)  # [pattern, sources, count]
    meta: dict = field(default_factory=dict)
    suffixes: Mapping[str, Sequence[int]] = field(default_factory=dict)  # [long, short]
    eta_forms: Set[str] = field(default_factory=set)
    corpus: Mapping[str, Sequence[int]] = field(default_factory=dict)  # [j, long, short, ...]
    #: answers of the lookups below per word (see :meth:`_memo`)
    _answers: dict[tuple, object] = field(default_factory=dict, init=False, repr=False, compare=False)
    _answers_for: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    def _memo(self) -> dict[tuple, object]:
        """The remembered lookups: a scanner asks for the same words' candidates, η-variants,
        suffix votes and corpus counts several times per Doc (memory-mapped tables, one binary
        search each). Started afresh when a table is replaced, :meth:`add` changes the
        entries, or :data:`MEMO_WORDS` answers are held."""
        tables = (id(self.entries), id(self.suffixes), id(self.eta_forms), id(self.corpus))
        if self._answers_for != tables or len(self._answers) >= MEMO_WORDS:
            self._answers, self._answers_for = {}, tables
        return self._answers

    def build_suffixes(self, min_count: int = 3, max_tail: int = 6) -> None:
        """Count long/short per unaccented suffix that starts 1-3 letters before a marked dichronon."""
        counts: dict[str, list[int]] = {}
        for key, cands in self.entries.items():
            bare = strip_diacritics(key)
            seen: set[tuple[int, str]] = set()
            for pattern, _, _ in cands:
                for j, c in enumerate(pattern):
                    if c == "." or len(bare) - j > max_tail or (j, c) in seen:
                        continue
                    seen.add((j, c))
                    for back in (1, 2, 3):
                        if j - back >= 0:
                            counts.setdefault(f"{back}{bare[j - back:]}", [0, 0])[int(c == "1")] += 1
        self.suffixes = {k: [v[1], v[0]] for k, v in counts.items() if v[0] + v[1] >= min_count}

    def suffix_vote(self, word: str, j: int, min_count: int = 5) -> tuple[float, int]:
        """((long - short) / n, n) at letter ``j`` of ``word`` from the longest known suffix; (0, 0) if none."""
        memo, key = self._memo(), ("suffix", word, j, min_count)
        if key not in memo:
            memo[key] = self._suffix_vote(word, j, min_count)
        return memo[key]  # type: ignore[return-value]

    def _suffix_vote(self, word: str, j: int, min_count: int) -> tuple[float, int]:
        bare = strip_diacritics(form_key(word))
        for back in (3, 2, 1):
            if j - back < 0:
                continue
            got = self.suffixes.get(f"{back}{bare[j - back:]}")
            if got is not None and got[0] + got[1] >= min_count:
                n = int(got[0] + got[1])
                return (got[0] - got[1]) / n, n
        return 0.0, 0

    def eta_variant_attested(self, word: str, j: int) -> bool:
        """Letter ``j`` of ``word`` is α and the form with η there is attested."""
        memo, key = self._memo(), ("eta", word, j)
        if key not in memo:
            memo[key] = self._eta_variant_attested(word, j)
        return memo[key]  # type: ignore[return-value]

    def _eta_variant_attested(self, word: str, j: int) -> bool:
        key = form_key(word)
        if not 0 <= j < len(key):
            return False
        d = unicodedata.normalize("NFD", key[j])
        if d[0] != "α":
            return False
        variant = key[:j] + unicodedata.normalize("NFC", "η" + d[1:]) + key[j + 1 :]
        return variant in self.eta_forms or variant in self.entries

    def corpus_counts(self, word: str, j: int) -> tuple[int, int]:
        """(long, short): how often letter ``j`` of ``word`` scanned long / short in the corpus
        table (a second enclitic accent is dropped as in :meth:`candidates`); (0, 0) if unseen."""
        memo, key = self._memo(), ("corpus", word, j)
        if key not in memo:
            memo[key] = self._corpus_counts(word, j)
        return memo[key]  # type: ignore[return-value]

    def _corpus_counts(self, word: str, j: int) -> tuple[int, int]:
        flat = _lookup(self.corpus, form_key(word))
        if flat:
            for k in range(0, len(flat), 3):
                if flat[k] == j:
                    return int(flat[k + 1]), int(flat[k + 2])
        return 0, 0

    def add(self, key: str, pattern: str, source: int) -> None:
        if not key or set(pattern) <= {"."}:
            return
        self._answers = {}
        if not isinstance(self.entries, dict):  # a mapped table read from disk: copy on first write
            self.entries = dict(self.entries.items())
        cands = self.entries.setdefault(key, [])
        for i, (p, s, n) in enumerate(cands):
            if p == pattern:
                cands[i] = [p, s | source, n + 1]
                return
        cands.append([pattern, source, 1])

    def candidates(self, word: str) -> list[Sequence]:
        """(pattern, source bits, count) for ``word`` (any case, accents as written).

        A form with a second accent from a following enclitic (``ἄλγεά``) is also looked
        up without it. The list is the lexicon's own (remembered per word): read it, do not change it.
        """
        memo, key = self._memo(), ("candidates", word)
        if key not in memo:
            memo[key] = _lookup(self.entries, form_key(word)) or []
        return memo[key]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self.entries)

    def to_disk(self, path: str | Path) -> None:
        meta = {k: v for k, v in self.meta.items() if k not in ("entries", "suffixes", "eta_forms", "corpus")}
        data = {**meta, "format": FORMAT, "licence": LICENCE + (CORPUS_LICENCE if self.corpus else ""),
                "entries": {k: [list(c) for c in v] for k, v in sorted(self.entries.items())},
                "suffixes": {k: list(v) for k, v in sorted(self.suffixes.items())},
                "eta_forms": sorted(self.eta_forms)}
        if self.corpus:
            data["corpus"] = {k: list(v) for k, v in sorted(self.corpus.items())}
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_disk(cls, path: str | Path) -> MacronLexicon:
        """The lexicon of a ``macron_lexicon.json.gz``, memory-mapped.

        Parsing the JSON takes seconds (0.5 M entries), so its tables are saved once as
        mapped arrays in :func:`cache_folder` (keyed by the file's SHA-256) and read from
        there at every later start; where that folder cannot be written, the JSON is read.
        """
        folder = cache_folder() / f"macron-{file_sha256(path)[:20]}"
        if (folder / "meta.json").is_file():
            return cls.from_mapped(folder)
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("format") != FORMAT:
            raise CorpusError(f"{path} is not a {FORMAT} file")
        entries = data.pop("entries")
        suffixes = data.pop("suffixes", {})
        eta = set(data.pop("eta_forms", []))
        corpus = data.pop("corpus", {})
        lexicon = cls(entries, data, suffixes, eta, corpus)
        try:
            lexicon.to_mapped(folder)
        except OSError:  # a read-only cache: keep the tables read from JSON
            return lexicon
        return cls.from_mapped(folder)

    def to_mapped(self, folder: Path) -> None:
        """Save the tables as memory-mappable arrays in ``folder`` (written whole or not at all)."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            write_table(tmp, "entries", self.entries)
            write_table(tmp, "suffixes", self.suffixes)
            write_table(tmp, "corpus", self.corpus)
            write_table(tmp, "eta_forms", self.eta_forms)
            (tmp / "meta.json").write_text(json.dumps(self.meta, ensure_ascii=False), encoding="utf-8")
            try:
                os.replace(tmp, folder)
            except OSError:
                if not (folder / "meta.json").is_file():  # not another process that won the race
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def from_mapped(cls, folder: Path) -> MacronLexicon:
        """The lexicon :meth:`to_mapped` saved, its tables memory-mapped."""
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        return cls(read_table(folder, "entries"), meta, read_table(folder, "suffixes"),
                   read_keys(folder, "eta_forms"), read_table(folder, "corpus"))



def _lookup(table: Mapping[str, _T], key: str) -> _T | None:
    """``table[key]``, else (a form with a second accent from a following enclitic, ``ἄλγεά``)
    the entry without its last acute; None if neither is there."""
    found = table.get(key)
    if found is None:
        decomposed = unicodedata.normalize("NFD", key)
        if sum(decomposed.count(a) for a in ("\u0301", "\u0342")) >= 2:
            cut = decomposed.rfind("\u0301")
            found = table.get(unicodedata.normalize("NFC", decomposed[:cut] + decomposed[cut + 1 :]))
    return found


LEXICON_FILE = "macron_lexicon.json.gz"


def find_macron_lexicon(path: str | Path | None = None) -> Path | None:
    """``path`` when given (it must exist), else ``macron_lexicon.json.gz`` in the installed
    lexicon data package (``stoicheia_lexicon_grc``), else None; no environment variable is
    read (a pipeline's scanner names the package in its config)."""
    return find_lexicon(path, file=LEXICON_FILE)


def strip_diacritics(key: str) -> str:
    """Base letters only (accents, breathings, iota subscript and diaeresis dropped)."""
    return "".join(ch for ch in unicodedata.normalize("NFD", key) if not unicodedata.combining(ch))


def read_eta_forms(path: str | Path) -> set[str]:
    """:func:`form_key` forms with an η from a one-form-per-line ``.xz`` list (Hunspell forms)."""
    out: set[str] = set()
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            key = form_key(line.strip())
            if "η" in strip_diacritics(key):
                out.add(key)
    return out


def _rows(path: Path) -> Iterator[list[str]]:
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        next(fh, None)
        for row in fh:
            yield row.rstrip("\n").split("\t")


def build_macron_lexicon(db_dir: str | Path, *, drop_hypotactic: Iterable[str] = (),
                         eta_forms: Iterable[str] = ()) -> MacronLexicon:
    """Read ``grc_macronizer_db`` (the mirror's folder) into a lexicon.

    ``eta_forms``: extra attested forms for :meth:`MacronLexicon.eta_variant_attested`.

    ``drop_hypotactic``: forms whose Hypotactic markup must not be used (e.g. forms attested
    only in Hypotactic books that hold benchmark text).
    """
    db = Path(db_dir)
    files = {"hypotactic": db / "hypotactic_word2macron.tsv.xz", "lsj": db / "lsj_word2macron.tsv.xz",
             "wiktionary": db / "wiktionary_macron_forms.tsv.xz"}
    for f in files.values():
        if not f.is_file():
            raise CorpusError(f"macron lexicon source {f} is missing")
    drop = {form_key(w) for w in drop_hypotactic}
    lex = MacronLexicon()
    counts = dict.fromkeys(SOURCES, 0)
    dropped = 0
    for name in ("hypotactic", "lsj"):
        for cols in _rows(files[name]):
            got = from_markup(unicodedata.normalize("NFC", cols[1])) if len(cols) >= 2 else None
            if got is None:
                continue
            if name == "hypotactic" and got[0] in drop:
                dropped += 1
                continue
            lex.add(got[0], got[1], SOURCES[name])
            counts[name] += 1
    seen: set[tuple[str, str]] = set()
    for cols in _rows(files["wiktionary"]):
        if len(cols) < 2 or cols[1].startswith("-") or (cols[0], cols[1]) in seen:
            continue
        seen.add((cols[0], cols[1]))
        got = from_unicode(unicodedata.normalize("NFC", cols[1]))
        if got is not None:
            lex.add(got[0], got[1], SOURCES["wiktionary"])
            counts["wiktionary"] += 1
    lex.build_suffixes()
    lex.eta_forms = set(eta_forms)
    lex.meta = {"rows": counts, "hypotactic_dropped": dropped, "forms": len(lex), "n_suffixes": len(lex.suffixes),
                "n_eta_forms": len(lex.eta_forms)}
    return lex
