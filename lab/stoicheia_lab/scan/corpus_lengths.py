"""Corpus-attested vowel lengths: how often each dichronon of a word form scanned long or short.

From Hypotactic's scanned verse (CC BY 4.0), read and labelled as for the silver data
(:func:`~.silver.read_hypotactic_tsv`, :func:`~.silver.read_hypotactic_html`,
:func:`~.silver.label_line` without a lexicon): a dichronon's length is counted only where
the syllable weight decides it, i.e. the dichronon is the nucleus of an open syllable that
is not the verse's last and not before mute + liquid (what ``label_line`` labels), and a
light syllable counts as short only when a consonant follows the vowel (before a vowel a
long vowel may scan light: correption). Lines of the Hypotactic books that hold Norma text
are never read and every line sharing a shingle with a Norma line is dropped
(:func:`~.silver.screen_against`).

The table maps a :func:`~.macron_lexicon.form_key` to a flat ``[j, long, short, ...]``
list: ``j`` is the letter position in the key (a codec letter position of the word, as in
the lexicon's patterns).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import CorpusError
from stoicheia_spacy.scan.macron_lexicon import form_key
from stoicheia_spacy.scan.syllabify import VOWELS, _letters

from .norma import Norma
from .silver import (
    ScannedLine,
    label_line,
    read_hypotactic_html,
    read_hypotactic_tsv,
    screen_against,
)

_WORD = re.compile(r"[^\W\d_]+")
SOURCE = "Hypotactic scanned verse (hypotactic.com, CC BY 4.0)"


def line_lengths(line: ScannedLine) -> list[tuple[str, int, int]] | None:
    """``(form key, letter j, 1 long / 0 short)`` for each dichronon whose length the line's
    scansion decides (see module doc); None when the syllable counts disagree."""
    lab = label_line(line)
    if lab is None:
        return None
    planes = encode_planes(line.text)
    letters = _letters(planes)
    before_vowel = np.zeros(len(letters), dtype=bool)
    before_vowel[:-1] = np.isin(letters[1:], VOWELS)
    offsets = np.asarray(planes.offsets)
    out = []
    for m in _WORD.finditer(line.text):
        lo, hi = int(np.searchsorted(offsets, m.start())), int(np.searchsorted(offsets, m.end()))
        key = form_key(m.group())
        if hi <= lo or len(key) != hi - lo:
            continue
        for j in range(hi - lo):
            length = int(lab.macron[lo + j])
            if length == 1 or length == 0 and not before_vowel[lo + j]:
                out.append((key, j, length))
    return out


def count_lengths(lines: Iterable[ScannedLine]) -> tuple[dict[str, list[int]], dict[str, int]]:
    """The count table (``form key -> [j, long, short, ...]``, positions ascending) and counts
    of lines read, labelled and dichrona counted."""
    tally: dict[str, dict[int, list[int]]] = {}
    stats = {"lines": 0, "labelled": 0, "counted": 0}
    for line in lines:
        stats["lines"] += 1
        got = line_lengths(line)
        if got is None:
            continue
        stats["labelled"] += 1
        for key, j, length in got:
            tally.setdefault(key, {}).setdefault(j, [0, 0])[1 - length] += 1
            stats["counted"] += 1
    table = {key: [x for j in sorted(by_j) for x in (j, *by_j[j])] for key, by_j in tally.items()}
    stats["forms"] = len(table)
    return table, stats


def corpus_length_table(mirror: str | Path, norma: Norma) -> tuple[dict[str, list[int]], dict]:
    """The count table from the mirror's Hypotactic scansions (TSV, and the HTML books the TSV
    lacks), Norma-screened (see module doc), and its provenance for the asset's meta."""
    scansion = Path(mirror) / "scansion"
    tsv, html = scansion / "hypotactic_tsv.tar.xz", scansion / "hypotactic_htmls_greek_syllables.tar.xz"
    for f in (tsv, html):
        if not f.is_file():
            raise CorpusError(f"{f} is missing")
    lines = list(read_hypotactic_tsv(tsv))
    lines += read_hypotactic_html(html, skip_stems={x.source for x in lines})
    kept, dropped = screen_against(lines, norma)
    table, stats = count_lengths(kept)
    return table, {"source": SOURCE, "norma_lines_dropped": dropped, **stats}
