"""Norma Syllabarum Graecarum (Thörn Cleland & Cullhed): reader and protocol scorer.

The benchmark (GPL-3.0) has two parts, read from its tarball or an unpacked folder:
``norma_macronize/*.txt`` (``^`` after a short, ``_`` after a long ambiguous vowel)
and ``norma_syllabify/*.txt`` (``[heavy]`` ``{light}`` syllables); ``stoplist.txt``
lists rare proper names that may be left out. Prose sentences count as lines.

**Published protocol** (the 1,916 positions of the Stoicheia paper's Table 3, where
always-short scores 83.14): :func:`protocol_mask` keeps a mark when the vowel it follows
lies in an *open* gold syllable of ``norma_syllabify`` (its text, trailing non-letters
stripped, ends in a vowel; the two gold files aligned character-wise), in every work but
:data:`PUBLISHED_EXCLUDED_WORKS` (the benchmark's HuggingFace release leaves out In Solem
and Pindar, which overlap a training corpus) and with the stoplist *not* applied (that
release ships none). :func:`score_protocol` scores abstentions both as wrong
(``accuracy``) and as short (``unmarked_to_short``), beside the all-short baseline.

Scores (:func:`score_macrons`, :func:`score_syllables`): accuracy and balanced
accuracy (mean of long and short recall) at the marked positions; syllable-boundary
precision/recall/F1 (internal boundaries as letter indices), weight accuracy on
syllables whose span matches, and exact-line accuracy (every syllable's span and weight).
"""

from __future__ import annotations

import difflib
import io
import re
import tarfile
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import CorpusError, ScoringError

_MARK = re.compile(r"[\^_]")
_SYLL = re.compile(r"\[([^\]]*)\]|\{([^}]*)\}")
_BRACKET = re.compile(r"[\[{]([^\[\]{}]*)[\]}]")
#: Works left out of the published position set (absent from Norma's HuggingFace release).
PUBLISHED_EXCLUDED_WORKS = frozenset({"insolem", "pindar"})
#: The published set: 1,916 positions, 1,593 of them short (all-short = 83.14 %).
PUBLISHED_POSITIONS, PUBLISHED_ALL_SHORT = 1916, 83.14


@dataclass(frozen=True)
class MacronLine:
    """One Norma macron line: plain text and (char offset of the vowel, is_long) marks."""

    source: str
    text: str
    marks: tuple[tuple[int, bool], ...]


@dataclass(frozen=True)
class SyllableLine:
    """One Norma syllabified line: plain text and (start, end, heavy) character spans."""

    source: str
    text: str
    syllables: tuple[tuple[int, int, bool], ...]


@dataclass
class Norma:
    """The whole benchmark."""

    macron: list[MacronLine]
    syllables: list[SyllableLine]
    stoplist: set[str] = field(default_factory=set)
    #: per macron line, bool per mark: counted under the published protocol
    protocol: list[np.ndarray] = field(default_factory=list)
    #: ``dev.txt`` (763 marked lines, no work in common with the test lines)
    dev: list[MacronLine] = field(default_factory=list)

    def protocol_lines(self) -> list[int]:
        """Indices of macron lines with at least one published position."""
        return [i for i, m in enumerate(self.protocol) if m.any()]

    @property
    def n_marks(self) -> int:
        return sum(len(line.marks) for line in self.macron)


def parse_macron_line(raw: str, source: str = "") -> MacronLine:
    """Strip ``^``/``_`` and record which vowel each followed (NFC text)."""
    raw = unicodedata.normalize("NFC", raw.strip())
    text: list[str] = []
    marks: list[tuple[int, bool]] = []
    for ch in raw:
        if ch in "^_":
            pos = len(text) - 1
            while pos >= 0 and unicodedata.combining(text[pos]):
                pos -= 1
            if pos < 0:
                raise CorpusError(f"{source}: mark without a vowel in {raw!r}")
            marks.append((pos, ch == "_"))
        else:
            text.append(ch)
    return MacronLine(source, "".join(text), tuple(marks))


def parse_syllable_line(raw: str, source: str = "") -> SyllableLine:
    """Read ``[heavy]{light}`` markup; text between brackets (spaces) is kept."""
    raw = unicodedata.normalize("NFC", raw.strip())
    text: list[str] = []
    sylls: list[tuple[int, int, bool]] = []
    pos = 0
    for m in _SYLL.finditer(raw):
        text.append(raw[pos : m.start()])
        start = sum(len(t) for t in text)
        body = m.group(1) if m.group(1) is not None else m.group(2)
        text.append(body)
        sylls.append((start, start + len(body), m.group(1) is not None))
        pos = m.end()
    text.append(raw[pos:])
    return SyllableLine(source, "".join(text), tuple(sylls))


def _members(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if path.is_dir():
        for f in sorted(path.rglob("*.txt")):
            out[str(f.relative_to(path))] = f.read_text(encoding="utf-8")
        return out
    if not path.is_file():
        raise CorpusError(f"Norma not found at {path}")
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".txt"):
                fh = tar.extractfile(member)
                assert fh is not None
                out[member.name] = io.TextIOWrapper(fh, encoding="utf-8").read()
    return out


def read_norma(path: str | Path) -> Norma:
    """Read the benchmark from ``norma_syllabarum_graecarum.tar.xz`` or its folder."""
    files = _members(Path(path))
    macron, sylls, stop, dev = [], [], set(), []
    raw_syll: dict[str, list[str]] = {}
    raw_mac: dict[str, list[str]] = {}
    for name, content in sorted(files.items()):
        lines = [x for x in content.splitlines() if x.strip()]
        stem = Path(name).stem
        if "/norma_macronize/" in f"/{name}":
            macron += [parse_macron_line(x, stem) for x in lines]
            raw_mac[stem] = content.splitlines()
        elif "/norma_syllabify/" in f"/{name}":
            sylls += [parse_syllable_line(x, stem) for x in lines]
            raw_syll[stem] = content.splitlines()
        elif name.endswith("stoplist.txt"):
            stop = {unicodedata.normalize("NFC", x.strip()) for x in lines}
        elif Path(name).name == "dev.txt":
            dev = [parse_macron_line(x, "dev") for x in lines]
    if not macron or not sylls:
        raise CorpusError(f"{path} holds no norma_macronize / norma_syllabify files")
    protocol: list[np.ndarray] = []
    for stem in sorted(raw_mac):
        syl_lines = raw_syll.get(stem, [])
        for i, raw in enumerate(raw_mac[stem]):
            if not raw.strip():
                continue
            if stem in PUBLISHED_EXCLUDED_WORKS:
                protocol.append(np.zeros(len(_MARK.findall(raw)), dtype=bool))
            else:
                protocol.append(protocol_mask(raw, syl_lines[i] if i < len(syl_lines) else ""))
    return Norma(macron, sylls, stop, protocol, dev)


def _is_open(content: str) -> bool:
    core = content.rstrip()
    while core and not core[-1].isalpha():
        core = core[:-1]
    return bool(core) and unicodedata.normalize("NFD", core[-1])[0].lower() in "αεηιουω"


def _tiled_syllables(raw: str) -> list[str]:
    """Bracket contents with stray text folded into the neighbouring syllable (tiles the line)."""
    parts = [(m.start(), m.end(), m.group(1)) for m in _BRACKET.finditer(raw)]
    if not parts:
        return []
    out = [body for _, _, body in parts]
    out[0] = raw[: parts[0][0]] + out[0]
    for k in range(len(parts) - 1):
        out[k] += raw[parts[k][1] : parts[k + 1][0]]  # text between brackets joins the earlier one
    out[-1] += raw[parts[-1][1] :]
    return out


def protocol_mask(macron_raw: str, syllable_raw: str) -> np.ndarray:
    """Bool per mark of a ``norma_macronize`` line: the vowel before it is in an open gold syllable.

    Openness is read from the parallel ``norma_syllabify`` line (bracket colour ignored: a
    syllable is open when its text ends in a vowel); the two plain texts are aligned with
    :class:`difflib.SequenceMatcher` and marks in unaligned stretches do not count.
    """
    macron_raw = unicodedata.normalize("NFC", macron_raw)
    syllable_raw = unicodedata.normalize("NFC", syllable_raw)
    chars: list[str] = []
    opens: list[bool] = []
    for body in _tiled_syllables(syllable_raw):
        chars.append(body)
        opens += [_is_open(body)] * len(body)
    syl_text = "".join(chars)
    plain: list[str] = []
    marked: list[int] = []
    for ch in macron_raw:
        if ch in "^_":
            if plain:
                marked.append(len(plain) - 1)
        else:
            plain.append(ch)
    open_at: list[bool | None] = [None] * len(plain)
    matcher = difflib.SequenceMatcher(None, syl_text, "".join(plain), autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            open_at[j1 : j1 + i2 - i1] = opens[i1:i2]
    mask = [bool(open_at[j]) for j in marked]
    n_marks = len(_MARK.findall(macron_raw))
    return np.array(mask + [False] * (n_marks - len(mask)), dtype=bool)


def score_protocol(gold: Sequence[bool] | np.ndarray, predicted: Sequence[int] | np.ndarray) -> dict[str, float]:
    """Published-protocol scores (%, see module doc); ``predicted`` 1 long, 0 short, -1 abstained."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(predicted, dtype=np.int64)
    if g.shape != p.shape or g.size == 0:
        raise ScoringError(f"need equal non-empty gold/pred, got {g.shape} vs {p.shape}")
    as_short = np.where(p < 0, 0, p)
    return {"n": int(g.size), "n_long": int(g.sum()), "all_short": 100 * float((~g).mean()),
            "accuracy": 100 * float((p == g).mean()), "unmarked_to_short": 100 * float((as_short == g).mean()),
            "unmarked": int((p < 0).sum()), "balanced_accuracy": 100 * score_macrons(g, as_short)["balanced_accuracy"]}


def mark_letters(line: MacronLine) -> np.ndarray:
    """Codec letter index of each marked vowel (-1 where the vowel is not a codec letter)."""
    offsets = np.asarray(encode_planes(line.text).offsets)
    pos = np.array([p for p, _ in line.marks], dtype=np.int64)
    idx = np.searchsorted(offsets, pos)
    ok = (idx < offsets.size) & (offsets[np.minimum(idx, max(offsets.size - 1, 0))] == pos)
    return np.where(ok, idx, -1)


def in_stoplist(line: MacronLine, stoplist: set[str]) -> np.ndarray:
    """Bool per mark: the marked vowel is inside a stoplist word."""
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\w+", line.text)]
    out = []
    for p, _ in line.marks:
        out.append(any(a <= p < b and w in stoplist for a, b, w in words))
    return np.array(out, dtype=bool)


def syllable_ends(line: SyllableLine) -> tuple[np.ndarray, np.ndarray]:
    """(last codec letter index, heavy) per gold syllable; syllables without letters are dropped."""
    offsets = np.asarray(encode_planes(line.text).offsets)
    ends, heavy = [], []
    for a, b, h in line.syllables:
        lo, hi = np.searchsorted(offsets, a), np.searchsorted(offsets, b)
        if hi > lo:
            ends.append(hi - 1)
            heavy.append(h)
    return np.array(ends, dtype=np.int64), np.array(heavy, dtype=bool)


def score_macrons(gold: Sequence[bool] | np.ndarray, predicted: Sequence[int] | np.ndarray) -> dict[str, float]:
    """Accuracy and balanced accuracy; ``predicted`` 1 long, 0 short, -1 abstained (wrong)."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(predicted, dtype=np.int64)
    if g.shape != p.shape or g.size == 0:
        raise ScoringError(f"need equal non-empty gold/pred, got {g.shape} vs {p.shape}")
    correct = (p == g.astype(np.int64))
    rec_long = float(correct[g].mean()) if g.any() else float("nan")
    rec_short = float(correct[~g].mean()) if (~g).any() else float("nan")
    return {"n": float(g.size), "accuracy": float(correct.mean()),
            "balanced_accuracy": float(np.nanmean([rec_long, rec_short])),
            "recall_long": rec_long, "recall_short": rec_short}


def score_syllables(
    gold: Sequence[tuple[np.ndarray, np.ndarray]], predicted: Sequence[tuple[np.ndarray, np.ndarray]]
) -> dict[str, float]:
    """Boundary P/R/F1, matched-syllable weight accuracy and exact-line accuracy.

    Each item is (syllable end letter indices, heavy flags) for one line.
    """
    if len(gold) != len(predicted) or not gold:
        raise ScoringError("gold and predicted must be equal-length non-empty lists")
    tp = n_gold = n_pred = 0
    w_ok = w_n = exact = exact_w = 0
    for (ge, gh), (pe, ph) in zip(gold, predicted, strict=True):
        gb, pb = set(ge[:-1].tolist()), set(np.asarray(pe)[:-1].tolist())
        tp += len(gb & pb)
        n_gold += len(gb)
        n_pred += len(pb)
        gmap = dict(zip(ge.tolist(), gh.tolist(), strict=True))
        starts_g = dict(zip(ge.tolist(), [-1, *ge[:-1].tolist()], strict=True))
        pe_l, ph_l = np.asarray(pe).tolist(), np.asarray(ph).tolist()
        starts_p = dict(zip(pe_l, [-1, *pe_l[:-1]], strict=True))
        for e, h in zip(pe_l, ph_l, strict=True):
            if e in gmap and starts_g[e] == starts_p[e]:
                w_n += 1
                w_ok += int(gmap[e] == h)
        same_w = len(gh) == len(ph_l) and bool(np.all(np.asarray(gh) == np.asarray(ph_l, dtype=bool)))
        exact_w += int(same_w)
        exact += int(same_w and np.array_equal(ge, np.asarray(pe)))
    prec = tp / n_pred if n_pred else 0.0
    rec = tp / n_gold if n_gold else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"lines": float(len(gold)), "boundary_precision": prec, "boundary_recall": rec,
            "boundary_f1": f1, "weight_accuracy": w_ok / w_n if w_n else 0.0,
            "exact_line": exact / len(gold), "exact_weights": exact_w / len(gold)}


def normalise_line(text: str) -> str:
    """Letters only, lowercase, no diacritics or marks, final sigma folded: for leakage screens."""
    decomposed = unicodedata.normalize("NFD", text.lower().replace("ς", "σ"))
    return "".join(ch for ch in decomposed if ch.isalpha() and not unicodedata.combining(ch))


def open_dichronic_syllables(line: SyllableLine) -> np.ndarray:
    """Bool per gold syllable (as :func:`syllable_ends` keeps them): it ends in a vowel and
    holds a real dichronon (bare α ι υ outside a diphthong, no circumflex or iota subscript).

    This is the position set of the authors' benchmarking script (``norma-benchmarking``:
    ``open_dichronic_syll`` on syllables of ``norma_syllabify``), applied to gold syllables.
    """
    from stoicheia_spacy.scan.syllabify import VOWELS, _letters, dichrona_mask

    planes = encode_planes(line.text)
    offsets = np.asarray(planes.offsets)
    letters, dich = _letters(planes), dichrona_mask(planes)
    out = []
    for a, b, _ in line.syllables:
        lo, hi = int(np.searchsorted(offsets, a)), int(np.searchsorted(offsets, b))
        if hi > lo:
            out.append(bool(np.isin(letters[hi - 1], VOWELS) and dich[lo:hi].any()))
    return np.array(out, dtype=bool)


def position_counts(norma: Norma) -> dict[str, int]:
    """Sizes of the candidate position sets (see ``projects/meter/HEADS.md``).

    ``marks``: every ``^``/``_`` in ``norma_macronize``; ``marks_open``: those whose
    syllable our rules leave undetermined (open, not before mute + liquid);
    ``marks_open_unaccented``: of these, vowels without an accent; ``marks_stoplist``:
    marks inside stoplist words; ``open_dichronic_syllables`` (``_heavy``/``_light``):
    gold syllables of ``norma_syllabify`` selected as by the authors' script.
    """
    from stoicheia_spacy.alphabet import dia_features
    from stoicheia_spacy.scan.syllabify import UNKNOWN, syllabify

    counts = dict.fromkeys(("marks", "marks_open", "marks_open_unaccented", "marks_stoplist",
                            "open_dichronic_syllables", "open_dichronic_syllables_heavy",
                            "open_dichronic_syllables_light"), 0)
    for line in norma.macron:
        planes = encode_planes(line.text)
        syl = syllabify(planes, text=line.text)
        open_nuc = set(syl.nucleus[(syl.weights == UNKNOWN) & ~syl.muta_cum_liquida].tolist())
        idx = mark_letters(line)
        counts["marks"] += len(line.marks)
        counts["marks_stoplist"] += int(in_stoplist(line, norma.stoplist).sum())
        for i in idx.tolist():
            if i in open_nuc:
                counts["marks_open"] += 1
                counts["marks_open_unaccented"] += int(dia_features(int(planes.diacritics[i]))[0] == 0)
    for sline in norma.syllables:
        mask = open_dichronic_syllables(sline)
        _, heavy = syllable_ends(sline)
        counts["open_dichronic_syllables"] += int(mask.sum())
        counts["open_dichronic_syllables_heavy"] += int((mask & heavy).sum())
        counts["open_dichronic_syllables_light"] += int((mask & ~heavy).sum())
    return counts
